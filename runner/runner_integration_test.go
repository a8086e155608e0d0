//go:build integration

package runner

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/secrets"
)

// definition loads a pipeline for database db of the primary server from YAML, with the test
// services filled in.
func definition(t *testing.T, db, extraSource, extraSink string) *pipeline.Definition {
	t.Helper()
	return definitionOn(t, testenv.Primary(), db, extraSource, extraSink)
}

// definitionOn is definition for database db of srv.
func definitionOn(t *testing.T, srv testenv.Server, db, extraSource, extraSink string) *pipeline.Definition {
	t.Helper()
	u, p := testenv.CDCUser()
	host, port := srv.Host()
	yaml := fmt.Sprintf(`source:
  type: mysql
  hostname: %s
  port: %s
  username: %s
  password: ${secret_values.pw}
  tables: %s.\.*
  heartbeat.interval: 1s
%s
sink:
  type: upsert-kafka
  properties.bootstrap.servers: %s
  sink.add-tableId-to-header-enabled: true
%s
pipeline:
  name: %s
`, host, port, u, db, extraSource, testenv.KafkaAddr(), extraSink, db)
	res := secrets.NewResolver([]secrets.Provider{&secrets.Map{Values: map[string]string{"pw": p}}}, nil)
	def, err := pipeline.Parse("test.yaml", []byte(yaml), pipeline.LoadOptions{Resolver: res})
	if err != nil {
		t.Fatalf("pipeline:\n%s\n%v", yaml, err)
	}
	return def
}

func gtidPos(t *testing.T, db *sql.DB) string {
	t.Helper()
	var pos string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	return pos
}

// applyUntilCaughtUp runs the pipeline the way `ingest apply --until-caught-up` does.
func applyUntilCaughtUp(t *testing.T, def *pipeline.Definition, stateDir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := Run(ctx, def, Options{StateDir: stateDir, UntilCaughtUp: true}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Run did not stop by itself")
	}
}

// record is one consumed record.
type record struct {
	key, value string
	tombstone  bool
	headers    string
}

// consumeAll reads every record of topic from the start to its current end.
func consumeAll(t *testing.T, topic string) []record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(testenv.Kafka(t))
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	want := int64(0)
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	cl := testenv.Kafka(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var out []record
	for int64(len(out)) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s", len(out), want, topic)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var hs []string
			for _, h := range r.Headers {
				hs = append(hs, h.Key+"="+string(h.Value))
			}
			out = append(out, record{key: string(r.Key), value: string(r.Value), tombstone: r.Value == nil, headers: strings.Join(hs, ",")})
		})
	}
	return out
}

func materialize(recs []record) map[string]string {
	m := map[string]string{}
	for _, r := range recs {
		if r.tombstone {
			delete(m, r.key)
		} else {
			m[r.key] = r.value
		}
	}
	return m
}

func TestApplyStreamsChanges(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), n DECIMAL(10,2))")
		start := gtidPos(t, db)
		def := definitionOn(t, srv, name, "  scan.startup.mode: specific-offset\n  scan.startup.specific-offset.gtid-set: "+start, "")
		topic := name + ".t"
		stateDir := t.TempDir()
		t.Cleanup(func() { _, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), topic) })

		testenv.Exec(t, db,
			"INSERT INTO t VALUES (1,'a',1.50),(2,'b',2.00),(3,'c',3.25)",
			"UPDATE t SET v='a2' WHERE id=1",
			"DELETE FROM t WHERE id=2",
			"UPDATE t SET id=30 WHERE id=3") // a primary-key change: tombstone, then upsert
		applyUntilCaughtUp(t, def, stateDir)

		recs := consumeAll(t, topic)
		want := map[string]string{
			`{"id":1}`:  `{"id":1,"v":"a2","n":1.50}`,
			`{"id":30}`: `{"id":30,"v":"c","n":3.25}`,
		}
		if got := materialize(recs); !maps.Equal(got, want) {
			t.Fatalf("materialised topic:\n got %v\nwant %v\nrecords %v", got, want, recs)
		}
		if h := recs[0].headers; h != "namespace=,schemaName="+name+",tableName=t" {
			t.Errorf("headers %q", h)
		}
		var sawTombstone3 bool
		for _, r := range recs {
			sawTombstone3 = sawTombstone3 || (r.key == `{"id":3}` && r.tombstone)
		}
		if !sawTombstone3 {
			t.Errorf("no tombstone for the old key of the primary-key change: %v", recs)
		}

		// A second run with no changes in between writes nothing.
		n := len(recs)
		applyUntilCaughtUp(t, def, stateDir)
		if again := consumeAll(t, topic); len(again) != n {
			t.Fatalf("second run wrote %d records, want none", len(again)-n)
		}

		// Later changes continue from the stored position, without repeating anything.
		testenv.Exec(t, db, "INSERT INTO t VALUES (4,'d',4.00)")
		applyUntilCaughtUp(t, def, stateDir)
		recs = consumeAll(t, topic)
		if len(recs) != n+1 || recs[n].key != `{"id":4}` {
			t.Fatalf("third run: records after the second run %v, want only id 4", recs[n:])
		}
	})
}

func TestSecondApplyIsRefused(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)")
	def := definition(t, name, "  scan.startup.mode: latest-offset", "")
	dir := t.TempDir()
	r, err := newRun(def, Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.store.Close()
	err = Run(context.Background(), def, Options{StateDir: dir})
	if err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("second Run on one state: %v, want a lock error", err)
	}
}

// tableState renders the rows of db.t as the topic must hold them: key {"id":n}, value
// {"id":n,"v":"..."}.
func tableState(t *testing.T, db *sql.DB, table string) map[string]string {
	t.Helper()
	rows, err := db.Query("SELECT id, v FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var id int
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		m[fmt.Sprintf(`{"id":%d}`, id)] = fmt.Sprintf(`{"id":%d,"v":%q}`, id, v)
	}
	return m
}

func TestApplySnapshotThenStream(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
		var values []string
		for i := 1; i <= 2000; i++ {
			values = append(values, fmt.Sprintf("(%d,'v%d')", i, i))
		}
		testenv.Exec(t, db, "INSERT INTO t VALUES "+strings.Join(values, ","))
		def := definitionOn(t, srv, name, "  scan.incremental.snapshot.chunk.size: 128", "")
		def.Pipeline.Parallelism = 2
		topic := name + ".t"
		t.Cleanup(func() { _, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), topic) })
		stateDir := t.TempDir()

		applyUntilCaughtUp(t, def, stateDir)
		recs := consumeAll(t, topic)
		if len(recs) != 2000 {
			t.Errorf("snapshot wrote %d records, want 2000", len(recs))
		}
		if got, want := materialize(recs), tableState(t, db, "t"); !maps.Equal(got, want) {
			t.Fatalf("after the snapshot the topic holds %d keys, the table %d rows", len(got), len(want))
		}

		testenv.Exec(t, db, "UPDATE t SET v='changed' WHERE id <= 10", "DELETE FROM t WHERE id > 1990",
			"UPDATE t SET id = 5000 WHERE id = 1000", "INSERT INTO t VALUES (3000,'new')")
		applyUntilCaughtUp(t, def, stateDir)
		if got, want := materialize(consumeAll(t, topic)), tableState(t, db, "t"); !maps.Equal(got, want) {
			t.Fatalf("after streaming the topic holds %d keys, the table %d rows", len(got), len(want))
		}
		n := len(consumeAll(t, topic))
		applyUntilCaughtUp(t, def, stateDir)
		if again := len(consumeAll(t, topic)); again != n {
			t.Fatalf("a run with nothing new wrote %d records", again-n)
		}
	})
}

// TestApplyKeepsSchemaHistory changes a column's type between two runs: the second run reads
// the row written before the DDL with the shape of its time (TINYINT(1), a boolean) thanks to
// the schema history stored with the position, and the row written after it as an INT.
func TestApplyKeepsSchemaHistory(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		tests := []struct {
			name      string
			sinkExtra string
			deleteDir bool // the state directory is deleted between the runs: the history comes from Kafka
		}{
			{"at-least-once", "", false},
			{"at-least-once, state directory deleted", "", true},
			{"exactly-once", "  sink.delivery-guarantee: exactly-once", false},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				name, db := srv.Database(t)
				testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, flag TINYINT(1))")
				def := definitionOn(t, srv, name, "", tc.sinkExtra)
				topic := name + ".t"
				t.Cleanup(func() { _, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), topic) })
				stateDir := t.TempDir()
				applyUntilCaughtUp(t, def, stateDir) // empty table: the snapshot, then a stored position

				testenv.Exec(t, db, "INSERT INTO t VALUES (1, 1)", "ALTER TABLE t MODIFY flag INT", "INSERT INTO t VALUES (2, 5)")
				if tc.deleteDir {
					if err := os.RemoveAll(stateDir); err != nil {
						t.Fatal(err)
					}
				}
				applyUntilCaughtUp(t, def, stateDir)
				want := map[string]string{`{"id":1}`: `{"id":1,"flag":true}`, `{"id":2}`: `{"id":2,"flag":5}`}
				got := map[string]string{}
				readTopic(t, topic, func(r *kgo.Record) { got[string(r.Key)] = string(r.Value) })
				if !maps.Equal(got, want) {
					t.Fatalf("got %v, want %v", got, want)
				}
			})
		}
	})
}

// TestApplySnapshotUCATextKey snapshots, through the runner, a table keyed by text in MariaDB
// 11's default collation (utf8mb4_uca1400_ai_ci, where "ß" = "ss" = "SS") while a writer
// changes values and keys, one row or forty at a time; the hand-off then places the
// binlog's keys among the chunks by the server's weight strings. After a second run has caught up, the topic must hold the
// table exactly.
func TestApplySnapshotUCATextKey(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		const size = 6000
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (k VARCHAR(20) COLLATE utf8mb4_uca1400_ai_ci PRIMARY KEY, v INT NOT NULL)",
			fmt.Sprintf("INSERT INTO t SELECT CONCAT(ELT(seq %% 3 + 1, 'ß', 'ss', 'SS'), LPAD(seq, 6, '0')), 0 FROM seq_1_to_%d", size))
		def := definitionOn(t, srv, name, "  scan.incremental.snapshot.chunk.size: 64", "")
		def.Pipeline.Parallelism = 2
		topic := name + ".t"
		t.Cleanup(func() { _, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), topic) })
		stateDir := t.TempDir()

		stop, done := make(chan struct{}), make(chan int)
		go func() {
			writes := 0
			defer func() { done <- writes }()
			for i := 1; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := i*7919%size + 1
				key := fmt.Sprintf("%s%06d", []string{"ß", "ss", "SS"}[id%3], id)
				moved := fmt.Sprintf("%s%06d", []string{"SS", "ß", "ss"}[i%3], size+i)
				q, args := "UPDATE t SET v = v + 1 WHERE k = ?", []any{key}
				switch {
				case i%10 == 0: // a rows event of many rows: its keys are weighed in one query
					q, args = "UPDATE t SET v = v + 1 WHERE v < 3 AND k >= ? ORDER BY k LIMIT 40", []any{key}
				case i%5 == 0:
					q, args = "UPDATE t SET k = ?, v = v + 1 WHERE k = ?", []any{moved, key}
				}
				if _, err := db.Exec(q, args...); err != nil {
					t.Error(err)
					return
				}
				writes++
			}
		}()
		applyUntilCaughtUp(t, def, stateDir)
		close(stop)
		if writes := <-done; writes < 100 {
			t.Logf("only %d writes during the first run", writes)
		}
		applyUntilCaughtUp(t, def, stateDir)

		rows, err := db.Query("SELECT k, v FROM t")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		want := map[string]string{}
		for rows.Next() {
			var k string
			var v int
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			want[fmt.Sprintf(`{"k":%q}`, k)] = fmt.Sprintf(`{"k":%q,"v":%d}`, k, v)
		}
		got := materialize(consumeAll(t, topic))
		if !maps.Equal(got, want) {
			missing, wrong := 0, 0
			for k, v := range want {
				if g, ok := got[k]; !ok {
					missing++
				} else if g != v {
					wrong++
				}
			}
			t.Fatalf("the topic holds %d keys, the table %d rows: %d missing, %d with another value, %d extra",
				len(got), len(want), missing, wrong, len(got)+missing-len(want))
		}
	})
}
