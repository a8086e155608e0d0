//go:build integration

package cdc

import (
	"context"
	"database/sql"
	"testing"

	"github.com/ingestkit/ingest/cdc/history"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
)

// TestDecodeAllTypesGolden writes every type of OUTPUT.md with edge values (and NULLs and
// zero dates), updates (with a PK change) and deletes, and compares the decoded changes
// with testdata/alltypes.golden. It then reads the final row with SELECT and checks that
// the snapshot seam (Column.FromText) gives the same values as the binlog.
func TestDecodeAllTypesGolden(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "USE `"+name+"`", testenv.AllTypesTable)
		cfg := testConfig(srv, name)
		cfg.Startup, cfg.StartPosition = StartSpecific, gtidPos(t, db)
		r := start(t, cfg)

		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, stmt := range []string{
			"SET SESSION time_zone = '+05:30'",
			testenv.AllTypesRow1,
			"INSERT INTO alltypes (id) VALUES (2)",
			"SET SESSION sql_mode = ''",
			"INSERT INTO alltypes (id, c_date, c_dt, c_dt6, c_ts, c_year, c_set, c_enum) VALUES (3, '0000-00-00', '0000-00-00 00:00:00', '2024-00-15 10:00:00', '0000-00-00 00:00:00', 0, '', 'small')",
			"UPDATE alltypes SET id = 100, c_vc = 'changed', c_bool = 0, c_set = 'b' WHERE id = 1",
			"DELETE FROM alltypes WHERE id = 2",
			"INSERT INTO alltypes (id) VALUES (99)",
		} {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		changes, _ := r.changesUntil(t, func(c change.Change) bool {
			return c.Op == change.Insert && c.After[0].Num == 99
		})
		golden(t, "alltypes.golden", render(changes))

		var after change.Row
		for _, c := range changes {
			if c.Op == change.Update {
				after = c.After
			}
		}
		checkSnapshotSeam(t, db, name, after)
	})
}

// checkSnapshotSeam reads row 100 with SELECT as a snapshot reader would (time_zone UTC,
// character_set_results NULL) and compares FromText values with the binlog's after image.
func checkSnapshotSeam(t *testing.T, db *sql.DB, dbName string, want change.Row) {
	t.Helper()
	ctx := context.Background()
	id := change.TableID{DB: dbName, Table: "alltypes"}
	tbl, err := history.DescribeTable(ctx, db, id, history.DescribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	testenvExec(t, conn, "SET time_zone = '+00:00'", "SET character_set_results = NULL")
	rows, err := conn.QueryContext(ctx, "SELECT * FROM alltypes WHERE id = 100")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatal("row 100 missing")
	}
	raw := make([]sql.RawBytes, len(tbl.Columns))
	ptrs := make([]any, len(raw))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	for i := range tbl.Columns {
		v, err := tbl.Columns[i].FromText(raw[i])
		if err != nil {
			t.Fatal(err)
		}
		if got, w := schema.DescribeValue(v), schema.DescribeValue(want[i]); got != w {
			t.Errorf("column %s: SELECT gives %s, binlog %s", tbl.Columns[i].Name, got, w)
		}
	}
}

func testenvExec(t *testing.T, conn *sql.Conn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := conn.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}
