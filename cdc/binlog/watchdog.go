package binlog

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Watchdog closes a replication connection that stays silent for longer than its limit:
// the stream has been waiting for an event (or for the connection to start) that long,
// although the server sends a heartbeat when idle. It looks a few times per limit at a
// counter the stream bumps when it starts and ends a wait, so that an event costs two
// atomic adds, not a clock read or a socket deadline per packet.
type Watchdog struct {
	limit    time.Duration
	close    func()
	waits    atomic.Uint64 // odd while the stream waits
	fired    atomic.Bool
	done     chan struct{}
	stopOnce sync.Once
}

// NewWatchdog starts a watchdog that calls close once the stream has spent longer than limit
// in one wait (between a call of Waiting and the next of Got).
func NewWatchdog(limit time.Duration, close func()) *Watchdog {
	w := &Watchdog{limit: limit, close: close, done: make(chan struct{})}
	go w.run(max(limit/4, time.Millisecond))
	return w
}

// run checks every interval whether the stream is still in the wait it was in at the last
// check, and closes the connection once one wait has lasted longer than the limit.
func (w *Watchdog) run(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	var last uint64
	var silent time.Duration
	for {
		select {
		case <-w.done:
			return
		case <-t.C:
			n := w.waits.Load()
			if n%2 == 0 || n != last {
				last, silent = n, 0
				continue
			}
			if silent += every; silent > w.limit {
				w.fired.Store(true)
				w.close()
				return
			}
		}
	}
}

// Waiting marks the start of a wait for an event.
func (w *Watchdog) Waiting() { w.waits.Add(1) }

// Got marks the end of a wait.
func (w *Watchdog) Got() { w.waits.Add(1) }

// Stop ends the watchdog.
func (w *Watchdog) Stop() { w.stopOnce.Do(func() { close(w.done) }) }

// Explain returns err, or, when the watchdog closed the connection, a retryable error that
// says so.
func (w *Watchdog) Explain(err error) error {
	if !w.fired.Load() {
		return err
	}
	return &RetryableError{Op: "read binlog", Err: fmt.Errorf("no event from the server for %s (heartbeats included): %w", w.limit, err)}
}
