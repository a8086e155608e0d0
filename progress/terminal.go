package progress

import (
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// Terminal is a Display for a terminal, drawn with mpb (multi-bar progress): one bar per
// snapshot table, then one status line. It is also an io.Writer for the run's logs, which
// it prints above the bars so that they do not tear the display.
type Terminal struct {
	out   io.Writer
	force bool // draw even when out is not a terminal (tests)

	mu     sync.Mutex
	p      *mpb.Progress
	bars   map[string]*mpb.Bar
	status *mpb.Bar
	line   atomic.Value // string
}

// NewTerminal returns a Terminal drawing on w.
func NewTerminal(w io.Writer) *Terminal {
	return &Terminal{out: w, bars: map[string]*mpb.Bar{}}
}

func (t *Terminal) progress() *mpb.Progress {
	if t.p == nil {
		opts := []mpb.ContainerOption{mpb.WithOutput(t.out), mpb.WithWidth(32), mpb.WithRefreshRate(250 * time.Millisecond)}
		if t.force {
			opts = append(opts, mpb.ForceAutoRefresh())
		}
		t.p = mpb.New(opts...)
	}
	return t.p
}

// Write prints log lines above the bars (or straight to the terminal when none is shown).
func (t *Terminal) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.p == nil {
		return t.out.Write(b)
	}
	return t.p.Write(b)
}

// Table implements Display.
func (t *Terminal) Table(tp Table) {
	t.mu.Lock()
	defer t.mu.Unlock()
	bar := t.bars[tp.Name]
	if bar == nil {
		bar = t.progress().AddBar(max(tp.Estimate, 1),
			mpb.PrependDecorators(decor.Name(tp.Name, decor.WCSyncSpaceR), decor.CountersNoUnit("%d / %d rows", decor.WCSyncSpace)),
			mpb.AppendDecorators(decor.AverageSpeed(nil, "%.0f rows/s", decor.WCSyncSpace),
				decor.OnComplete(decor.AverageETA(decor.ET_STYLE_GO, decor.WCSyncSpace), "done")))
		t.bars[tp.Name] = bar
	}
	if tp.Rows >= tp.Estimate {
		bar.SetTotal(tp.Rows+1, false) // the estimate was low; the table is not done yet
	}
	bar.SetCurrent(tp.Rows)
}

// SnapshotDone implements Display.
func (t *Terminal) SnapshotDone() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, bar := range t.bars {
		bar.SetTotal(bar.Current(), true)
	}
}

// Status implements Display.
func (t *Terminal) Status(s Status) {
	t.line.Store(statusLine(s))
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status == nil {
		t.status = t.progress().New(0, mpb.NopStyle(), mpb.PrependDecorators(decor.Any(func(decor.Statistics) string {
			v, _ := t.line.Load().(string)
			return v
		})))
	}
}

// Close implements Display: the bars are completed and the drawing goroutine stops.
func (t *Terminal) Close() {
	t.mu.Lock()
	p := t.p
	for _, bar := range t.bars {
		bar.SetTotal(bar.Current(), true)
	}
	if t.status != nil {
		t.status.Abort(false)
	}
	t.p = nil
	t.mu.Unlock()
	if p != nil {
		p.Wait()
	}
}
