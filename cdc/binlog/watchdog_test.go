package binlog

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingestkit/ingest/internal/fault"
)

func TestWatchdog(t *testing.T) {
	t.Run("silent", func(t *testing.T) {
		var closed atomic.Int32
		w := NewWatchdog(20*time.Millisecond, func() { closed.Add(1) })
		defer w.Stop()
		w.Waiting()
		w.Got()
		w.Waiting()
		deadline := time.Now().Add(5 * time.Second)
		for closed.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if closed.Load() != 1 {
			t.Fatalf("a wait of %s past the limit: closed %d times, want 1", time.Since(deadline.Add(-5*time.Second)), closed.Load())
		}
		err := w.Explain(errors.New("connection closed"))
		if !fault.IsRetryable(err) {
			t.Fatalf("explain: %v is not retryable", err)
		}
	})
	t.Run("events", func(t *testing.T) {
		var closed atomic.Int32
		w := NewWatchdog(30*time.Millisecond, func() { closed.Add(1) })
		w.Waiting()
		for range 20 { // events every 5 ms, then a long time not waiting (the stream is busy)
			w.Got()
			time.Sleep(5 * time.Millisecond)
			w.Waiting()
		}
		w.Got()
		time.Sleep(100 * time.Millisecond)
		w.Stop()
		if closed.Load() != 0 {
			t.Fatal("the watchdog closed a connection that kept delivering")
		}
		cause := errors.New("server shutdown")
		if err := w.Explain(cause); err != cause {
			t.Fatalf("explain changed an error it did not cause: %v", err)
		}
	})
}
