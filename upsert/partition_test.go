package upsert

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Vectors from Kafka's UtilsTest.testMurmur2.
func TestMurmur2(t *testing.T) {
	tests := []struct {
		in   string
		want int32
	}{
		{"21", -973932308},
		{"foobar", -790332482},
		{"a-little-bit-long-string", -985981536},
		{"a-little-bit-longer-string", -1486304829},
		{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
		{"abc", 479470107},
	}
	for _, tc := range tests {
		if got := Murmur2([]byte(tc.in)); got != tc.want {
			t.Errorf("Murmur2(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestPartitionerAgreesWithKgo checks ours against franz-go's own Java-compatible hasher
// for keyed records, over every tail length.
func TestPartitionerAgreesWithKgo(t *testing.T) {
	theirs := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	ours := Partitioner().ForTopic("t")
	key := []byte(`{"id":"héllo 🚀 0123456789"}`)
	for i := range len(key) + 1 {
		r := &kgo.Record{Key: key[:i]}
		for _, n := range []int{1, 3, 7, 12, 64} {
			if a, b := ours.Partition(r, n), theirs.Partition(r, n); a != b {
				t.Errorf("key %q, %d partitions: ours %d, kgo %d", key[:i], n, a, b)
			}
		}
	}
	if got := ours.Partition(&kgo.Record{}, 12); got != 0 {
		t.Errorf("nil key went to %d, want 0", got)
	}
	if !ours.RequiresConsistency(&kgo.Record{}) {
		t.Error("RequiresConsistency is false")
	}
}
