//go:build integration

package cdc

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
)

// startSource is start with access to the Source (its schema history) and an optional event
// hook.
func startSource(t *testing.T, cfg Config, hook func(*replication.BinlogEvent)) (*Source, *running) {
	t.Helper()
	src, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	src.onEvent = hook
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{out: make(chan change.Batch, 16), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- src.Run(ctx, r.out) }()
	t.Cleanup(func() { r.stop(t) })
	return src, r
}

// waitHistory waits until src has read the shapes at its start position.
func waitHistory(t *testing.T, src *Source) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); src.SchemaHistory() == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the source read no initial schema in time")
		}
	}
}

// stripRowMetadata turns a TABLE_MAP event into what binlog_row_metadata=NO_LOG writes: no
// column names, signedness, character sets, ENUM/SET labels nor primary key. The global
// setting cannot be changed for one test (MariaDB has no session scope for it, and other
// tests stream from the same server), so the stream is shown the events the setting would
// have produced.
func stripRowMetadata(ev *replication.BinlogEvent) {
	tm, ok := ev.Event.(*replication.TableMapEvent)
	if !ok {
		return
	}
	bare := &replication.TableMapEvent{TableID: tm.TableID, Flags: tm.Flags, Schema: tm.Schema, Table: tm.Table,
		ColumnCount: tm.ColumnCount, ColumnType: tm.ColumnType, ColumnMeta: tm.ColumnMeta, NullBitmap: tm.NullBitmap}
	ev.Event = bare
}

var versionNumber = regexp.MustCompile(` v[0-9]+\b`)

// renderPlain renders changes without schema version numbers, which depend on where a
// stream started.
func renderPlain(changes []change.Change) string {
	return versionNumber.ReplaceAllString(render(changes), " v·")
}

// collected is the changes of a stream up to a predicate, with the End position after each.
type collected struct {
	changes []change.Change
	ends    []string // ends[i]: the End position of the transaction of changes[i]
}

func collect(t *testing.T, r *running, pred func(change.Change) bool) collected {
	t.Helper()
	var c collected
	found := false
	for !found {
		b := r.next(t, 20*time.Second)
		for _, ch := range b.Changes {
			c.changes = append(c.changes, ch)
			found = found || pred(ch)
		}
		if b.End {
			for len(c.ends) < len(c.changes) {
				c.ends = append(c.ends, string(b.Position))
			}
		} else {
			found = false // up to the End batch of the transaction
		}
	}
	return c
}

// TestDDLHistoryRestart stops a stream, runs a series of DDL (ADD COLUMN … AFTER, DROP
// COLUMN, RENAME COLUMN, MODIFY TINYINT(1) → INT, ADD a JSON column, a JSON check on an
// existing column) with row changes between them, and restarts from the stored position with
// the stored schema history: every event renders with the columns and facts of its time.
// Then it restarts from a position between the DDL with a history taken after all of them
// (a history newer than its position), and with the binlog's row metadata withheld (as
// binlog_row_metadata=NO_LOG would write it): both render the same events alike.
func TestDDLHistoryRestart(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), flag TINYINT(1), doc LONGTEXT, "+
			"u BIGINT UNSIGNED, e ENUM('x','y'), l VARCHAR(8) CHARACTER SET latin1)")
		cfg := testConfig(srv, name)
		cfg.Startup, cfg.StartPosition = StartSpecific, gtidPos(t, db)
		src, r := startSource(t, cfg, nil)
		testenv.Exec(t, db, `INSERT INTO t SET id=1, a=10, b='one', flag=1, doc='{"a": 1}', u=18446744073709551615, e='y', l='café'`)
		first := collect(t, r, isRow)
		stored, pos := src.SchemaHistory(), first.ends[len(first.ends)-1]
		if err := r.stop(t); err != nil {
			t.Fatal(err)
		}

		testenv.Exec(t, db,
			`INSERT INTO t SET id=2, a=20, b='two', flag=0, doc='[2]'`,
			"ALTER TABLE t ADD COLUMN c DATE AFTER id",
			`INSERT INTO t SET id=3, c='2024-01-03', a=30, b='three', flag=1`,
			"UPDATE t SET flag=0 WHERE id=1",
			"ALTER TABLE t DROP COLUMN a",
			`INSERT INTO t SET id=4, b='four', flag=1, e='x', l='naïve'`,
			"ALTER TABLE t RENAME COLUMN b TO bee",
			`INSERT INTO t SET id=5, c='2024-01-05', bee='five', flag=1`,
			"ALTER TABLE t MODIFY flag INT",
			`INSERT INTO t SET id=6, bee='six', flag=7`,
			"ALTER TABLE t ADD COLUMN j JSON AFTER bee",
			`INSERT INTO t SET id=7, bee='seven', j='{"k": [1, 2]}', flag=1`,
			"ALTER TABLE t ADD CONSTRAINT doc_json CHECK (json_valid(doc))",
			`INSERT INTO t SET id=8, bee='eight', doc='{"d": true}'`,
			"DELETE FROM t WHERE id=2",
		)
		isLast := func(c change.Change) bool { return c.Op == change.Delete }

		cfg = testConfig(srv, name)
		cfg.Position, _ = binlogpos.ParsePosition(pos)
		cfg.SchemaHistory = stored
		src2, r2 := startSource(t, cfg, nil)
		all := collect(t, r2, isLast)
		later := src2.SchemaHistory()
		golden(t, "ddl_history.golden", renderPlain(all.changes))

		// The stream between the DROP COLUMN and the RENAME COLUMN, from a history taken after
		// every DDL.
		mid := -1
		for i, c := range all.changes {
			if c.Op == change.Insert && schema.DescribeValue(c.After[0]) == "int:4" {
				mid = i
			}
		}
		if mid < 0 {
			t.Fatal("no insert of row 4")
		}
		cfg = testConfig(srv, name)
		cfg.Position, _ = binlogpos.ParsePosition(all.ends[mid])
		cfg.SchemaHistory = later
		_, r3 := startSource(t, cfg, nil)
		if got, want := renderPlain(collect(t, r3, isLast).changes), renderPlain(all.changes[mid+1:]); got != want {
			t.Errorf("from %s with a later history:\n got:\n%s\nwant:\n%s", all.ends[mid], got, want)
		}

		// No row metadata: names, signedness, character sets, labels and keys from the history.
		cfg = testConfig(srv, name)
		cfg.Position, _ = binlogpos.ParsePosition(pos)
		cfg.SchemaHistory = stored
		_, r4 := startSource(t, cfg, stripRowMetadata)
		if got, want := renderPlain(collect(t, r4, isLast).changes), renderPlain(all.changes); got != want {
			t.Errorf("without row metadata:\n got:\n%s\nwant:\n%s", got, want)
		}
	})
}

// TestNoMetadataWithoutHistory: without names in the binlog and without a stored history,
// a table whose shape changed since the start position fails with a clear error instead of
// decoding with the wrong columns.
func TestNoMetadataWithoutHistory(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT)")
		start := gtidPos(t, db)
		testenv.Exec(t, db, "INSERT INTO t VALUES (1, 10)", "ALTER TABLE t ADD COLUMN b VARCHAR(3)")
		cfg := testConfig(srv, name)
		cfg.Startup, cfg.StartPosition = StartSpecific, start
		src, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		src.onEvent = stripRowMetadata
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err = src.Run(ctx, make(chan change.Batch, 16))
		if err == nil || !strings.Contains(err.Error(), "binlog_row_metadata") || !strings.Contains(err.Error(), "schema history") {
			t.Fatalf("got %v, want an error naming binlog_row_metadata and the schema history", err)
		}
		t.Log(err)
	})
}
