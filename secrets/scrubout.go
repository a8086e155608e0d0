package secrets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// maxPending bounds what a line writer holds back while it waits for the
// end of a line.
const maxPending = 64 << 10

// LineWriter is an io.Writer that scrubs what it passes on, a line at a
// time, so that a value written in pieces is still masked. Call Flush at
// the end for the last, unterminated line. It is safe for concurrent use.
type LineWriter struct {
	s *Scrubber
	w io.Writer

	mu      sync.Mutex
	pending []byte
}

// Writer returns a LineWriter that writes to w.
func (s *Scrubber) Writer(w io.Writer) *LineWriter { return &LineWriter{s: s, w: w} }

// Write scrubs and writes the complete lines of p, holding back the rest.
// It reports len(p) when the lines were written.
func (lw *LineWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.pending = append(lw.pending, p...)
	end := bytes.LastIndexByte(lw.pending, '\n') + 1
	if end == 0 && len(lw.pending) < maxPending {
		return len(p), nil
	}
	if end == 0 {
		end = len(lw.pending)
	}
	if err := lw.emit(end); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held back.
func (lw *LineWriter) Flush() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.emit(len(lw.pending))
}

func (lw *LineWriter) emit(n int) error {
	if n == 0 {
		return nil
	}
	out := lw.s.Scrub(string(lw.pending[:n]))
	lw.pending = append(lw.pending[:0], lw.pending[n:]...)
	_, err := io.WriteString(lw.w, out)
	return err
}

// FrameWriter is an io.Writer that scrubs each Write on its own, for
// output that must not wait for a newline, such as a terminal's progress
// bars, which are redrawn whole.
type FrameWriter struct {
	s *Scrubber
	w io.Writer
}

// FrameWriter returns a FrameWriter that writes to w.
func (s *Scrubber) FrameWriter(w io.Writer) *FrameWriter { return &FrameWriter{s: s, w: w} }

// Write scrubs p and writes it; it reports len(p) on success.
func (fw *FrameWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(fw.w, fw.s.Scrub(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Handler returns a slog.Handler that scrubs each record's message and
// attributes (keys, strings, errors' text and any other value as it would
// be printed) before passing it to h.
func (s *Scrubber) Handler(h slog.Handler) slog.Handler { return &scrubHandler{s: s, h: h} }

type scrubHandler struct {
	s *Scrubber
	h slog.Handler
}

func (sh *scrubHandler) Enabled(ctx context.Context, l slog.Level) bool { return sh.h.Enabled(ctx, l) }

func (sh *scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, sh.s.Scrub(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(sh.s.attr(a))
		return true
	})
	return sh.h.Handle(ctx, out)
}

func (sh *scrubHandler) WithAttrs(as []slog.Attr) slog.Handler {
	scrubbed := make([]slog.Attr, len(as))
	for i, a := range as {
		scrubbed[i] = sh.s.attr(a)
	}
	return &scrubHandler{s: sh.s, h: sh.h.WithAttrs(scrubbed)}
}

func (sh *scrubHandler) WithGroup(name string) slog.Handler {
	return &scrubHandler{s: sh.s, h: sh.h.WithGroup(sh.s.Scrub(name))}
}

// attr returns a with its key and value scrubbed. A value of another kind
// than string or group that prints a secret (an error, a struct) becomes
// the scrubbed string of how it prints.
func (s *Scrubber) attr(a slog.Attr) slog.Attr {
	a.Key = s.Scrub(a.Key)
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(s.Scrub(v.String()))
	case slog.KindGroup:
		group := v.Group()
		scrubbed := make([]slog.Attr, len(group))
		for i, g := range group {
			scrubbed[i] = s.attr(g)
		}
		a.Value = slog.GroupValue(scrubbed...)
	case slog.KindAny:
		a.Value = s.anyValue(v)
	default:
		a.Value = v
	}
	return a
}

func (s *Scrubber) anyValue(v slog.Value) slog.Value {
	x := v.Any()
	var text string
	if err, ok := x.(error); ok {
		text = err.Error()
	} else {
		text = fmt.Sprintf("%+v", x)
	}
	if s.Contains(text) {
		return slog.StringValue(s.Scrub(text))
	}
	if b, err := json.Marshal(x); err == nil && s.Contains(string(b)) {
		return slog.StringValue(s.Scrub(text))
	}
	return v
}
