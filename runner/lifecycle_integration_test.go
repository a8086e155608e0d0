//go:build integration

package runner

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/ingestkit/ingest/metrics"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/state"
)

// background runs the pipeline in a goroutine until stop is called (or it returns by
// itself); stop cancels it and returns Run's error, and may be called any number of times
// (the first call waits, the others return the same error), so a deferred stop never waits
// on a run that has already been waited for.
type background struct {
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

func runBackground(def *pipeline.Definition, opts Options) *background {
	ctx, cancel := context.WithCancel(context.Background())
	b := &background{cancel: cancel, done: make(chan error, 1)}
	go func() { b.done <- Run(ctx, def, opts) }()
	return b
}

// ended returns the run's end when it has ended by itself (for waits that must fail then).
func (b *background) ended() <-chan error { return b.done }

func (b *background) stop() error {
	b.once.Do(func() {
		b.cancel()
		select {
		case b.err = <-b.done:
		case <-time.After(60 * time.Second):
			b.err = fmt.Errorf("Run did not return within a minute of its cancellation")
		}
	})
	return b.err
}

// waitTopic waits until the materialised topic (read committed) equals want, failing if the
// run ends first or after a minute.
func waitTopic(t *testing.T, topic string, want map[string]string, run *background) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := materialize(consumeCommitted(t, topic))
		if maps.Equal(got, want) {
			return
		}
		select {
		case err := <-run.ended():
			run.done <- err // for stop
			t.Fatalf("Run ended while waiting for %s: %v", topic, err)
		default:
		}
		if time.Now().After(deadline) {
			if len(got)+len(want) > 40 {
				t.Fatalf("%s: after a minute the topic holds %d keys, want %d", topic, len(got), len(want))
			}
			t.Fatalf("%s: after a minute the topic holds %v, want %v", topic, got, want)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// TestLcNewTablesWhileStreaming: tables created while a pipeline streams. With
// scan.binlog.newly-added-table.enabled, a table created with a key and one created without
// and given its key by the next statement (CREATE TABLE + ALTER TABLE … ADD PRIMARY KEY) are
// captured whole, and a table that still has no key at its first rows is skipped with a
// warning, a metric and a line of plan, while the pipeline runs on. Without the option none
// of them is captured, and plan says so. With keyless fail, the keyless table stops the run.
func TestLcNewTablesWhileStreaming(t *testing.T) {
	for _, c := range []struct {
		newly  bool
		strict bool
	}{{true, false}, {false, false}, {true, true}} {
		t.Run(fmt.Sprintf("newly-added-table=%v,strict=%v", c.newly, c.strict), func(t *testing.T) {
			name, db := testenv.Database(t)
			testenv.Exec(t, db, "CREATE TABLE m (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO m VALUES (1,'start')")
			extra := fmt.Sprintf("  scan.binlog.newly-added-table.enabled: %v", c.newly)
			if c.strict {
				extra += "\n  scan.binlog.newly-added-table.keyless: fail"
			}
			def := definition(t, name, extra, "")
			cleanupTopics(t, name+".m", name+".t1", name+".t2", name+".t3")
			dir := t.TempDir()
			log, logs := bufferLogger()
			m := metrics.New(def.Pipeline.Name)
			run := runBackground(def, Options{StateDir: dir, Logger: log, Metrics: m})
			defer func() { _ = run.stop() }()

			waitTopic(t, name+".m", map[string]string{`{"id":1}`: `{"id":1,"v":"start"}`}, run)
			testenv.Exec(t, db,
				"CREATE TABLE t1 (id INT PRIMARY KEY, v VARCHAR(20))",
				"INSERT INTO t1 VALUES (1,'a'),(2,'b')",
				"UPDATE t1 SET v='a2' WHERE id=1",
				"CREATE TABLE t2 (a INT, b INT)",
				"ALTER TABLE t2 ADD PRIMARY KEY (a)",
				"INSERT INTO t2 VALUES (1,10),(2,20),(3,30)",
				"DELETE FROM t2 WHERE a=2",
				"CREATE TABLE t3 (a INT, b INT)",
				"INSERT INTO t3 VALUES (1,1),(1,1)",
				"INSERT INTO m VALUES (2,'after')")
			if c.strict {
				select {
				case err := <-run.ended():
					run.done <- err
					if err == nil || !strings.Contains(err.Error(), name+".t3 has no primary key") || !strings.Contains(err.Error(), "keyless: fail") {
						t.Fatalf("Run with keyless fail ended with %v", err)
					}
				case <-time.After(60 * time.Second):
					t.Fatal("Run with keyless fail did not stop at the keyless table")
				}
				return
			}
			waitTopic(t, name+".m", tableState(t, db, "m"), run) // the stream has passed every statement
			if err := run.stop(); err != nil {
				t.Fatalf("Run: %v", err)
			}
			for _, table := range []string{"t1", "t2"} {
				got := materialize(consumeCommitted(t, name+"."+table))
				want := lcState(t, db, table)
				if !c.newly {
					want = map[string]string{}
				}
				if !maps.Equal(got, want) {
					t.Errorf("%s: the topic holds %v, want %v", table, got, want)
				}
			}
			if got := consumeCommitted(t, name+".t3"); len(got) != 0 {
				t.Errorf("t3 (keyless) got records: %v", got)
			}
			var metric dto.Metric
			if err := m.KeylessSkipped.WithLabelValues(name + ".t3").Write(&metric); err != nil {
				t.Fatal(err)
			}
			skipped := metric.GetCounter().GetValue()
			warned := strings.Count(logs.String(), "level=WARN msg=\"table "+name+".t3 was created after the start without a primary key")
			if c.newly && (skipped != 1 || warned != 1) || !c.newly && (skipped != 0 || warned != 0) {
				t.Errorf("t3: ingest_keyless_tables_skipped_total %v, %d warnings:\n%s", skipped, warned, logs)
			}
			if strings.Contains(logs.String(), "level=ERROR") {
				t.Errorf("errors logged:\n%s", logs)
			}

			rep, err := Plan(context.Background(), def, Options{StateDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if rep.HasErrors() {
				t.Errorf("plan has problems: %v", rep.Problems)
			}
			capture := map[string]string{}
			for _, pt := range rep.Tables {
				capture[strings.TrimPrefix(pt.Table, name+".")] = pt.Capture
			}
			for table, want := range map[string]string{
				"m":  "captured (snapshotted)",
				"t1": "captured from its CREATE TABLE at ",
				"t2": "captured from its CREATE TABLE at ",
				"t3": "not captured: created after the start (at ",
			} {
				if !c.newly && table != "m" {
					want = "not captured: it appeared after the pipeline started; set scan.binlog.newly-added-table.enabled: true"
				}
				if !strings.HasPrefix(capture[table], want) {
					t.Errorf("plan says of %s %q, want %q…", table, capture[table], want)
				}
			}
			later := "tables created later are not captured (scan.binlog.newly-added-table.enabled is false)"
			if c.newly {
				later = "one that still has no primary key at its first rows is skipped with a warning"
			}
			if !strings.Contains(rep.Start, later) {
				t.Errorf("plan's start %q does not say %q", rep.Start, later)
			}

			// A restart keeps the set: t1 and t2 go on, t3 stays out.
			testenv.Exec(t, db, "INSERT INTO t1 VALUES (3,'c')", "INSERT INTO t2 VALUES (4,40)", "INSERT INTO t3 VALUES (2,2)")
			log, _ = bufferLogger()
			applyLogged(t, def, dir, log)
			for _, table := range []string{"t1", "t2"} {
				want := lcState(t, db, table)
				if !c.newly {
					want = map[string]string{}
				}
				if got := materialize(consumeCommitted(t, name+"."+table)); !maps.Equal(got, want) {
					t.Errorf("after the restart %s: the topic holds %v, want %v", table, got, want)
				}
			}
			if got := consumeCommitted(t, name+".t3"); len(got) != 0 {
				t.Errorf("after the restart t3 got records: %v", got)
			}
		})
	}
}

// lcState is what the materialised topic of a table of these tests must hold: t2 (a, b)
// keyed by a, the others (id, v) as tableState.
func lcState(t *testing.T, db *sql.DB, table string) map[string]string {
	t.Helper()
	if table != "t2" {
		return tableState(t, db, table)
	}
	rows, err := db.Query("SELECT a, b FROM t2")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var a, b int
		if err := rows.Scan(&a, &b); err != nil {
			t.Fatal(err)
		}
		m[fmt.Sprintf(`{"a":%d}`, a)] = fmt.Sprintf(`{"a":%d,"b":%d}`, a, b)
	}
	return m
}

// TestLcTruncateDropTombstones: a TRUNCATE of a 10,000-row table and a DROP of another leave
// their compacted topics equal to the tables (last value per key): the keys get tombstones,
// found by reading the topics back, at-least-once and exactly-once (in the transaction of
// the statement's position). With sink.truncate.tombstones: false nothing is written and a
// line is logged.
func TestLcTruncateDropTombstones(t *testing.T) {
	for _, c := range []struct {
		name string
		sink string
		off  bool
	}{
		{"at-least-once", "", false},
		{"exactly-once", "  sink.delivery-guarantee: exactly-once", false},
		{"opt-out", "  sink.truncate.tombstones: false", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			name, db := testenv.Database(t)
			testenv.Exec(t, db, "CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(20))",
				"INSERT INTO big SELECT seq, CONCAT('v', seq) FROM seq_1_to_10000",
				"CREATE TABLE small (id INT PRIMARY KEY, v VARCHAR(20))",
				"INSERT INTO small VALUES (1,'a'),(2,'b'),(3,'c')",
				"CREATE TABLE keep (id INT PRIMARY KEY, v VARCHAR(20))",
				"INSERT INTO keep VALUES (1,'k')")
			def := definition(t, name, "", c.sink)
			cleanupTopics(t, name+".big", name+".small", name+".keep")
			dir := t.TempDir()
			applyUntilCaughtUp(t, def, dir)
			if got := materialize(consumeCommitted(t, name+".big")); len(got) != 10000 {
				t.Fatalf("after the snapshot the topic of big holds %d keys", len(got))
			}
			testenv.Exec(t, db, "INSERT INTO small VALUES (4,'d')", "DELETE FROM small WHERE id=1",
				"TRUNCATE TABLE big", "INSERT INTO big VALUES (5,'after'),(20000,'new')",
				"DROP TABLE small", "INSERT INTO keep VALUES (2,'k2')")
			log, logs := bufferLogger()
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			err := Run(ctx, def, Options{StateDir: dir, UntilCaughtUp: true, Logger: log})
			stopped := ctx.Err() == nil
			cancel()
			if err != nil || !stopped {
				t.Fatalf("Run: %v (stopped by itself: %v); log:\n%s", err, stopped, logs)
			}

			big := materialize(consumeCommitted(t, name+".big"))
			small := materialize(consumeCommitted(t, name+".small"))
			keep := materialize(consumeCommitted(t, name+".keep"))
			if !maps.Equal(keep, tableState(t, db, "keep")) {
				t.Errorf("keep: the topic holds %v", keep)
			}
			if c.off {
				if len(big) != 10001 || len(small) != 3 {
					t.Errorf("opt-out: big holds %d keys (want 10001), small %d (want 3)", len(big), len(small))
				}
				for _, want := range []string{"TRUNCATE TABLE of " + name + ".big: nothing written (sink.truncate.tombstones is false",
					"DROP TABLE (or RENAME TABLE away) of " + name + ".small: nothing written (sink.truncate.tombstones is false"} {
					if !strings.Contains(logs.String(), want) {
						t.Errorf("opt-out: no line %q:\n%s", want, logs)
					}
				}
				return
			}
			if want := tableState(t, db, "big"); !maps.Equal(big, want) {
				t.Errorf("big: the topic holds %d keys, the table %d rows: %v", len(big), len(want), big)
			}
			if len(small) != 0 {
				t.Errorf("small (dropped): the topic holds %v", small)
			}
			for _, want := range []string{"TRUNCATE TABLE of " + name + ".big: 10000 tombstones written to " + name + ".big",
				"DROP TABLE (or RENAME TABLE away) of " + name + ".small: 3 tombstones written to " + name + ".small"} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("no line %q:\n%s", want, logs)
				}
			}
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, "tombstones written") {
					t.Log(line)
				}
			}
		})
	}
}

// TestLcTablesWidened: source.tables widened between two --until-caught-up runs. The
// added table is snapshotted (its rows as they are, with the changes made to it while the
// pipeline was stopped, each key once), and the table captured before continues from its
// stored position (no record of it twice: no re-snapshot). A later run goes on for both,
// and a narrowed selection (tables.exclude) just continues for the rest, with a warning.
func TestLcTablesWidened(t *testing.T) {
	for _, c := range []struct {
		name string
		sink string
	}{
		{"at-least-once", ""},
		{"exactly-once", "  sink.delivery-guarantee: exactly-once"},
	} {
		t.Run(c.name, func(t *testing.T) {
			name, db := testenv.Database(t)
			testenv.Exec(t, db, "CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(20))",
				"INSERT INTO a SELECT seq, CONCAT('a', seq) FROM seq_1_to_2000",
				"CREATE TABLE b (id INT PRIMARY KEY, v VARCHAR(20))",
				"INSERT INTO b SELECT seq, CONCAT('b', seq) FROM seq_1_to_1500")
			sink := c.sink
			if sink != "" {
				sink += "\n  sink.transactional-id-prefix: " + name + "-"
			}
			def := definition(t, name, "", sink)
			def.Source.Tables = name + ".a"
			cleanupTopics(t, name+".a", name+".b")
			dir := t.TempDir()
			applyUntilCaughtUp(t, def, dir)
			if n := len(consumeCommitted(t, name+".a")); n != 2000 {
				t.Fatalf("the first run wrote %d records of a, want 2000", n)
			}
			if n := len(consumeCommitted(t, name+".b")); n != 0 {
				t.Fatalf("the first run wrote %d records of b, want none", n)
			}

			// Stopped: a changes, and so does b, not captured yet.
			testenv.Exec(t, db, "INSERT INTO a SELECT seq, CONCAT('a', seq) FROM seq_2001_to_2005",
				"UPDATE b SET v = 'upd' WHERE id <= 10", "DELETE FROM b WHERE id > 1490", "INSERT INTO b VALUES (5000, 'new')")
			wide := definition(t, name, "", sink)
			wide.Source.Tables = name + ".a," + name + ".b"
			log, logs := bufferLogger()
			applyLogged(t, wide, dir, log)
			recsA, recsB := consumeCommitted(t, name+".a"), consumeCommitted(t, name+".b")
			if len(recsA) != 2005 || !maps.Equal(materialize(recsA), tableState(t, db, "a")) {
				t.Errorf("a after widening: %d records (want 2000 + the 5 inserted: no re-snapshot), equal to the table: %v",
					len(recsA), maps.Equal(materialize(recsA), tableState(t, db, "a")))
			}
			if want := tableState(t, db, "b"); len(recsB) != len(want) || !maps.Equal(materialize(recsB), want) {
				t.Errorf("b after widening: %d records for %d rows, equal to the table: %v", len(recsB), len(want), maps.Equal(materialize(recsB), want))
			}
			if !strings.Contains(logs.String(), "table "+name+".b joins the captured set") {
				t.Errorf("no line of b joining:\n%s", logs)
			}
			if strings.Contains(logs.String(), "level=ERROR") {
				t.Errorf("errors logged:\n%s", logs)
			}

			// Running on: both tables follow.
			testenv.Exec(t, db, "INSERT INTO a VALUES (3000, 'x')", "UPDATE b SET v = 'again' WHERE id = 1", "DELETE FROM b WHERE id = 2")
			applyUntilCaughtUp(t, wide, dir)
			recsA, recsB = consumeCommitted(t, name+".a"), consumeCommitted(t, name+".b")
			if len(recsA) != 2006 || !maps.Equal(materialize(recsA), tableState(t, db, "a")) {
				t.Errorf("a on the next run: %d records, want 2006", len(recsA))
			}
			if !maps.Equal(materialize(recsB), tableState(t, db, "b")) || len(recsB) != 1491+2 {
				t.Errorf("b on the next run: %d records, want 1493, equal to the table: %v", len(recsB), maps.Equal(materialize(recsB), tableState(t, db, "b")))
			}

			// Narrowed: a leaves, b goes on.
			narrow := definition(t, name, "", sink)
			narrow.Source.Tables = name + ".a," + name + ".b"
			narrow.Source.Exclude = name + ".a"
			testenv.Exec(t, db, "INSERT INTO a VALUES (3001, 'y')", "INSERT INTO b VALUES (6000, 'z')")
			log, logs = bufferLogger()
			applyLogged(t, narrow, dir, log)
			if n := len(consumeCommitted(t, name+".a")); n != 2006 {
				t.Errorf("a after it left: %d records, want 2006", n)
			}
			if !maps.Equal(materialize(consumeCommitted(t, name+".b")), tableState(t, db, "b")) {
				t.Errorf("b after a left: the topic differs from the table")
			}
			if !strings.Contains(logs.String(), "table "+name+".a is in the stored captured set but source.tables does not match it now") {
				t.Errorf("no warning of a leaving:\n%s", logs)
			}
		})
	}
}

// TestLcResnapshot: the state directory is lost, rows are deleted while no state exists,
// and a fresh start snapshots the tables again: the topic keeps the deleted keys. `ingest
// resnapshot` of the table (its request, state.RequestResnapshot) makes the next run
// snapshot it again and tombstone the keys it no longer has, so the materialised topic
// equals the table; the other table continues from its position (no record twice). A
// running pipeline takes a request within seconds.
func TestLcResnapshot(t *testing.T) {
	for _, c := range []struct{ name, sink string }{
		{"at-least-once", ""},
		{"exactly-once", "  sink.delivery-guarantee: exactly-once"},
	} {
		t.Run(c.name, func(t *testing.T) {
			name, db := testenv.Database(t)
			testenv.Exec(t, db, "CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(20))",
				"INSERT INTO a SELECT seq, CONCAT('v', seq) FROM seq_1_to_2000",
				"CREATE TABLE b (id INT PRIMARY KEY, v VARCHAR(20))",
				"INSERT INTO b VALUES (1,'b1'),(2,'b2')")
			def := definition(t, name, "", c.sink)
			cleanupTopics(t, name+".a", name+".b")
			dir := t.TempDir()
			applyUntilCaughtUp(t, def, dir)

			// The state is lost (--reset-state: directory and state topic) while rows are
			// deleted; the fresh start snapshots anew, and the topic keeps the deleted keys.
			testenv.Exec(t, db, "DELETE FROM a WHERE id <= 300")
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			err := Run(ctx, def, Options{StateDir: dir, UntilCaughtUp: true, ResetState: true})
			cancel()
			if err != nil {
				t.Fatalf("Run --reset-state: %v", err)
			}
			if got := materialize(consumeCommitted(t, name+".a")); len(got) != 2000 {
				t.Fatalf("after the fresh start the topic of a holds %d keys, want the 2000 of before", len(got))
			}
			ids, err := ResnapshotTables(def, []string{name + ".a"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ResnapshotTables(def, []string{"other.t"}); err == nil {
				t.Error("ResnapshotTables accepted a table that source.tables does not capture")
			}
			if err := state.RequestResnapshot(dir, ids); err != nil {
				t.Fatal(err)
			}
			testenv.Exec(t, db, "UPDATE a SET v = 'changed' WHERE id = 301", "INSERT INTO b VALUES (3,'b3')")
			bBefore := len(consumeCommitted(t, name+".b"))

			log, logs := bufferLogger()
			ctx, cancel = context.WithTimeout(context.Background(), 90*time.Second)
			err = Run(ctx, def, Options{StateDir: dir, UntilCaughtUp: true, Logger: log})
			cancel()
			if err != nil {
				t.Fatalf("Run: %v; log:\n%s", err, logs)
			}
			if got, want := materialize(consumeCommitted(t, name+".a")), tableState(t, db, "a"); !maps.Equal(got, want) {
				t.Errorf("a: the topic holds %d keys, the table %d rows", len(got), len(want))
			}
			if got, want := materialize(consumeCommitted(t, name+".b")), tableState(t, db, "b"); !maps.Equal(got, want) {
				t.Errorf("b: the topic holds %v, want %v", got, want)
			}
			if n := len(consumeCommitted(t, name+".b")); n != bBefore+1 {
				t.Errorf("b: %d records after the re-snapshot of a, want %d (its one new row): b was read again", n, bBefore+1)
			}
			if want := "re-snapshot of " + name + ".a: 300 tombstones written to " + name + ".a"; !strings.Contains(logs.String(), want) {
				t.Errorf("no line %q:\n%s", want, logs)
			}
			if left, err := state.ResnapshotRequested(dir); err != nil || len(left) != 0 {
				t.Errorf("the request is still there after the re-snapshot: %v %v", left, err)
			}

			// Asked again before any stream has passed the chunks of that re-snapshot (its
			// hand-off is still under way: --until-caught-up stopped at the position read at
			// its start, before the chunks' high watermarks): the new chunks replace the old.
			if err := state.RequestResnapshot(dir, ids); err != nil {
				t.Fatal(err)
			}
			testenv.Exec(t, db, "DELETE FROM a WHERE id = 303", "UPDATE a SET v = 'again' WHERE id = 304")
			log, logs = bufferLogger()
			ctx, cancel = context.WithTimeout(context.Background(), 90*time.Second)
			err = Run(ctx, def, Options{StateDir: dir, UntilCaughtUp: true, Logger: log})
			cancel()
			if err != nil {
				t.Fatalf("Run, the second re-snapshot: %v; log:\n%s", err, logs)
			}
			if got, want := materialize(consumeCommitted(t, name+".a")), tableState(t, db, "a"); !maps.Equal(got, want) {
				t.Errorf("a, after the second re-snapshot: the topic holds %d keys, the table %d rows", len(got), len(want))
			}

			// A running pipeline takes a request within seconds, and goes on streaming.
			log, logs = bufferLogger()
			run := runBackground(def, Options{StateDir: dir, Logger: log})
			defer run.stop()
			testenv.Exec(t, db, "INSERT INTO b VALUES (4,'b4')")
			waitTopic(t, name+".b", tableState(t, db, "b"), run)
			if err := state.RequestResnapshot(dir, ids); err != nil {
				t.Fatal(err)
			}
			waitLog(t, logs, "re-snapshot of "+name+".a: 0 tombstones written", "the running pipeline did not take the request")
			// Stopped at once, with no write since: the stream has not passed the chunks of
			// that re-snapshot, so their hand-off is stored still under way. Asked again, the
			// next run reads a whole again, and its new chunks replace the old ones.
			if err := run.stop(); err != nil {
				t.Fatalf("Run: %v; log:\n%s", err, logs)
			}
			if err := state.RequestResnapshot(dir, ids); err != nil {
				t.Fatal(err)
			}
			log, logs = bufferLogger()
			run = runBackground(def, Options{StateDir: dir, Logger: log})
			waitLog(t, logs, "re-snapshot of "+name+".a: 0 tombstones written", "the next run did not take the request")
			testenv.Exec(t, db, "DELETE FROM a WHERE id = 302", "INSERT INTO b VALUES (5,'b5')")
			waitTopic(t, name+".a", tableState(t, db, "a"), run)
			waitTopic(t, name+".b", tableState(t, db, "b"), run)
			if err := run.stop(); err != nil {
				t.Fatalf("Run: %v; log:\n%s", err, logs)
			}
		})
	}
}

// waitLog waits up to a minute for a line containing want in logs.
func waitLog(t *testing.T, logs *syncBuffer, want, fail string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("%s within a minute (no %q):\n%s", fail, want, logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestLcRenamedIn: a table of 100,000 rows renamed into source.tables while the pipeline
// streams under writes to another table. The table has rows the binlog does not hold: the
// pipeline snapshots it (it starts again from its stored position within seconds, and the
// table joins the captured set), so all its rows and its later changes reach Kafka, while
// the other table's versions never go backwards in its topic and none is lost.
func TestLcRenamedIn(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO a SELECT seq, '0' FROM seq_1_to_50",
		"CREATE TABLE staging (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO staging SELECT seq, CONCAT('s', seq) FROM seq_1_to_100000")
	def := definition(t, name, "  tables.exclude: "+name+".staging\n  scan.binlog.newly-added-table.enabled: true", "")
	cleanupTopics(t, name+".a", name+".big", name+".staging")
	log, logs := bufferLogger()
	run := runBackground(def, Options{StateDir: t.TempDir(), Logger: log})
	defer run.stop()
	waitTopic(t, name+".a", tableState(t, db, "a"), run)

	stop := make(chan struct{})
	writer := make(chan error, 1)
	go func() { // versions of a, one transaction each, until stopped
		for i := 0; ; i++ {
			select {
			case <-stop:
				writer <- nil
				return
			default:
			}
			if _, err := db.Exec("UPDATE a SET v = v + 1 WHERE id = ?", i%50+1); err != nil {
				writer <- err
				return
			}
		}
	}()
	time.Sleep(500 * time.Millisecond)
	testenv.Exec(t, db, "RENAME TABLE staging TO big")
	time.Sleep(200 * time.Millisecond)
	testenv.Exec(t, db, "INSERT INTO big VALUES (100001, 'after')", "UPDATE big SET v = 'changed' WHERE id = 7",
		"DELETE FROM big WHERE id = 8")
	waitTopic(t, name+".big", tableState(t, db, "big"), run)
	close(stop)
	if err := <-writer; err != nil {
		t.Fatal(err)
	}
	waitTopic(t, name+".a", tableState(t, db, "a"), run)
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v; log:\n%s", err, logs)
	}
	last := map[string]int{}
	for _, r := range consumeCommitted(t, name+".a") {
		var row struct{ V string }
		if err := json.Unmarshal([]byte(r.value), &row); err != nil {
			t.Fatalf("a: %s: %v", r.value, err)
		}
		v, _ := strconv.Atoi(row.V)
		if v < last[r.key] {
			t.Fatalf("a: key %s went back from version %d to %d", r.key, last[r.key], v)
		}
		last[r.key] = v
	}
	if want := "table " + name + ".big was renamed into source.tables"; !strings.Contains(logs.String(), want) {
		t.Errorf("no line %q:\n%s", want, logs)
	}
}

// TestLcRenamedBackWhileStopped: a captured table renamed out of source.tables (its topic
// gets tombstones), and back in while the pipeline is stopped. At the next start the stored
// schema history knows the name held no table at the stored position, so the RENAME back
// is a table renamed in (information_schema, which shows the table again, must not fill the
// name in at the position, or the RENAME would look like a swap onto a live table): it is
// snapshotted, and the topic ends equal to the table.
func TestLcRenamedBackWhileStopped(t *testing.T) {
	for _, c := range []struct{ name, sink string }{
		{"at-least-once", ""},
		{"exactly-once", "  sink.delivery-guarantee: exactly-once"},
	} {
		t.Run(c.name, func(t *testing.T) {
			name, db := testenv.Database(t)
			testenv.Exec(t, db, "CREATE TABLE s (id INT PRIMARY KEY, v VARCHAR(20))",
				"INSERT INTO s SELECT seq, CONCAT('v', seq) FROM seq_1_to_50",
				"CREATE TABLE o (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO o VALUES (1, 'o1')")
			def := definition(t, name, "  tables.exclude: "+name+".out_s", c.sink)
			cleanupTopics(t, name+".s", name+".o")
			dir := t.TempDir()
			applyUntilCaughtUp(t, def, dir)
			testenv.Exec(t, db, "RENAME TABLE s TO out_s", "INSERT INTO o VALUES (2, 'o2')")
			applyUntilCaughtUp(t, def, dir)
			if got := materialize(consumeCommitted(t, name+".s")); len(got) != 0 {
				t.Fatalf("after the rename out the topic of s holds %d keys, want none", len(got))
			}
			testenv.Exec(t, db, "RENAME TABLE out_s TO s", "UPDATE s SET v = 'back' WHERE id = 7", "INSERT INTO o VALUES (3, 'o3')")

			log, logs := bufferLogger()
			run := runBackground(def, Options{StateDir: dir, Logger: log})
			defer run.stop()
			waitTopic(t, name+".s", tableState(t, db, "s"), run)
			waitTopic(t, name+".o", tableState(t, db, "o"), run)
			if err := run.stop(); err != nil {
				t.Fatalf("Run: %v; log:\n%s", err, logs)
			}
			if want := "table " + name + ".s was renamed into source.tables"; !strings.Contains(logs.String(), want) {
				t.Errorf("no line %q:\n%s", want, logs)
			}
		})
	}
}
