package upsert

import "github.com/twmb/franz-go/pkg/kgo"

// Murmur2 is the 32-bit murmur2 hash exactly as the Java client computes it
// (org.apache.kafka.common.utils.Utils.murmur2, seed 0x9747b28c).
func Murmur2(data []byte) int32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	n := len(data)
	h := uint32(seed) ^ uint32(n)
	for i := 0; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := data[n&^3:]
	switch len(tail) {
	case 3:
		h ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(tail[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// PartitionFor returns the partition the Java client's default partitioner picks for a
// record with key among n partitions: toPositive(murmur2(key)) % n, where toPositive clears
// the sign bit (it is not an absolute value).
func PartitionFor(key []byte, n int) int {
	return int(uint32(Murmur2(key))&0x7fffffff) % n
}

// Partitioner returns the kgo.Partitioner of the sink: keyed records go to
// [PartitionFor](key, partitions), always over all partitions of the topic, so that a key
// never moves while a partition is unavailable (its records wait and retry instead), and
// ingest agrees with Java and Flink producers on every key's partition.
//
// The sink never produces records without a key (every table has a key, and the state
// record is keyed by the pipeline name). Should one appear anyway it goes to partition 0:
// deterministic, and harmless for ordering, rather than spread in an order nobody relies on.
func Partitioner() kgo.Partitioner { return murmur2Partitioner{} }

type murmur2Partitioner struct{}

// ForTopic returns the partitioner itself: it keeps no state per topic.
func (murmur2Partitioner) ForTopic(string) kgo.TopicPartitioner { return murmur2Partitioner{} }

// RequiresConsistency is true: a key's partition never depends on which are available.
func (murmur2Partitioner) RequiresConsistency(*kgo.Record) bool { return true }

// Partition returns PartitionFor(r.Key, n), or 0 for a record without a key.
func (murmur2Partitioner) Partition(r *kgo.Record, n int) int {
	if r.Key == nil {
		return 0
	}
	return PartitionFor(r.Key, n)
}

// partitioner returns the sink's partitioner: murmur2 of the key over each topic's fixed
// partition count (s.part), or with AllToZero (partition.strategy all-to-zero) partition 0
// for every topic but the state topic, whose records stay keyed.
func (s *Sink) partitioner() kgo.Partitioner {
	if !s.cfg.AllToZero {
		return s.part
	}
	return zeroPartitioner{state: s.cfg.StateTopic, keyed: s.part}
}

// zeroPartitioner sends every record to partition 0, as Flink CDC's all-to-zero strategy
// does (it sets partition 0 on every record), except the records of the state topic.
type zeroPartitioner struct {
	state string
	keyed kgo.Partitioner
}

// ForTopic returns the keyed partitioner for the state topic and partition 0 for the others.
func (z zeroPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	if topic == z.state {
		return z.keyed.ForTopic(topic)
	}
	return zeroTopicPartitioner{}
}

type zeroTopicPartitioner struct{}

// RequiresConsistency is true: the partition never depends on which are available.
func (zeroTopicPartitioner) RequiresConsistency(*kgo.Record) bool { return true }

// Partition returns 0.
func (zeroTopicPartitioner) Partition(*kgo.Record, int) int { return 0 }
