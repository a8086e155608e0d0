//go:build integration

package runner

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/ingestkit/ingest/upsert"
)

// TestStateDirDeleted: an at-least-once pipeline whose state directory is deleted between
// runs resumes from the copy of its checkpoint in Kafka's state topic, so a row deleted
// meanwhile arrives as a tombstone and nothing is snapshotted again. A state of the same
// pipeline name for another source is refused with the choices, and --reset-state starts
// afresh.
func TestStateDirDeleted(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c')")
	def := definition(t, name, "", "")
	topic := name + ".t"
	t.Cleanup(func() { _, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), topic) })
	stateDir := t.TempDir()
	applyUntilCaughtUp(t, def, stateDir)
	if n := len(consumeAll(t, topic)); n != 3 {
		t.Fatalf("snapshot wrote %d records, want 3", n)
	}

	testenv.Exec(t, db, "DELETE FROM t WHERE id = 2", "INSERT INTO t VALUES (4,'d')")
	if err := os.RemoveAll(stateDir); err != nil {
		t.Fatal(err)
	}
	rep, err := Plan(context.Background(), def, Options{StateDir: stateDir})
	if err != nil || !strings.Contains(rep.Start, "from the copy of the checkpoint in the state topic") {
		t.Errorf("plan after the state directory was deleted: start %q, %v", rep.Start, err)
	}
	applyUntilCaughtUp(t, def, stateDir)
	recs := consumeAll(t, topic)
	if got, want := materialize(recs), tableState(t, db, "t"); !maps.Equal(got, want) {
		t.Fatalf("after the state directory was deleted the topic holds %v, the table %v", got, want)
	}
	if len(recs) != 5 || !recs[3].tombstone && !recs[4].tombstone {
		t.Fatalf("want the 3 snapshot records, then a tombstone for id 2 and id 4, got %v", recs)
	}

	// The same pipeline name over another source address: refused, whatever the state
	// directory. (Other tables are accepted: TestLcTablesWidened.)
	other := definition(t, name, "", "")
	other.Source.Hostname = map[bool]string{true: "127.0.0.1", false: "localhost"}[other.Source.Hostname == "localhost"]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err = Run(ctx, other, Options{StateDir: t.TempDir(), UntilCaughtUp: true})
	if err == nil || !strings.Contains(err.Error(), "--reset-state") || !strings.Contains(err.Error(), "pipeline.name") {
		t.Fatalf("a state of another source: %v, want a refusal with the choices", err)
	}

	// --reset-state: a new snapshot, by request.
	if err := Run(ctx, def, Options{StateDir: t.TempDir(), UntilCaughtUp: true, ResetState: true}); err != nil {
		t.Fatal(err)
	}
	if n := len(consumeAll(t, topic)); n != 5+3 {
		t.Fatalf("after --reset-state the topic has %d records, want the 5 and a new snapshot of 3", n)
	}
}

// TestExactlyOnceManyChunks: an exactly-once snapshot of more than 5,000 chunks completes,
// and no state record it writes reaches 64 KiB: the chunks are records of their own.
func TestExactlyOnceManyChunks(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
	const rows = 15300
	for i := 0; i < rows; i += 5000 {
		var values []string
		for j := i + 1; j <= min(i+5000, rows); j++ {
			values = append(values, fmt.Sprintf("(%d,'v%d')", j, j))
		}
		testenv.Exec(t, db, "INSERT INTO t VALUES "+strings.Join(values, ","))
	}
	def := definition(t, name, "  scan.incremental.snapshot.chunk.size: 2",
		"  sink.delivery-guarantee: exactly-once\n  sink.transactional-id-prefix: "+name+"-")
	def.Pipeline.Parallelism = 4
	topic := name + ".t"
	t.Cleanup(func() { _, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), topic) })
	began := time.Now()
	applyUntilCaughtUp(t, def, t.TempDir())
	t.Logf("snapshot of %d rows in chunks of 2: %s", rows, time.Since(began).Round(time.Millisecond))
	keys := map[string]bool{}
	readTopic(t, topic, func(r *kgo.Record) { keys[string(r.Key)] = r.Value != nil })
	if len(keys) != rows {
		t.Fatalf("the topic holds %d keys, want %d", len(keys), rows)
	}

	largest, chunks := 0, 0
	readTopic(t, upsert.DefaultStateTopic, func(r *kgo.Record) {
		key := string(r.Key)
		if key != def.Pipeline.Name && !strings.HasPrefix(key, def.Pipeline.Name+"/") {
			return
		}
		largest = max(largest, len(r.Key)+len(r.Value))
		if strings.HasPrefix(key, def.Pipeline.Name+"/chunk/") && r.Value != nil {
			chunks++
		}
	})
	t.Logf("state records: %d chunk records written, the largest record %d bytes", chunks, largest)
	// One record may cover the adjacent chunks finished between two commits, so the count
	// falls with the load of the machine (3,942 to 5,100 of 7,650 chunks seen); a thousand
	// still shows that the chunks are records of their own, not one growing record.
	if chunks < 1000 {
		t.Errorf("%d chunk records, want more than 1,000", chunks)
	}
	if largest >= 64<<10 {
		t.Errorf("the largest state record has %d bytes, want under 64 KiB", largest)
	}
}

// readTopic calls fn with every committed record of every partition of topic, up to the
// partitions' end offsets when it starts.
func readTopic(t *testing.T, topic string, fn func(*kgo.Record)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(testenv.Kafka(t)).ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	offsets := map[int32]kgo.Offset{}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			offsets[o.Partition], left[o.Partition] = kgo.NewOffset().AtStart(), o.Offset
		}
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(testenv.KafkaAddr()), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: %v", topic, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := left[r.Partition]; ok && r.Offset >= end-1 {
				delete(left, r.Partition)
			}
			if !r.Attrs.IsControl() {
				fn(r)
			}
		})
	}
}
