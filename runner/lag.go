package runner

import (
	"sync"
	"time"

	"github.com/ingestkit/ingest/upsert"
)

// lagClock follows how far what is safely in Kafka is behind the source: the stream
// transactions handed to the sink and not yet acknowledged, and the commit time of the
// oldest of them. The lag is now minus that commit time while any is outstanding (it grows
// every second while the broker is down, however much the sink has buffered), and the
// lag of the last acknowledgement once none is (an idle source is not behind). Safe for
// concurrent use.
type lagClock struct {
	mu          sync.Mutex
	outstanding int           // stream transactions handed to the sink, not acknowledged
	since       time.Time     // commit time of the oldest of them; zero when none
	last        time.Duration // the lag when the last acknowledgement left none outstanding
	ackedAt     time.Time     // the last acknowledgement, or when waiting for one began
}

// seen notes a stream transaction (its End batch, committed at commit) handed to the sink.
func (c *lagClock) seen(commit, now time.Time) {
	if commit.IsZero() {
		commit = now
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.since.IsZero() {
		c.since, c.ackedAt = commit, now
	}
	c.outstanding++
}

// acked notes an acknowledged (or committed) checkpoint. When some transactions are still
// outstanding, the oldest of them is taken to be committed at the checkpoint's commit time,
// the last one before it: close, and never less than the real lag.
func (c *lagClock) acked(cp upsert.Checkpoint, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ackedAt = now
	c.outstanding -= cp.Ends
	switch {
	case c.outstanding <= 0:
		c.outstanding, c.since = 0, time.Time{}
		if !cp.CommitTime.IsZero() {
			c.last = max(now.Sub(cp.CommitTime), 0)
		}
	case !cp.CommitTime.IsZero():
		c.since = cp.CommitTime
	}
}

// restarted forgets the transactions of a failed run: the next one hands them again from
// the stored position. The oldest commit time is kept: they are still not in Kafka.
func (c *lagClock) restarted() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outstanding = 0
}

// lag returns the lag at now.
func (c *lagClock) lag(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.since.IsZero() {
		return c.last
	}
	return max(now.Sub(c.since), 0)
}

// waiting returns how long transactions have waited for an acknowledgement at now, 0 when
// none is outstanding.
func (c *lagClock) waiting(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.since.IsZero() {
		return 0
	}
	return now.Sub(c.ackedAt)
}
