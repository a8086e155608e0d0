package upsert

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestCheckPartitions(t *testing.T) {
	cases := []struct {
		name                          string
		current, recorded, configured int32
		want                          []string // in the error; nil: no error
	}{
		{"nothing known", 3, 0, 0, nil},
		{"as recorded", 3, 3, 0, nil},
		{"as configured", 6, 0, 6, nil},
		{"default configured", 6, 0, -1, nil},
		{"grew since recorded", 5, 3, 0, []string{"topic t has 5 partitions", "wrote its records for 3",
			"recorded in /st", "re-keyed", "recreate it with 3 partitions", "remove the state directory /st", "fresh, empty topic"}},
		{"recorded wins over configured", 5, 3, 5, []string{"wrote its records for 3"}},
		{"not as configured", 3, 0, 6, []string{"topic t has 3 partitions", "sink.topic.partitions is 6",
			"set sink.topic.partitions to 3", "created with 6 partitions"}},
		{"recorded but not as configured", 3, 3, 6, []string{"sink.topic.partitions is 6"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckPartitions("t", c.current, c.recorded, "/st", c.configured)
			if c.want == nil {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestFixedPartitioner: once a topic's count is fixed, a client that sees more partitions
// still partitions over the fixed count, and the sink is told once.
func TestFixedPartitioner(t *testing.T) {
	type change struct {
		topic       string
		fixed, seen int
	}
	var told []change
	p := newFixedPartitioner(func(topic string, fixed, seen int) { told = append(told, change{topic, fixed, seen}) })
	p.fix("t", 3)
	tp := p.ForTopic("t")
	other := p.ForTopic("unfixed")
	for i := range 200 {
		r := &kgo.Record{Key: []byte{byte(i), byte(i >> 3), 'k'}}
		if got, want := tp.Partition(r, 3), PartitionFor(r.Key, 3); got != want {
			t.Fatalf("key %q among 3: partition %d, want %d", r.Key, got, want)
		}
		if got, want := tp.Partition(r, 7), PartitionFor(r.Key, 3); got != want {
			t.Fatalf("key %q after growth to 7: partition %d, want %d (the fixed count)", r.Key, got, want)
		}
		if got, want := other.Partition(r, 7), PartitionFor(r.Key, 7); got != want {
			t.Fatalf("unfixed topic: partition %d, want %d", got, want)
		}
	}
	if len(told) != 1 || told[0] != (change{"t", 3, 7}) {
		t.Errorf("told %v, want one change t 3 -> 7", told)
	}
	if got := tp.Partition(&kgo.Record{Key: []byte("k")}, 2); got >= 2 {
		t.Errorf("fewer partitions than fixed: partition %d does not exist", got)
	}
	if got := tp.Partition(&kgo.Record{}, 7); got != 0 {
		t.Errorf("record without a key: partition %d, want 0", got)
	}
}
