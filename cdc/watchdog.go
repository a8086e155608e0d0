package cdc

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// watchdog closes a replication connection that stays silent for longer than its limit:
// the stream has been waiting for an event (or for the connection to start) that long,
// although the server sends a heartbeat when idle. It checks a few times per limit, so that
// a wait costs the stream two atomic stores and a clock read per event, not a socket
// deadline per packet.
type watchdog struct {
	limit    time.Duration
	close    func()
	since    atomic.Int64 // UnixNano when the wait began; 0 while not waiting
	fired    atomic.Bool
	done     chan struct{}
	stopOnce sync.Once
}

// newWatchdog starts a watchdog that calls close once the stream has waited longer than
// limit; the wait for the connection to start counts as waiting.
func newWatchdog(limit time.Duration, close func()) *watchdog {
	w := &watchdog{limit: limit, close: close, done: make(chan struct{})}
	w.waiting()
	go w.run(max(limit/4, time.Millisecond))
	return w
}

func (w *watchdog) run(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case now := <-t.C:
			if since := w.since.Load(); since != 0 && now.Sub(time.Unix(0, since)) > w.limit {
				w.fired.Store(true)
				w.close()
				return
			}
		}
	}
}

// waiting marks the start of a wait for an event.
func (w *watchdog) waiting() { w.since.Store(time.Now().UnixNano()) }

// got marks the end of a wait.
func (w *watchdog) got() { w.since.Store(0) }

// stop ends the watchdog.
func (w *watchdog) stop() { w.stopOnce.Do(func() { close(w.done) }) }

// explain returns err, or, when the watchdog closed the connection, a retryable error that
// says so.
func (w *watchdog) explain(err error) error {
	if !w.fired.Load() {
		return err
	}
	return &RetryableError{Op: "read binlog", Err: fmt.Errorf("no event from the server for %s (heartbeats included): %w", w.limit, err)}
}
