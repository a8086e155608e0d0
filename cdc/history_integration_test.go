//go:build integration

package cdc

import (
	"context"
	"fmt"
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

// TestHistoryMatchesInformationSchema applies DDL to the history's shapes and compares each
// step with what the server's information_schema says after running it.
func TestHistoryMatchesInformationSchema(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		loader := sqlInfo{db: db, mariaDB: true}
		env := ddlEnv{mariaDB: true, intWidths: true, dbCharset: func(d string) string {
			cs, err := loader.dbCharset(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			return cs
		}}
		shapes := memShapes{}
		steps := []string{
			`CREATE TABLE t (a SERIAL, b BOOL, c TEXT(100), d LONG VARCHAR, e NATIONAL VARCHAR(10), f REAL, g FLOAT(30),
		h DEC(5,2), i NUMERIC, j INTEGER, k INT1, l MIDDLEINT, m VARCHAR(10) BINARY, n VARCHAR(5) CHARACTER SET binary,
		o TEXT COLLATE latin1_bin, p BOOLEAN, q FLOAT(5), r DOUBLE(10,2) UNSIGNED, s TINYTEXT CHARSET utf8, t LONG,
		u BIT(7), v ENUM('x','y''z') CHARACTER SET latin1, w YEAR(4), y LONGBLOB, z MEDIUMINT UNSIGNED ZEROFILL,
		aa DATETIME(6), ab TIMESTAMP NULL, ad BINARY, ae VARBINARY(3), af CHAR(3) CHARACTER SET ascii, ag INT(3),
		ah DECIMAL(7), ai JSON, aj GEOMETRY, ak POINT, al UUID, am INET6, an TINYINT UNSIGNED, ao SMALLINT, ap BIGINT,
		aq TIME(3), ar DATE, as1 SET('a','b'), at1 FLOAT(7,3), au DECIMAL(10,2) UNSIGNED, av TINYBLOB, aw MEDIUMBLOB,
		ax BLOB, ay CHAR(5), az VARCHAR(7) CHARACTER SET gbk, ba BIT, bb ENUM('é'), bd TEXT(1000) CHARACTER SET latin1,
		be VARCHAR(3) CHARACTER SET utf8mb4 COLLATE utf8mb4_uca1400_ai_ci, bf VARCHAR(4) CHARACTER SET cp1251,
		bg CHAR(2) CHARACTER SET ucs2, bh LONGTEXT, CONSTRAINT bh_json CHECK (json_valid(bh)))`,
			"ALTER TABLE t ADD COLUMN c1 DATE AFTER a, ADD c2 INT FIRST, DROP COLUMN d, RENAME COLUMN e TO e2",
			"ALTER TABLE t MODIFY b INT, CHANGE f f2 DECIMAL(9,3) AFTER a, MODIFY ai LONGTEXT",
			"ALTER TABLE t ADD COLUMN IF NOT EXISTS b TINYINT, DROP COLUMN IF EXISTS nope, ADD COLUMN IF NOT EXISTS bi INT",
			"ALTER TABLE t RENAME COLUMN bh TO bh2",
			"ALTER TABLE t MODIFY bh2 MEDIUMTEXT, ADD COLUMN nv NCHAR(3) AFTER c, ADD nn NATIONAL CHARACTER VARYING(4), ADD nc NCHAR",
			"ALTER TABLE t DROP CONSTRAINT bh_json",
			"ALTER TABLE t DEFAULT CHARSET latin1, ADD COLUMN bj VARCHAR(3), ADD bk ENUM('a','bb')",
			"ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4",
			"ALTER TABLE t ADD PRIMARY KEY (c2, a)",
			"ALTER TABLE t DROP PRIMARY KEY, ADD CONSTRAINT PRIMARY KEY (a)",
			"ALTER TABLE t ADD COLUMN cm1 INT NOT NULL COMMENT 'it''s a “comment”', MODIFY bj VARCHAR(3) NOT NULL DEFAULT 'x' COMMENT 'bj', MODIFY c1 DATE NULL",
			"CREATE OR REPLACE TABLE t (id INT UNSIGNED PRIMARY KEY, g POINT, j JSON, x VARCHAR(3) CHARACTER SET koi8r) DEFAULT CHARSET=cp1250",
			"ALTER ONLINE TABLE t ADD COLUMN y CHAR(2), MODIFY j JSON CHECK (json_valid(j))",
			"ALTER TABLE t CONVERT TO CHARACTER SET ucs2",
		}
		id := change.TableID{DB: name, Table: "t"}
		for i, q := range steps {
			testenv.Exec(t, db, q)
			res := applyDDL(name, q, shapes, env)
			if len(res.reread) > 0 || res.all {
				t.Fatalf("step %d: read back %v: %v", i, res.reread, res.problem)
			}
			for _, u := range res.updates {
				shapes[u.id] = u.info
			}
			want, err := loader.loadTable(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			got := shapes[id]
			if diff := diffShapes(got, want); diff != "" {
				t.Errorf("step %d (%.60s…): history and information_schema differ:\n%s", i, q, diff)
			}
		}
	})
}

func diffShapes(got, want *schema.TableShape) string {
	var b strings.Builder
	if len(got.Columns) != len(want.Columns) {
		fmt.Fprintf(&b, "  %d columns, want %d\n", len(got.Columns), len(want.Columns))
	}
	for i := range min(len(got.Columns), len(want.Columns)) {
		g, w := got.Columns[i], want.Columns[i]
		if g != w {
			fmt.Fprintf(&b, "  column %d:\n    got  %+v\n    want %+v\n", i, g, w)
		}
	}
	if strings.Join(got.PrimaryKey, ",") != strings.Join(want.PrimaryKey, ",") {
		fmt.Fprintf(&b, "  key %v, want %v\n", got.PrimaryKey, want.PrimaryKey)
	}
	if got.Charset != want.Charset {
		fmt.Fprintf(&b, "  charset %q, want %q\n", got.Charset, want.Charset)
	}
	return b.String()
}
