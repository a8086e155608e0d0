package fleet

import (
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The group requests whose answers show that the coordinator still knows the worker.
const (
	keyJoinGroup = 11
	keyHeartbeat = 12
	keySyncGroup = 14
)

// contact follows the worker's contact with the group coordinator, as kgo hooks: the time of
// the last answer to a Heartbeat, JoinGroup or SyncGroup, and whether a JoinGroup or
// SyncGroup is waiting for its answer (the coordinator holds those during a rebalance, and
// keeps the member meanwhile).
type contact struct {
	mu       sync.Mutex
	last     time.Time
	inflight int
}

var (
	_ kgo.HookBrokerWrite = (*contact)(nil)
	_ kgo.HookBrokerE2E   = (*contact)(nil)
)

func newContact() *contact { return &contact{last: time.Now()} }

// OnBrokerWrite implements kgo.HookBrokerWrite.
func (c *contact) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err == nil && (key == keyJoinGroup || key == keySyncGroup) {
		c.mu.Lock()
		c.inflight++
		c.mu.Unlock()
	}
}

// OnBrokerE2E implements kgo.HookBrokerE2E.
func (c *contact) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	if key != keyJoinGroup && key != keySyncGroup && key != keyHeartbeat {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if key != keyHeartbeat && e2e.WriteErr == nil && c.inflight > 0 {
		c.inflight--
	}
	if e2e.Err() == nil {
		c.last = time.Now()
	}
}

// silent returns how long the coordinator has not been heard from while nothing was waiting
// for it (0 while a join or sync is in flight).
func (c *contact) silent(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight > 0 {
		return 0
	}
	return now.Sub(c.last)
}
