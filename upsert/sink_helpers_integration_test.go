//go:build integration

package upsert

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// seqSchema is the table of the generated workload: id (key), seq (source transaction
// number), j (change number in the transaction).
var seqSchema = &change.Schema{
	Table:   change.TableID{DB: "app", Table: "seq"},
	Columns: []change.Column{{Name: "id"}, {Name: "seq"}, {Name: "j"}},
	Key:     []int{0},
	Version: 1,
}

const seqKeys = 50

// seqEpoch is the commit time of the workload's first transaction. It must be recent:
// the broker rolls a segment for every batch of records with old timestamps, and then
// compaction and retention remove records while the test reads them.
var seqEpoch = time.Now().Truncate(time.Second)

// seqTxn returns source transaction i of the workload: updates of five distinct keys,
// ending at position i+1.
func seqTxn(i int) Input {
	var cs []change.Change
	for j := range 5 {
		k := int64((i*7 + j) % seqKeys)
		row := change.Row{change.IntValue(k), change.IntValue(int64(i)), change.IntValue(int64(j))}
		cs = append(cs, change.Change{Schema: seqSchema, Op: change.Update, Before: row, After: row})
	}
	return Input{Batch: change.Batch{Changes: cs, CommitTime: seqEpoch.Add(time.Duration(i) * time.Millisecond),
		End: true, Position: []byte(strconv.Itoa(i + 1))}}
}

// seqRow is a record value of the workload.
type seqRow struct {
	ID, Seq, J int
}

// baseConfig returns a sink configuration for the test broker that routes every table to
// topic.
func baseConfig(t testing.TB, topic string, g Guarantee) Config {
	t.Helper()
	p, err := ParseProperties(map[string]string{"bootstrap.servers": testenv.KafkaAddr(), "linger.ms": "5"})
	if err != nil {
		t.Fatal(err)
	}
	return Config{
		Pipeline:   testenv.Name(t),
		Properties: p,
		Guarantee:  g,
		Topics:     func(change.TableID) []string { return []string{topic} },
		AutoCreate: true,
		Logger:     slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
}

// acks collects the checkpoints a sink reports.
type acks struct {
	mu  sync.Mutex
	cps []Checkpoint
}

func (a *acks) add(cp Checkpoint) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cps = append(a.cps, cp)
}

func (a *acks) last() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.cps) == 0 {
		return ""
	}
	return string(a.cps[len(a.cps)-1].Position)
}

// runSink runs a sink over inputs (closing the input after them) and returns Run's error.
func runSink(t testing.TB, cfg Config, inputs []Input) error {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan Input, 16)
	go func() {
		defer close(in)
		for _, b := range inputs {
			in <- b
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return s.Run(ctx, in)
}

// readAll reads every record of topic (all partitions) up to the end offsets it has now,
// with the given isolation level.
func readAll(t testing.TB, topic string, committed bool) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := kadm.NewClient(testenv.Kafka(t))
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	if committed {
		// Transaction markers are written after EndTransaction returns; wait until the
		// last stable offset has caught up with the end (the tests leave no transaction open).
		waitStable(ctx, t, adm, topic, ends)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	opts := []kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.KeepControlRecords()}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl := testenv.Kafka(t, opts...)
	var recs []*kgo.Record
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: timed out with partitions %v left", topic, want)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() {
				recs = append(recs, r)
			}
			if end, ok := want[r.Partition]; ok && r.Offset >= end-1 {
				delete(want, r.Partition)
			}
		})
	}
	return recs
}

// waitStable waits until the last stable offset of every partition of topic reaches ends.
func waitStable(ctx context.Context, t testing.TB, adm *kadm.Client, topic string, ends kadm.ListedOffsets) {
	t.Helper()
	for {
		stable, err := adm.ListCommittedOffsets(ctx, topic)
		if err != nil {
			t.Fatalf("committed offsets of %s: %v", topic, err)
		}
		behind := false
		ends.Each(func(o kadm.ListedOffset) {
			if s, ok := stable.Lookup(topic, o.Partition); !ok || s.Offset < o.Offset {
				behind = true
			}
		})
		if !behind {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: the last stable offset did not reach the end: %v < %v", topic, stable, ends)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func decodeSeq(t testing.TB, r *kgo.Record) seqRow {
	t.Helper()
	var v seqRow
	if err := json.Unmarshal(r.Value, &v); err != nil {
		t.Fatalf("record %s/%d@%d: %v", r.Topic, r.Partition, r.Offset, err)
	}
	return v
}

func positionOf(t testing.TB, cp *Checkpoint) int {
	if cp == nil {
		return 0
	}
	n, err := strconv.Atoi(string(cp.Position))
	if err != nil {
		t.Fatalf("checkpoint position %q", cp.Position)
	}
	return n
}

func deleteTopic(t testing.TB, topic string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(ctx, topic)
	})
}

// noLeak fails the test if, after everything else the test registered is cleaned up,
// more goroutines run than when it started (give franz-go's closing goroutines 5s).
// Call it first in a test, so that its cleanup runs last.
func noLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			t.Errorf("%d goroutines leaked:\n%s", n-before, buf[:runtime.Stack(buf, true)])
		}
	})
}
