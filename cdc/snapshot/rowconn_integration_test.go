//go:build integration

package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"testing"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
)

// TestChunkSelect reads spans of tables keyed by each kind of chunk key (signed and
// unsigned integers, latin1 text and an INT, DECIMAL, DATETIME(3), VARBINARY) through the row
// connection's prepared statements. Each must return the rows the server counts between
// the bounds, by an index range (Handler_read_* counters, not a scan of the table), and a
// read cut by the limit must end at the bound the text protocol gives for the last key (a
// DATETIME(3) key's bound is rendered from the binary protocol's form).
func TestChunkSelect(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		const rows = 3000
		testenv.Exec(t, db,
			"CREATE TABLE ints (id BIGINT UNSIGNED PRIMARY KEY, v INT)",
			"CREATE TABLE texts (k VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_german2_ci NOT NULL, n INT NOT NULL, PRIMARY KEY (k, n))",
			"CREATE TABLE decs (d DECIMAL(12,3) PRIMARY KEY, v INT)",
			"CREATE TABLE times (at DATETIME(3) PRIMARY KEY, v INT)",
			"CREATE TABLE signed (id INT PRIMARY KEY, v INT)",
			"CREATE TABLE bins (b VARBINARY(16) PRIMARY KEY, v INT)",
			"CREATE TABLE seq (n INT PRIMARY KEY)",
			fmt.Sprintf("INSERT INTO seq SELECT seq FROM seq_1_to_%d", rows), // MariaDB's Sequence engine
			"INSERT INTO ints SELECT n * 3 + 18446744073709500000, n FROM seq",
			"INSERT INTO texts SELECT CONCAT(ELT(n % 4 + 1, 'ß', 'ss', 'Ä', 'ae'), n % 50), n FROM seq",
			"INSERT INTO decs SELECT n * 1.125 - 1000, n FROM seq",
			"INSERT INTO signed SELECT n * 7 - 10000, n FROM seq",
			"INSERT INTO bins SELECT UNHEX(MD5(n)), n FROM seq",
			"INSERT INTO times SELECT TIMESTAMP'2024-02-28 23:59:59.5' + INTERVAL n * 1001000 MICROSECOND, n FROM seq",
		)
		tests := []struct {
			table string
			key   string // ORDER BY for the bounds, in the table's key order
			sel   string // the key columns as the row connection reads them: text in its own character set
		}{
			{"ints", "id", "id"},
			{"texts", "k, n", "CAST(k AS BINARY), n"},
			{"decs", "d", "d"},
			{"times", "at", "at"},
			{"signed", "id", "id"},
			{"bins", "b", "b"},
		}
		cfg := testConfig(srv, change.TableID{DB: name, Table: "ints"})
		conn, err := mustConfig(t, cfg).openRowConn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, tc := range tests {
			t.Run(tc.table, func(t *testing.T) {
				ctx := context.Background()
				tbl, _ := testTable(t, cfg, change.TableID{DB: name, Table: tc.table})
				lo, hi := keyAt(t, db, name, tc.table, tc.sel, tc.key, 1000), keyAt(t, db, name, tc.table, tc.sel, tc.key, 1700)
				s, err := newSpan(ctx, tbl, lo, hi)
				if err != nil {
					t.Fatal(err)
				}
				r := &reader{rowConn: conn, limit: rows}
				before := handlerReads(t, conn)
				got, last, err := r.selectRows(ctx, s)
				if err != nil {
					t.Fatal(err)
				}
				if reads := handlerReads(t, conn) - before; reads > 800 {
					t.Errorf("%d handler reads for 700 rows: the SELECT did not read an index range", reads)
				}
				if got.live != 700 || last != nil {
					t.Fatalf("read %d rows (last %q), want the 700 between offsets 1000 and 1700", got.live, last)
				}

				r.limit = 10
				_, last, err = r.selectRows(ctx, s)
				if err != nil {
					t.Fatal(err)
				}
				want := keyAt(t, db, name, tc.table, tc.sel, tc.key, 1010)
				if fmt.Sprintf("%q", last) != fmt.Sprintf("%q", want) {
					t.Errorf("a read cut after 10 rows ends at %q, want %q", last, want)
				}
			})
		}

		// Every distinct SELECT is a statement; past maxStmts, the connection deallocates them.
		tbl, _ := testTable(t, cfg, change.TableID{DB: name, Table: "ints"})
		closed := sessionStatus(t, conn, "Com_stmt_close")
		for limit := 1; limit <= maxStmts+6; limit++ {
			r := &reader{rowConn: conn, limit: limit}
			got, _, err := r.selectRows(context.Background(), span{t: tbl})
			if err != nil || got.live != limit {
				t.Fatalf("SELECT with LIMIT %d: %d rows, %v", limit, got.live, err)
			}
		}
		if n := sessionStatus(t, conn, "Com_stmt_close") - closed; n < maxStmts || len(conn.stmts) > maxStmts {
			t.Errorf("%d statements closed, %d kept; want at least %d closed and at most %d kept", n, len(conn.stmts), maxStmts, maxStmts)
		}
	})
}

// mustConfig returns cfg with its defaults.
func mustConfig(t *testing.T, cfg Config) *Config {
	t.Helper()
	c, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return &c
}

// keyAt returns the key columns (selected as sel) of the row at offset in key order, as the
// text protocol sends them (the form of a Bound).
func keyAt(t *testing.T, db *sql.DB, schema, table, sel, key string, offset int) Bound {
	t.Helper()
	rows, err := db.Query(fmt.Sprintf("SELECT %s FROM `%s`.`%s` ORDER BY %s LIMIT 1 OFFSET %d", sel, schema, table, key, offset))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	raw := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i := range raw {
		dest[i] = &raw[i]
	}
	if !rows.Next() {
		t.Fatalf("no row at offset %d of %s", offset, table)
	}
	if err := rows.Scan(dest...); err != nil {
		t.Fatal(err)
	}
	b := make(Bound, len(raw))
	for i, r := range raw {
		b[i] = []byte(string(r))
	}
	return b
}

// handlerReads sums the session's Handler_read_* counters.
func handlerReads(t *testing.T, conn *rowConn) int {
	t.Helper()
	total := 0
	for _, name := range []string{"Handler_read_first", "Handler_read_key", "Handler_read_next", "Handler_read_rnd_next"} {
		total += sessionStatus(t, conn, name)
	}
	return total
}

func sessionStatus(t *testing.T, conn *rowConn, name string) int {
	t.Helper()
	res, err := conn.Execute("SHOW SESSION STATUS LIKE '" + name + "'")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Values) != 1 {
		t.Fatalf("no status %s", name)
	}
	n, err := strconv.Atoi(string(res.Values[0][1].AsString()))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestChunkSelectAfterModify: after an ALTER TABLE … MODIFY between a number and text, a
// SELECT with the description from before must fail as a shape change (the reader then
// describes the table again), and one with the new description must decode the new types.
func TestChunkSelectAfterModify(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v INT, w VARCHAR(10))",
			"INSERT INTO t VALUES (1, 10, '100'), (2, 20, '200')")
		id := change.TableID{DB: name, Table: "t"}
		cfg := testConfig(srv, id)
		conn, err := mustConfig(t, cfg).openRowConn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		stale, _ := testTable(t, cfg, id)
		testenv.Exec(t, db, "ALTER TABLE t MODIFY v VARCHAR(20), MODIFY w INT")
		r := &reader{rowConn: conn, limit: 10}
		if _, _, err := r.selectRows(context.Background(), span{t: stale}); !reshaped(err) {
			t.Fatalf("SELECT with the description from before the ALTER: %v, want a shape change", err)
		}
		fresh, _ := testTable(t, cfg, id)
		got, _, err := r.selectRows(context.Background(), span{t: fresh})
		if err != nil {
			t.Fatal(err)
		}
		if row := got.rows[1]; row[1].Kind != change.String || string(row[1].Bytes) != "20" || row[2].Kind != change.Int || row[2].Int() != 200 {
			t.Errorf("row 2 after the ALTER: %+v, want v the text 20 and w the integer 200", row)
		}
	})
}
