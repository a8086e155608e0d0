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

// contact follows the worker's contact with the group coordinator: the time of the last
// answer to a Heartbeat, JoinGroup or SyncGroup (a kgo hook), or to the worker's own probe
// (a DescribeGroups every heartbeat interval, which kgo sends to the coordinator on a
// connection of its own, so that it is answered also while the coordinator holds a
// JoinGroup during a rebalance).
type contact struct {
	mu   sync.Mutex
	last time.Time
}

var _ kgo.HookBrokerE2E = (*contact)(nil)

func newContact() *contact { return &contact{last: time.Now()} }

// OnBrokerE2E implements kgo.HookBrokerE2E.
func (c *contact) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	if (key == keyJoinGroup || key == keySyncGroup || key == keyHeartbeat) && e2e.Err() == nil {
		c.seen()
	}
}

// seen records an answer of the coordinator.
func (c *contact) seen() {
	c.mu.Lock()
	c.last = time.Now()
	c.mu.Unlock()
}

// silent returns how long the coordinator has not been heard from.
func (c *contact) silent(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return now.Sub(c.last)
}
