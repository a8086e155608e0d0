//go:build integration

package cdc

import (
	"context"
	"database/sql"
	"testing"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
)

const allTypesTable = `CREATE TABLE alltypes (
  id INT UNSIGNED NOT NULL PRIMARY KEY,
  c_bool TINYINT(1), c_tiny TINYINT, c_tiny_u TINYINT UNSIGNED, c_small SMALLINT, c_small_u SMALLINT UNSIGNED,
  c_med MEDIUMINT, c_med_u MEDIUMINT UNSIGNED, c_int INT, c_int_u INT UNSIGNED, c_big BIGINT, c_big_u BIGINT UNSIGNED,
  c_dec DECIMAL(20,6), c_dec0 DECIMAL(10,0), c_dec2 DECIMAL(5,2), c_float FLOAT, c_double DOUBLE,
  c_date DATE, c_dt DATETIME, c_dt6 DATETIME(6), c_ts TIMESTAMP NULL, c_ts3 TIMESTAMP(3) NULL,
  c_time TIME, c_time3 TIME(3), c_year YEAR,
  c_char CHAR(10), c_vc VARCHAR(100), c_latin VARCHAR(20) CHARACTER SET latin1,
  c_gbk VARCHAR(20) CHARACTER SET gbk, c_text TEXT, c_medtext MEDIUMTEXT,
  c_bin BINARY(4), c_varbin VARBINARY(10), c_blob BLOB,
  c_bit1 BIT(1), c_bit5 BIT(5), c_bit12 BIT(12),
  c_enum ENUM('small','medium','large'), c_set SET('a','b','c','d'),
  c_json JSON, c_geo GEOMETRY, c_point POINT
) DEFAULT CHARSET=utf8mb4`

const allTypesRow1 = `INSERT INTO alltypes VALUES (1,
  1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615,
  -12345678901234.123456, 42, 4.5, 3.14159, 2.718281828459045,
  '2024-02-29', '2024-02-29 13:14:15', '2024-02-29 13:14:15.123456', '2024-01-02 03:04:05', '2024-01-02 03:04:05.678',
  '-838:59:59', '100:00:00.5', 2024,
  'abc', 'héllo 🚀 世界', 'café', '中文', 'some text', 'medium',
  x'DEADBE00', x'00FF', x'00FF10',
  b'1', b'10101', b'101010111100',
  'large', 'a,c,d', '{"k": [1, 2.5, "x"], "n": null, "s": "a  b \\" c"}',
  ST_GeomFromText('LINESTRING(0 0, 1e21 1e-7)'), ST_GeomFromText('POINT(1.5 -2)', 4326))`

// TestDecodeAllTypesGolden writes every type of OUTPUT.md with edge values (and NULLs and
// zero dates), updates (with a PK change) and deletes, and compares the decoded changes
// with testdata/alltypes.golden. It then reads the final row with SELECT and checks that
// the snapshot seam (Column.FromText) gives the same values as the binlog.
func TestDecodeAllTypesGolden(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "USE `"+name+"`", allTypesTable)
	cfg := testConfig(name)
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
		allTypesRow1,
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
}

// checkSnapshotSeam reads row 100 with SELECT as a snapshot reader would (time_zone UTC,
// character_set_results NULL) and compares FromText values with the binlog's after image.
func checkSnapshotSeam(t *testing.T, db *sql.DB, dbName string, want change.Row) {
	t.Helper()
	ctx := context.Background()
	id := change.TableID{DB: dbName, Table: "alltypes"}
	tbl, err := DescribeTable(ctx, db, id, DescribeOptions{})
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
		if got, w := describeValue(v), describeValue(want[i]); got != w {
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
