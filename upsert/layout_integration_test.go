//go:build integration

package upsert

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// memLedger is a PartitionLedger in memory.
type memLedger struct{ counts map[string]int32 }

func (l *memLedger) Partitions() (map[string]int32, error) { return maps.Clone(l.counts), nil }
func (l *memLedger) SavePartitions(c map[string]int32) error {
	l.counts = maps.Clone(c)
	return nil
}
func (l *memLedger) Dir() string { return "/state" }

func addPartitions(t *testing.T, topic string, total int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(testenv.Kafka(t)).UpdatePartitions(ctx, total, topic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("grow %s to %d partitions: %v", topic, total, err)
	}
}

// TestSinkPartitionsRecordedAndChecked: the first run records the count of a created topic;
// after the topic gained partitions, the next run's Start refuses it before writing.
func TestSinkPartitionsRecordedAndChecked(t *testing.T) {
	topic := testenv.Name(t)
	deleteTopic(t, topic)
	ledger := &memLedger{counts: map[string]int32{}}
	cfg := baseConfig(t, topic, AtLeastOnce)
	cfg.Partitions, cfg.Ledger = 3, ledger
	if err := runSink(t, cfg, []Input{seqTxn(0)}); err != nil {
		t.Fatal(err)
	}
	if ledger.counts[topic] != 3 {
		t.Fatalf("recorded %v, want %s: 3", ledger.counts, topic)
	}
	addPartitions(t, topic, 5)
	cfg.Partitions = 0
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Start(context.Background())
	var pe *PartitionCountError
	if !errors.As(err, &pe) || pe.Topic != topic || pe.Recorded != 3 || pe.Current != 5 || IsRetryable(err) {
		t.Fatalf("Start = %v, want a terminal PartitionCountError 3 -> 5 for %s", err, topic)
	}
	if n := len(readAll(t, topic, false)); n != 5 {
		t.Errorf("%d records in the topic, want the 5 of the first run", n)
	}
}

// TestSinkPartitionsConfigured: sink.topic.partitions that an existing topic does not have
// is refused at the topic's first record.
func TestSinkPartitionsConfigured(t *testing.T) {
	topic := testenv.Topic(t, 2, nil)
	cfg := baseConfig(t, topic, AtLeastOnce)
	cfg.Partitions = 4
	err := runSink(t, cfg, []Input{seqTxn(0)})
	var pe *PartitionCountError
	if !errors.As(err, &pe) || pe.Configured != 4 || pe.Current != 2 {
		t.Fatalf("Run = %v, want a PartitionCountError (configured 4, current 2)", err)
	}
	if n := len(readAll(t, topic, false)); n != 0 {
		t.Errorf("%d records written, want none", n)
	}
}

// TestSinkPartitionsGrowWhileRunning: a topic that gains partitions while the sink writes
// to it stops the sink, and no record goes to a partition of the new layout.
func TestSinkPartitionsGrowWhileRunning(t *testing.T) {
	topic := testenv.Topic(t, 3, nil)
	cfg := baseConfig(t, topic, AtLeastOnce)
	cfg.ClientOpts = []kgo.Opt{kgo.MetadataMinAge(250 * time.Millisecond), kgo.MetadataMaxAge(time.Second)}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan Input)
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	go func() { done <- s.Run(ctx, in) }()
	grown := false
	for i := 0; ; i++ {
		if i == 20 {
			addPartitions(t, topic, 6)
			grown = true
		}
		select {
		case err = <-done:
		case in <- seqTxn(i):
			time.Sleep(50 * time.Millisecond)
			continue
		}
		break
	}
	var pe *PartitionCountError
	if !grown || !errors.As(err, &pe) || !pe.Running || pe.Recorded != 3 || pe.Current != 6 {
		t.Fatalf("Run = %v (grown %v), want a PartitionCountError while running, 3 -> 6", err, grown)
	}
	recs := readAll(t, topic, false)
	if len(recs) == 0 {
		t.Fatal("nothing written")
	}
	for _, r := range recs {
		if want := int32(PartitionFor(r.Key, 3)); r.Partition != want {
			t.Errorf("key %s in partition %d, want %d (of the 3 at the start)", r.Key, r.Partition, want)
		}
	}
}
