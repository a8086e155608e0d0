//go:build integration

package runner

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/schemachange"
)

// runUntilCaughtUp runs the pipeline as `ingest apply --until-caught-up` does and returns
// its error.
func runUntilCaughtUp(t *testing.T, def *pipeline.Definition, stateDir string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	err := Run(ctx, def, Options{StateDir: stateDir, UntilCaughtUp: true})
	if ctx.Err() != nil {
		t.Fatal("Run did not stop by itself")
	}
	return err
}

// TestSchemaChangeBehaviors runs the same DDL through each behaviour, restarting between
// the statements (so IGNORE's start and LENIENT's widened shape must come from the state),
// and checks the values the topic holds: the snapshot's row, rows after ADD COLUMN, and rows
// after DROP COLUMN and RENAME COLUMN.
func TestSchemaChangeBehaviors(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		ignored := map[string]string{
			`{"id":1}`: `{"id":1,"a":null,"b":null}`,
			`{"id":2}`: `{"id":2,"a":"a2","b":"b2"}`,
			`{"id":3}`: `{"id":3,"a":null,"b":null}`,
		}
		tests := []struct {
			behavior pipeline.SchemaChangeBehavior
			want     map[string]string
			sink     string // extra sink options
		}{
			{pipeline.SchemaEvolve, map[string]string{
				`{"id":1}`: `{"id":1,"bb":"b1","c":"c1"}`,
				`{"id":2}`: `{"id":2,"a":"a2","b":"b2","c":"c2"}`,
				`{"id":3}`: `{"id":3,"bb":"bb3","c":"c3"}`,
			}, ""},
			{pipeline.SchemaTryEvolve, map[string]string{
				`{"id":1}`: `{"id":1,"bb":"b1","c":"c1"}`,
				`{"id":2}`: `{"id":2,"a":"a2","b":"b2","c":"c2"}`,
				`{"id":3}`: `{"id":3,"bb":"bb3","c":"c3"}`,
			}, ""},
			{pipeline.SchemaLenient, map[string]string{
				`{"id":1}`: `{"id":1,"a":null,"b":null,"c":"c1","bb":"b1"}`,
				`{"id":2}`: `{"id":2,"a":"a2","b":"b2","c":"c2"}`,
				`{"id":3}`: `{"id":3,"a":null,"b":null,"c":"c3","bb":"bb3"}`,
			}, ""},
			{pipeline.SchemaIgnore, ignored, ""},
			// With exactly-once the start travels in the state topic.
			{pipeline.SchemaIgnore, ignored, "  sink.delivery-guarantee: exactly-once"},
		}
		for _, tt := range tests {
			t.Run(string(tt.behavior)+tt.sink, func(t *testing.T) {
				name, db := srv.Database(t)
				testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10), b VARCHAR(10))",
					"INSERT INTO t VALUES (1,'a1','b1')")
				def := definitionOn(t, srv, name, "", tt.sink)
				def.Pipeline.SchemaChangeBehavior = tt.behavior
				topic := name + ".t"
				dir := t.TempDir()
				t.Cleanup(func() { _, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), topic) })

				applyUntilCaughtUp(t, def, dir) // the snapshot: row 1 in the start's shape
				testenv.Exec(t, db, "ALTER TABLE t ADD COLUMN c VARCHAR(10)", "INSERT INTO t VALUES (2,'a2','b2','c2')")
				applyUntilCaughtUp(t, def, dir)
				testenv.Exec(t, db, "ALTER TABLE t DROP COLUMN a", "ALTER TABLE t RENAME COLUMN b TO bb",
					"INSERT INTO t VALUES (3,'bb3','c3')", "UPDATE t SET c='c1' WHERE id=1")
				applyUntilCaughtUp(t, def, dir)

				recs := consumeAll
				if tt.sink != "" {
					recs = consumeCommitted
				}
				if got := materialize(recs(t, topic)); !maps.Equal(got, tt.want) {
					t.Fatalf("materialised topic:\n got %v\nwant %v", got, tt.want)
				}
			})
		}
	})
}

// TestSchemaChangeException: under EXCEPTION a DDL of a captured table stops the run with
// its statement before anything of it is written, and again on every rerun; a DDL of a
// table that is not captured does not.
func TestSchemaChangeException(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10))", "CREATE TABLE skipped (id INT PRIMARY KEY)",
		"INSERT INTO t VALUES (1,'a1')")
	def := definition(t, name, "  tables.exclude: "+name+".skipped", "")
	def.Pipeline.SchemaChangeBehavior = pipeline.SchemaException
	topic := name + ".t"
	dir := t.TempDir()
	t.Cleanup(func() { _, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), topic) })

	if err := runUntilCaughtUp(t, def, dir); err != nil {
		t.Fatalf("first run: %v", err)
	}
	const alter = "ALTER TABLE t ADD COLUMN c VARCHAR(10)"
	testenv.Exec(t, db, "ALTER TABLE skipped ADD COLUMN x INT", "INSERT INTO t VALUES (2,'a2')",
		alter, "INSERT INTO t VALUES (3,'a3','c3')")
	for run := 2; run <= 3; run++ {
		err := runUntilCaughtUp(t, def, dir)
		var refused *schemachange.RefusedError
		if !errors.As(err, &refused) || refused.Statement != alter || refused.Table.Table != "t" {
			t.Fatalf("run %d: %v, want the refusal of %q", run, err, alter)
		}
		if !strings.Contains(err.Error(), alter) || !strings.Contains(err.Error(), "EXCEPTION") || refused.Position == "" {
			t.Errorf("run %d: the error does not name the statement, the behaviour and the position: %v", run, err)
		}
		want := map[string]string{`{"id":1}`: `{"id":1,"a":"a1"}`, `{"id":2}`: `{"id":2,"a":"a2"}`}
		recs := consumeAll(t, topic)
		if got := materialize(recs); !maps.Equal(got, want) || len(recs) != 2 {
			t.Fatalf("run %d: records %v, want rows 1 and 2 once each, nothing of the new shape", run, recs)
		}
	}

	// The user lets the change through: the run goes on from before the statement.
	def.Pipeline.SchemaChangeBehavior = pipeline.SchemaEvolve
	if err := runUntilCaughtUp(t, def, dir); err != nil {
		t.Fatalf("run with EVOLVE: %v", err)
	}
	if got := materialize(consumeAll(t, topic))[`{"id":3}`]; got != `{"id":3,"a":"a3","c":"c3"}` {
		t.Fatalf("row 3 after switching to EVOLVE: %s", got)
	}
}

// TestSchemaChangeExceptionStatements: which statements stop an EXCEPTION pipeline. Each
// case starts a pipeline (from the binlog's end: no row of t has been seen) on the tables
// of a database but skipped, applies the statement, and runs until caught up. The server
// may log a statement with quotes and a comment (DROP TABLE `t` /* generated by server */).
func TestSchemaChangeExceptionStatements(t *testing.T) {
	tests := []struct {
		stmt string
		stop bool
	}{
		{"ALTER TABLE t MODIFY a VARCHAR(20)", true},
		{"ALTER TABLE t RENAME COLUMN a TO b", true},
		{"DROP TABLE t", true},
		{"TRUNCATE TABLE t", true},
		{"RENAME TABLE t TO gone", true},
		{"ALTER TABLE t ADD INDEX (a)", false}, // no column, type or key changes
		{"CREATE TABLE u (id INT PRIMARY KEY)", false},
		{"ALTER TABLE skipped ADD COLUMN x INT", false},
		{"TRUNCATE TABLE skipped", false},
	}
	for _, tt := range tests {
		t.Run(tt.stmt, func(t *testing.T) {
			name, db := testenv.Database(t)
			testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10))", "CREATE TABLE skipped (id INT PRIMARY KEY)",
				"INSERT INTO t VALUES (1,'a1')")
			def := definition(t, name, "  tables.exclude: "+name+".skipped\n  scan.startup.mode: latest-offset", "")
			def.Pipeline.SchemaChangeBehavior = pipeline.SchemaException
			dir := t.TempDir()
			if err := runUntilCaughtUp(t, def, dir); err != nil {
				t.Fatalf("first run: %v", err)
			}
			testenv.Exec(t, db, tt.stmt)
			err := runUntilCaughtUp(t, def, dir)
			var refused *schemachange.RefusedError
			switch {
			case tt.stop && (!errors.As(err, &refused) || !strings.HasPrefix(strings.ReplaceAll(refused.Statement, "`", ""), tt.stmt)):
				t.Fatalf("%v, want the refusal of %q", err, tt.stmt)
			case !tt.stop && err != nil:
				t.Fatalf("%v, want no stop", err)
			}
		})
	}
}

// TestSchemaChangeKeyChange: under LENIENT and IGNORE the record key stays the start's, so a
// statement that changes the key columns stops the run; EVOLVE follows it.
func TestSchemaChangeKeyChange(t *testing.T) {
	const stmt = "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (id, a)"
	for _, behavior := range []pipeline.SchemaChangeBehavior{pipeline.SchemaLenient, pipeline.SchemaIgnore, pipeline.SchemaEvolve} {
		t.Run(string(behavior), func(t *testing.T) {
			name, db := testenv.Database(t)
			testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10) NOT NULL)")
			def := definition(t, name, "  scan.startup.mode: latest-offset", "")
			def.Pipeline.SchemaChangeBehavior = behavior
			dir := t.TempDir()
			if err := runUntilCaughtUp(t, def, dir); err != nil {
				t.Fatalf("first run: %v", err)
			}
			testenv.Exec(t, db, stmt)
			err := runUntilCaughtUp(t, def, dir)
			var changed *schemachange.KeyChangedError
			if behavior == pipeline.SchemaEvolve {
				if err != nil {
					t.Fatalf("EVOLVE: %v", err)
				}
				return
			}
			if !errors.As(err, &changed) || !strings.Contains(err.Error(), "from (id) to (id, a)") || changed.Statement != stmt {
				t.Fatalf("%v, want the key change refused", err)
			}
		})
	}
}
