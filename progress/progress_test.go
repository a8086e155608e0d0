package progress

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLogDisplay(t *testing.T) {
	var buf bytes.Buffer
	d := NewLog(slog.New(slog.NewTextHandler(&buf, nil)), 0)
	d.Table(Table{Name: "app.users", Rows: 500, Estimate: 1000})
	d.Status(Status{Records: 42, Lag: 1500 * time.Millisecond, Position: "file=b.000001:4"})
	out := buf.String()
	for _, want := range []string{"snapshot progress", "table=app.users", "rows=500", "estimate=1000", "records=42", "lag=1.5s", `position="file=b.000001:4"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log output lacks %q:\n%s", want, out)
		}
	}
}

func TestTerminalDisplay(t *testing.T) {
	var buf syncBuffer
	d := NewTerminal(&buf)
	d.force = true
	d.Table(Table{Name: "app.users", Rows: 10, Estimate: 100})
	d.Table(Table{Name: "app.users", Rows: 150, Estimate: 100}) // past the estimate
	if _, err := d.Write([]byte("a log line\n")); err != nil {
		t.Fatal(err)
	}
	d.SnapshotDone()
	d.Status(Status{Records: 7})
	time.Sleep(600 * time.Millisecond)
	d.Close()
	out := buf.String()
	for _, want := range []string{"app.users", "150 / 15", "done", "a log line", "streaming: 7 records written"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, out)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the display's drawing goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
