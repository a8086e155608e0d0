package upsert

import (
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A key's partition is murmur2(key) modulo the topic's partition count (partition.go), so
// the count is part of the data's layout: once records are written, a topic that gains
// partitions sends most keys to another partition, and a compacted topic then keeps the old
// value of each key that moved beside its new one, for ever. The sink therefore treats the
// count of every topic it writes to as fixed: it is checked against the count recorded for
// the pipeline (a [PartitionLedger]) and against sink.topic.partitions before the first
// record to the topic, recorded when it is new, and held for the whole run.

// PartitionLedger keeps the partition count of every topic the pipeline has written to,
// across runs. The state package's Store is one.
type PartitionLedger interface {
	// Partitions returns the recorded counts (an empty map when there are none).
	Partitions() (map[string]int32, error)
	// SavePartitions replaces the recorded counts.
	SavePartitions(map[string]int32) error
	// Dir names where the counts are kept (the state directory), for the fix in errors.
	Dir() string
}

// PartitionCountError is a topic whose partition count is not the one the pipeline's
// records are, or are declared to be, keyed for. It is terminal: the data must be re-keyed.
type PartitionCountError struct {
	Topic string
	// Current is the topic's partition count now.
	Current int32
	// Recorded is the count recorded when the pipeline first wrote to the topic (0: none),
	// kept in State.
	Recorded int32
	State    string
	// Configured is sink.topic.partitions (0: not set).
	Configured int32
	// Running says that the change was seen while the sink was writing to the topic;
	// Recorded is then the count the run started with.
	Running bool
}

// Error says what changed, why it matters and what to do.
func (e *PartitionCountError) Error() string {
	const why = "a key's partition is murmur2(key) modulo the partition count, so most keys would now go to " +
		"another partition and the compacted topic would keep a stale value for each key that moved"
	switch {
	case e.Running:
		return fmt.Sprintf("topic %s went from %d to %d partitions while the pipeline was writing to it; the sink stopped "+
			"(every record so far was written for %d partitions): %s; %s",
			e.Topic, e.Recorded, e.Current, e.Recorded, why, e.rekey())
	case e.Recorded != 0 && e.Recorded != e.Current:
		return fmt.Sprintf("topic %s has %d partitions, but the pipeline wrote its records for %d (recorded in %s): %s; %s",
			e.Topic, e.Current, e.Recorded, e.State, why, e.rekey())
	default:
		return fmt.Sprintf("topic %s has %d partitions, but sink.topic.partitions is %d: the pipeline would not write "+
			"the layout it declares; set sink.topic.partitions to %d (or remove it) to use the topic as it is, or delete "+
			"the topic so that it is created with %d partitions",
			e.Topic, e.Current, e.Configured, e.Current, e.Configured)
	}
}

// rekey is the fix of a topic whose count changed under written records.
func (e *PartitionCountError) rekey() string {
	state := "the state directory"
	if e.State != "" {
		state = "the state directory " + e.State
	}
	return fmt.Sprintf("the data must be re-keyed: either delete the topic, recreate it with %d partitions "+
		"(compacted) and remove %s to re-snapshot into it, or remove %s to accept the new layout and re-snapshot "+
		"into a fresh, empty topic", e.Recorded, state, state)
}

// CheckPartitions returns a *PartitionCountError when current, the partition count of
// topic, differs from the recorded count (0: none recorded, kept in state) or from the
// configured sink.topic.partitions (0 or less: not set); nil otherwise. The recorded
// count is checked first: it is what the data already written depends on.
func CheckPartitions(topic string, current, recorded int32, state string, configured int32) error {
	if recorded != 0 && current != recorded {
		return &PartitionCountError{Topic: topic, Current: current, Recorded: recorded, State: state, Configured: max(configured, 0)}
	}
	if configured > 0 && current != configured {
		return &PartitionCountError{Topic: topic, Current: current, Recorded: recorded, State: state, Configured: configured}
	}
	return nil
}

// fixedPartitioner is the sink's partitioner: [PartitionFor] over the partition count each
// topic had when the sink checked it (fix), whatever count later metadata shows. A topic
// that grows during the run therefore keeps every key in its partition, and the sink is
// told (grew) so that it stops; a topic the sink has not fixed (none, in practice) is
// partitioned over the count the client sees.
type fixedPartitioner struct {
	mu     sync.Mutex
	counts map[string]int
	grew   func(topic string, fixed, seen int)
}

func newFixedPartitioner(grew func(topic string, fixed, seen int)) *fixedPartitioner {
	return &fixedPartitioner{counts: map[string]int{}, grew: grew}
}

// fix sets the partition count of topic for the rest of the run.
func (p *fixedPartitioner) fix(topic string, n int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[topic] = int(n)
}

// ForTopic returns the partitioner of one topic.
func (p *fixedPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	return &fixedTopicPartitioner{p: p, topic: topic}
}

// fixedTopicPartitioner partitions one topic. The client calls it under the topic's own
// lock (franz-go's partsMu "guards the partitioner's state"), so its fields need none.
type fixedTopicPartitioner struct {
	p     *fixedPartitioner
	topic string
	fixed int  // the fixed count, once looked up
	told  bool // grew was called
}

// RequiresConsistency is true: a key's partition never depends on which are available.
func (*fixedTopicPartitioner) RequiresConsistency(*kgo.Record) bool { return true }

// Partition returns PartitionFor(key, fixed count), or 0 for a record without a key. When
// the client sees another count than the fixed one, the sink is told once; a count below
// the fixed one (the topic was deleted and created again) leaves no partition that is
// right, and the client's count is used so that the partition exists.
func (tp *fixedTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if tp.fixed == 0 {
		tp.p.mu.Lock()
		tp.fixed = tp.p.counts[tp.topic]
		tp.p.mu.Unlock()
	}
	count := n
	if tp.fixed != 0 && tp.fixed != n {
		if !tp.told {
			tp.told = true
			tp.p.grew(tp.topic, tp.fixed, n)
		}
		if tp.fixed < n {
			count = tp.fixed
		}
	}
	if r.Key == nil {
		return 0
	}
	return PartitionFor(r.Key, count)
}
