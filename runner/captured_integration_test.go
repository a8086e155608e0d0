//go:build integration

package runner

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ingestkit/ingest/cdc/snapshot"
	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/state"
)

// The statements that give table t rows that only its whole binlog history holds: a CREATE,
// inserts, an update and a delete.
var createdTable = []string{
	"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))",
	"INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c')",
	"INSERT INTO t VALUES (4,'d')",
	"UPDATE t SET v='a2' WHERE id=1",
	"DELETE FROM t WHERE id=2",
}

const notCapturedWarning = "matches source.tables but is not captured, because it appeared after the pipeline started"

func newlyDefinition(t *testing.T, name string, newly bool) *pipeline.Definition {
	return definition(t, name, fmt.Sprintf("  scan.binlog.newly-added-table.enabled: %v", newly), "")
}

// applyLogged runs the pipeline as `ingest apply --until-caught-up` does, logging into log.
func applyLogged(t *testing.T, def *pipeline.Definition, stateDir string, log *slog.Logger) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := Run(ctx, def, Options{StateDir: stateDir, UntilCaughtUp: true, Logger: log}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Run did not stop by itself")
	}
}

// storedProgress reads the snapshot progress of the local state.
func storedProgress(t *testing.T, dir string) (*state.Checkpoint, snapshot.Progress) {
	t.Helper()
	_, cp, err := state.Peek(dir)
	if err != nil || cp == nil {
		t.Fatalf("state %s: %v %v", dir, cp, err)
	}
	p, err := progressOf(cp.Snapshot, cp.Chunks) // the chunks are kept apart (chunks.jsonl)
	if err != nil || p == nil {
		t.Fatalf("stored progress %s: %v", cp.Snapshot, err)
	}
	return cp, *p
}

// planCapture returns what `ingest plan` says of a table and of the start.
func planCapture(t *testing.T, def *pipeline.Definition, dir, table string) (capture, start string) {
	t.Helper()
	rep, err := Plan(context.Background(), def, Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, pt := range rep.Tables {
		if pt.Table == table {
			capture = pt.Capture
		}
	}
	return capture, rep.Start
}

func cleanupTopics(t *testing.T, topics ...string) {
	t.Cleanup(func() { _, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), topics...) })
}

// checkCaptured checks the topic of table t: the table's rows exactly when captured, else
// no record at all and one warning in the log.
func checkCaptured(t *testing.T, db *sql.DB, name string, captured bool, logs string) {
	t.Helper()
	recs := consumeCommitted(t, name+".t")
	if captured {
		if got, want := materialize(recs), tableState(t, db, "t"); !maps.Equal(got, want) {
			t.Fatalf("the topic holds %v, the table %v (records %v)", got, want, recs)
		}
		if strings.Contains(logs, notCapturedWarning) {
			t.Errorf("a captured table is warned about:\n%s", logs)
		}
		return
	}
	if len(recs) != 0 {
		t.Fatalf("a table that is not captured got %d records: %v", len(recs), recs)
	}
	if n := strings.Count(logs, "level=WARN msg=\"table "+name+".t "+notCapturedWarning); n != 1 {
		t.Fatalf("the log warns %d times that %s.t is not captured, want once:\n%s", n, name, logs)
	}
	fix := strings.Contains(logs, "ingest resnapshot") || strings.Contains(logs, "remove the state directory") // with a snapshot, without
	if !strings.Contains(logs, "scan.binlog.newly-added-table.enabled: true") || !fix {
		t.Errorf("the warning does not give the fixes:\n%s", logs)
	}
}

// consumeCommitted reads every committed record of topic (a transactional topic's end offset
// counts its commit markers, so consumeAll cannot be used): until a poll has found nothing
// new for three seconds.
func consumeCommitted(t *testing.T, topic string) []record {
	t.Helper()
	cl := testenv.Kafka(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var out []record
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		n := len(out)
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, record{key: string(r.Key), value: string(r.Value), tombstone: r.Value == nil})
		})
		if len(out) == n {
			return out
		}
	}
}

// TestCapturedAfterEmptyStart: a pipeline whose pattern matched no table when it first ran
// stores the hand-off position and an empty captured set; a table created afterwards with
// rows is captured whole with scan.binlog.newly-added-table.enabled, and not at all without.
func TestCapturedAfterEmptyStart(t *testing.T) {
	for _, c := range []struct {
		newly       bool
		exactlyOnce bool // the state is in Kafka: plan does not read it
	}{{true, false}, {false, false}, {true, true}, {false, true}} {
		t.Run(fmt.Sprintf("newly-added-table=%v,exactly-once=%v", c.newly, c.exactlyOnce), func(t *testing.T) {
			name, db := testenv.Database(t)
			def := newlyDefinition(t, name, c.newly)
			if c.exactlyOnce {
				def = definition(t, name, fmt.Sprintf("  scan.binlog.newly-added-table.enabled: %v", c.newly), "  sink.delivery-guarantee: exactly-once")
			}
			cleanupTopics(t, name+".t")
			dir := filepath.Join(t.TempDir(), "state")
			if _, start := planCapture(t, def, dir, ""); !c.exactlyOnce && !strings.Contains(start, "no table matches source.tables, so no initial snapshot will run") {
				t.Errorf("plan before the first run: %s", start)
			}
			applyUntilCaughtUp(t, def, dir)
			if !c.exactlyOnce {
				cp, p := storedProgress(t, dir)
				if cp.Position == "" || !p.Done || p.Tables == nil || len(p.Tables) != 0 || p.ListedAt == "" {
					t.Fatalf("state after a snapshot of no table: %s %s; want a position, done, an empty table list", cp.Position, cp.Snapshot)
				}
			}

			testenv.Exec(t, db, createdTable...)
			log, logs := bufferLogger()
			applyLogged(t, def, dir, log)
			checkCaptured(t, db, name, c.newly, logs.String())
			if !c.exactlyOnce {
				capture, start := planCapture(t, def, dir, name+".t")
				want := "not captured: it appeared after the pipeline started; set scan.binlog.newly-added-table.enabled: true"
				if c.newly {
					want = "captured from its CREATE TABLE at "
				}
				if !strings.HasPrefix(capture, want) || !strings.Contains(start, "no initial snapshot will run") {
					t.Errorf("plan says of the table %q and of the start %q; want %q", capture, start, want)
				}
			}

			// Later runs keep the set: the table stays captured, or stays out.
			testenv.Exec(t, db, "INSERT INTO t VALUES (5,'e')", "DELETE FROM t WHERE id=3")
			log, logs = bufferLogger()
			applyLogged(t, def, dir, log)
			checkCaptured(t, db, name, c.newly, logs.String())
		})
	}
}

// TestCapturedWithoutSnapshot: a pipeline without a snapshot (latest-offset) captures the
// tables that matched when it first started; a table created later is captured whole with
// scan.binlog.newly-added-table.enabled, and not at all without.
func TestCapturedWithoutSnapshot(t *testing.T) {
	for _, newly := range []bool{true, false} {
		t.Run(fmt.Sprintf("newly-added-table=%v", newly), func(t *testing.T) {
			name, db := testenv.Database(t)
			testenv.Exec(t, db, "CREATE TABLE m (id INT PRIMARY KEY, v VARCHAR(20))")
			def := definition(t, name, fmt.Sprintf("  scan.startup.mode: latest-offset\n  scan.binlog.newly-added-table.enabled: %v", newly), "")
			cleanupTopics(t, name+".t", name+".m")
			dir := t.TempDir()
			applyUntilCaughtUp(t, def, dir)
			if _, p := storedProgress(t, dir); len(p.Tables) != 1 || !p.Tables[0].Stream || p.Done {
				t.Fatalf("stored captured set %+v", p)
			}
			testenv.Exec(t, db, "INSERT INTO m VALUES (1,'m')")
			testenv.Exec(t, db, createdTable...)
			log, logs := bufferLogger()
			applyLogged(t, def, dir, log)
			checkCaptured(t, db, name, newly, logs.String())
			if got, want := materialize(consumeAll(t, name+".m")), tableState(t, db, "m"); !maps.Equal(got, want) {
				t.Errorf("m: the topic holds %v, the table %v", got, want)
			}
			if capture, start := planCapture(t, def, dir, name+".m"); capture != "captured (by the stream, from the pipeline's start)" ||
				strings.Contains(start, "snapshot will") {
				t.Errorf("plan says of m %q, of the start %q", capture, start)
			}
		})
	}
}

// TestCapturedCreatedWhileStreaming creates a table while a streaming run runs: it is
// captured whole with scan.binlog.newly-added-table.enabled, not at all without, and stays
// so after a restart.
func TestCapturedCreatedWhileStreaming(t *testing.T) {
	for _, newly := range []bool{true, false} {
		t.Run(fmt.Sprintf("newly-added-table=%v", newly), func(t *testing.T) {
			name, db := testenv.Database(t)
			testenv.Exec(t, db, "CREATE TABLE m (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO m VALUES (1,'start')")
			def := newlyDefinition(t, name, newly)
			cleanupTopics(t, name+".t", name+".m")
			dir := t.TempDir()
			log, logs := bufferLogger()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- Run(ctx, def, Options{StateDir: dir, Logger: log}) }()
			defer func() { cancel(); <-done }()

			waitRecords(t, name+".m", 1, done)
			testenv.Exec(t, db, "INSERT INTO m VALUES (2,'streaming')")
			waitRecords(t, name+".m", 2, done) // the stream runs
			testenv.Exec(t, db, createdTable...)
			testenv.Exec(t, db, "INSERT INTO m VALUES (3,'after t')")
			waitRecords(t, name+".m", 3, done) // the stream has passed t's statements
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Run: %v", err)
			}
			done <- nil // for the deferred wait
			checkCaptured(t, db, name, newly, logs.String())
			if _, p := storedProgress(t, dir); newly != slicesContainsTable(p.Tables, name, "t") {
				t.Errorf("stored captured set %v", p.Tables)
			}

			testenv.Exec(t, db, "INSERT INTO t VALUES (6,'f')", "UPDATE t SET v='d2' WHERE id=4")
			log, logs = bufferLogger()
			applyLogged(t, def, dir, log)
			checkCaptured(t, db, name, newly, logs.String())
		})
	}
}

func slicesContainsTable(tables []snapshot.TableState, db, table string) bool {
	for _, t := range tables {
		if t.DB == db && t.Table == table {
			return true
		}
	}
	return false
}

// waitRecords waits until topic holds n records, failing if the run ends first.
func waitRecords(t *testing.T, topic string, n int, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-done:
			t.Fatalf("Run ended while waiting for %s: %v", topic, err)
		default:
		}
		if len(consumeAll(t, topic)) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: fewer than %d records after a minute", topic, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestCapturedOldFormat runs on a state that an older ingest wrote after a snapshot of no
// table ({"position":"","snapshot":{"done":true}}): it is not trusted (no table is taken
// as captured), the migration is logged, and a matching table is not captured.
func TestCapturedOldFormat(t *testing.T) {
	name, db := testenv.Database(t)
	def := newlyDefinition(t, name, false)
	cleanupTopics(t, name+".t")
	dir := t.TempDir()
	id := state.Identity{Pipeline: def.Pipeline.Name, Source: sourceAddr(def), Tables: tablesIdentity(def)}
	st, err := state.Open(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Save(state.Checkpoint{Snapshot: json.RawMessage(`{"done":true}`)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	testenv.Exec(t, db, createdTable...)
	log, logs := bufferLogger()
	applyLogged(t, def, dir, log)
	if !strings.Contains(logs.String(), "an older format") {
		t.Errorf("the migration is not logged:\n%s", logs)
	}
	checkCaptured(t, db, name, false, logs.String())
	if cp, p := storedProgress(t, dir); cp.Position == "" || p.Tables == nil {
		t.Errorf("the state is not rewritten in the current format: %s %s", cp.Position, cp.Snapshot)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "checkpoint.json")); err == nil && !strings.Contains(string(b), `"tables":[]`) {
		t.Errorf("checkpoint %s", b)
	}
}

// TestCapturedHandoffPositionStored: a finished snapshot stores the position the stream
// takes over at, and a run that resumes from that state (here: scan.startup.mode snapshot,
// then initial) streams from there through the hand-off, losing nothing.
func TestCapturedHandoffPositionStored(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE m (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO m SELECT seq, CONCAT('v', seq) FROM seq_1_to_300")
	cleanupTopics(t, name+".m")
	dir := t.TempDir()
	snapOnly := definition(t, name, "  scan.startup.mode: snapshot\n  scan.incremental.snapshot.chunk.size: 64", "")
	applyUntilCaughtUp(t, snapOnly, dir)
	cp, p := storedProgress(t, dir)
	start, ok, err := p.HandoffPosition()
	if cp.Position == "" || !ok || err != nil || cp.Position != start.String() || len(p.Chunks) < 2 ||
		!slices.Equal(p.Tables, []snapshot.TableState{{DB: name, Table: "m", Done: true}}) {
		t.Fatalf("state after the snapshot: position %q, progress %s", cp.Position, cp.Snapshot)
	}
	testenv.Exec(t, db, "UPDATE m SET v='x' WHERE id <= 100", "DELETE FROM m WHERE id > 250", "INSERT INTO m VALUES (1000,'new')")
	applyUntilCaughtUp(t, definition(t, name, "  scan.incremental.snapshot.chunk.size: 64", ""), dir)
	if got, want := materialize(consumeAll(t, name+".m")), tableState(t, db, "m"); !maps.Equal(got, want) {
		t.Fatalf("the topic holds %d keys, the table %d rows", len(got), len(want))
	}
}
