package cdc

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// watchdog closes a replication connection that stays silent for longer than its limit:
// the stream has been waiting for an event (or for the connection to start) that long,
// although the server sends a heartbeat when idle. It looks a few times per limit at a
// counter the stream bumps when it starts and ends a wait, so that an event costs two
// atomic adds, not a clock read or a socket deadline per packet.
type watchdog struct {
	limit    time.Duration
	close    func()
	waits    atomic.Uint64 // odd while the stream waits
	fired    atomic.Bool
	done     chan struct{}
	stopOnce sync.Once
}

// newWatchdog starts a watchdog that calls close once the stream has spent longer than limit
// in one wait (between a call of waiting and the next of got).
func newWatchdog(limit time.Duration, close func()) *watchdog {
	w := &watchdog{limit: limit, close: close, done: make(chan struct{})}
	go w.run(max(limit/4, time.Millisecond))
	return w
}

// run checks every interval whether the stream is still in the wait it was in at the last
// check, and closes the connection once one wait has lasted longer than the limit.
func (w *watchdog) run(every time.Duration) {
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

// waiting marks the start of a wait for an event.
func (w *watchdog) waiting() { w.waits.Add(1) }

// got marks the end of a wait.
func (w *watchdog) got() { w.waits.Add(1) }

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
