//go:build integration

package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/ingestkit/ingest/internal/testenv"
)

// TestFlinkConsumer is the consumer test of docs/output.md ("The consumer's side"): a real
// Flink 1.20 job (scripts/flink, a local mini-cluster with the upsert-kafka connector)
// reads the all-types topics through the DDL that `plan --emit flink-sql` writes, and the
// rows it materialises must equal SELECT * column by column. Two forms: TIME as micros
// (json.encode.time-as: micros) with TIME values outside a day, and the default text form
// with TIME values within a day; and MariaDB's UUID, INET4, INET6, DECIMAL ZEROFILL, its
// single-byte character sets and a GEOMETRYCOLLECTION (mdbtypes). Rows pass through the snapshot and the binlog, with an
// update, a delete and a primary key change. INGEST_TEST_FLINK=skip skips it.
func TestFlinkConsumer(t *testing.T) {
	if os.Getenv("INGEST_TEST_FLINK") == "skip" {
		t.Skip("INGEST_TEST_FLINK=skip")
	}
	fetch := exec.Command("../../scripts/flink", "fetch")
	fetch.Stderr = os.Stderr
	if err := fetch.Run(); err != nil {
		t.Fatalf("scripts/flink fetch: %v", err)
	}
	name, db := testenv.Database(t)
	testenv.Exec(t, db, testenv.AllTypesTable,
		"SET SESSION time_zone = '+05:30'", testenv.AllTypesRow1,
		"INSERT INTO alltypes (id) VALUES (2)",
		"INSERT INTO alltypes (id, c_float, c_double) VALUES (3, 123.456789, 0.1), (4, 3.4e38, 4.9e-324), (5, 1.17549435e-38, -0.0)",
		"SET SESSION sql_mode = ''",
		"INSERT INTO alltypes (id, c_date, c_dt, c_dt6, c_ts, c_year, c_set, c_enum, c_bool) VALUES (7, '0000-00-00', '0000-00-00 00:00:00', '2024-00-15 10:00:00', '0000-00-00 00:00:00', 0, '', 'small', 5)",
		"CREATE TABLE alltypes_day LIKE alltypes",
		"INSERT INTO alltypes_day SELECT * FROM alltypes",
		"UPDATE alltypes_day SET c_time = '12:34:56', c_time3 = '23:59:59.999' WHERE id = 1",
		"UPDATE alltypes_day SET c_time = '00:00:00', c_time3 = '00:00:00.5' WHERE id = 3",
		testenv.MariaDBTypesTables[0], testenv.MariaDBTypesRows[0],
	)
	changes := func(table string) []string {
		return []string{"UPDATE " + table + " SET c_vc = 'updated ✓', c_dec2 = -0.05 WHERE id = 2",
			"DELETE FROM " + table + " WHERE id = 5", "UPDATE " + table + " SET id = 40 WHERE id = 4"}
	}
	geo := map[string]string{"c_geo": "ST_AsGeoJSON(c_geo)", "c_point": "ST_AsGeoJSON(c_point)", "c_float": "CAST(c_float AS DOUBLE)"}
	forms := []struct {
		table, topic, option string
		changes              []string
		exprs                map[string]string // SELECT expressions in place of columns
	}{
		{"alltypes", "cs_" + name + "_micros", "  json.encode.time-as: micros\n", changes("alltypes"), geo},
		{"alltypes_day", "cs_" + name + "_text", "", changes("alltypes_day"), geo},
		{"mdbtypes", "cs_" + name + "_mdb", "", []string{
			"UPDATE mdbtypes SET i6 = '::2', d = 1.5 WHERE id = '00000000-0000-0000-0000-000000000000'",
			"DELETE FROM mdbtypes WHERE id = 'ffffffff-ffff-ffff-ffff-ffffffffffff'"},
			map[string]string{"g": "ST_AsGeoJSON(g)"}},
	}
	t.Cleanup(func() {
		_, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), forms[0].topic, forms[1].topic, forms[2].topic)
	})
	env := map[string]string{"INGEST_SECRET_MYSQL_PASSWORD": cdcPassword()}
	var ddl strings.Builder
	for _, f := range forms {
		file := consumerPipeline(t, name, f.table, f.topic, f.option)
		state := filepath.Join(t.TempDir(), "state")
		if code, _, stderr := runCLIEnv(t, env, "apply", file, "--until-caught-up", "--state", state); code != exitOK {
			t.Fatalf("apply %s: exit %d\n%s", f.table, code, stderr)
		}
		// Changes through the binlog: an update, a delete, a primary key change.
		testenv.Exec(t, db, f.changes...)
		if code, _, stderr := runCLIEnv(t, env, "apply", file, "--until-caught-up", "--state", state); code != exitOK {
			t.Fatalf("apply %s (binlog): exit %d\n%s", f.table, code, stderr)
		}
		code, stdout, stderr := runCLIEnv(t, env, "plan", file, "--state", state, "--emit", "flink-sql")
		if code != exitOK {
			t.Fatalf("plan --emit flink-sql: exit %d\n%s", code, stderr)
		}
		ddl.WriteString(bounded(stdout))
	}
	sqlFile := writeFile(t, "tables.sql", ddl.String(), 0o644)
	start := time.Now()
	run := exec.Command("../../scripts/flink", "run", sqlFile, forms[0].topic, forms[1].topic, forms[2].topic)
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.Output()
	t.Logf("flink job: %v", time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("scripts/flink run: %v\n%s\nDDL:\n%s", err, stderr.String(), ddl.String())
	}
	got := materialise(t, out)
	for _, f := range forms {
		want := selectAll(t, db, f.table, f.exprs)
		rows := got[f.topic]
		t.Logf("%s: %d rows compared", f.table, len(want))
		if len(rows) != len(want) {
			t.Errorf("%s: flink materialised %d rows, SELECT has %d\n%s", f.table, len(rows), len(want), out)
		}
		for id, w := range want {
			g, ok := rows[id]
			if !ok {
				t.Errorf("%s id %s: missing in flink's rows", f.table, id)
				continue
			}
			for i, col := range w.cols {
				if !sameValue(col, w.vals[i], g[i], f.option != "") {
					t.Errorf("%s id %s column %s: flink %s, SELECT %s", f.table, id, col, show(g[i]), show(w.vals[i]))
				}
			}
		}
	}
}

// consumerPipeline is a pipeline that writes db.table to topic.
func consumerPipeline(t *testing.T, db, table, topic, extra string) string {
	u, _ := testenv.CDCUser()
	host, port, _ := strings.Cut(testenv.MySQLAddr(), ":")
	return writeFile(t, table+".yaml", fmt.Sprintf(`source:
  type: mysql
  hostname: %s
  port: %s
  username: %s
  password: ${secret_values.mysql-password}
  tables: %s.%s
sink:
  type: upsert-kafka
  properties.bootstrap.servers: %s
%sroute:
  - source-table: %s.%s
    sink-table: %s
pipeline:
  name: %s
`, host, port, u, db, table, testenv.KafkaAddr(), extra, db, table, topic, topic), 0o644)
}

// bounded makes the emitted tables bounded: a job reads each topic up to its end offsets.
func bounded(ddl string) string {
	return strings.ReplaceAll(ddl, "  'connector' = 'upsert-kafka',\n", "  'connector' = 'upsert-kafka',\n  'scan.bounded.mode' = 'latest-offset',\n")
}

// materialise applies the changelog rows FlinkRows printed: per table, the rows by id.
func materialise(t *testing.T, out []byte) map[string]map[string][]*string {
	t.Helper()
	tables := map[string]map[string][]*string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Table, Kind string
			Fields      []*string
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("flink output %q: %v", sc.Text(), err)
		}
		if tables[r.Table] == nil {
			tables[r.Table] = map[string][]*string{}
		}
		id := *r.Fields[0]
		switch r.Kind {
		case "+I", "+U":
			tables[r.Table][id] = r.Fields
		case "-U", "-D":
			delete(tables[r.Table], id)
		}
	}
	return tables
}

type sqlRow struct {
	cols []string
	vals []*string
}

// selectAll returns SELECT * of table by id, read in UTC, with exprs in place of their
// columns: geometry as ST_AsGeoJSON, FLOAT through a DOUBLE (the text protocol rounds FLOAT
// to 6 digits).
func selectAll(t *testing.T, db *sql.DB, table string, exprs map[string]string) map[string]sqlRow {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET time_zone = '+00:00'"); err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(maps.Keys(exprs))
	query := "SELECT *"
	for _, c := range names {
		query += ", " + exprs[c]
	}
	rows, err := conn.QueryContext(ctx, query+" FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	n := len(cols) - len(names)
	out := map[string]sqlRow{}
	for rows.Next() {
		raw := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range raw {
			ptrs[i] = &raw[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		vals := make([]*string, n)
		for i := 0; i < n; i++ {
			v := raw[i]
			if j := slices.Index(names, cols[i]); j >= 0 {
				v = raw[n+j]
			}
			if v != nil {
				s := string(v)
				vals[i] = &s
			}
		}
		out[*vals[0]] = sqlRow{cols: cols[:n], vals: vals}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func show(s *string) string {
	if s == nil {
		return "NULL"
	}
	return strconv.Quote(*s)
}

// sameValue compares what Flink read (its Java text: Row.getField's toString, byte arrays
// as hex) with the MySQL text of SELECT for the alltypes column col.
func sameValue(col string, mysqlText, flinkText *string, micros bool) bool {
	m := mysqlText
	switch col {
	case "c_date", "c_dt", "c_dt6", "c_ts", "c_ts3":
		if m != nil && zeroDate(*m) {
			m = nil // zero dates arrive as NULL
		}
	}
	if m == nil || flinkText == nil {
		return m == nil && flinkText == nil
	}
	my, fl := *m, *flinkText
	switch col {
	case "c_bool":
		return fl == strconv.FormatBool(my != "0")
	case "c_bit1":
		return fl == strconv.FormatBool(my != "\x00")
	case "c_float":
		a, _ := strconv.ParseFloat(my, 32)
		b, _ := strconv.ParseFloat(fl, 32)
		return float32(a) == float32(b)
	case "c_double":
		a, _ := strconv.ParseFloat(my, 64)
		b, _ := strconv.ParseFloat(fl, 64)
		return a == b
	case "c_year":
		a, _ := strconv.Atoi(my)
		b, _ := strconv.Atoi(fl)
		return a == b
	case "c_date":
		return my == fl
	case "c_dt", "c_dt6":
		a, err1 := time.Parse("2006-01-02 15:04:05.999999", my)
		b, err2 := time.Parse("2006-01-02T15:04:05.999999", fl)
		if err2 != nil {
			b, err2 = time.Parse("2006-01-02T15:04", fl) // LocalDateTime.toString omits :00 seconds
		}
		return err1 == nil && err2 == nil && a.Equal(b)
	case "c_ts", "c_ts3":
		a, err1 := time.Parse("2006-01-02 15:04:05.999999", my)
		b, err2 := time.Parse(time.RFC3339Nano, fl)
		return err1 == nil && err2 == nil && a.Equal(b)
	case "c_time", "c_time3":
		us := timeMicros(my)
		if micros {
			return fl == strconv.FormatInt(us, 10)
		}
		return timeMicros(fl) == us
	case "c_bin", "c_varbin", "c_blob", "c_bit5", "c_bit12":
		return fl == hex.EncodeToString([]byte(my))
	case "c_json":
		var a, b bytes.Buffer
		return json.Compact(&a, []byte(my)) == nil && json.Compact(&b, []byte(fl)) == nil && a.String() == b.String()
	case "c_geo", "c_point", "g":
		var a, b map[string]any
		if json.Unmarshal([]byte(my), &a) != nil || json.Unmarshal([]byte(fl), &b) != nil {
			return false
		}
		return a["type"] == b["type"] && reflect.DeepEqual(a["coordinates"], b["coordinates"]) &&
			reflect.DeepEqual(a["geometries"], b["geometries"])
	case "d", "d0", "n": // ZEROFILL: SELECT pads, the number does not
		a, ok1 := new(big.Rat).SetString(my)
		b, ok2 := new(big.Rat).SetString(fl)
		return ok1 && ok2 && a.Cmp(b) == 0
	}
	return my == fl // integers, DECIMAL (toPlainString at the scale), strings, ENUM, SET
}

func zeroDate(s string) bool {
	return strings.HasPrefix(s, "0000-") || strings.Contains(s[:min(len(s), 10)], "-00")
}

// timeMicros parses MySQL's [-]H:mm:ss[.f] into microseconds.
func timeMicros(s string) int64 {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	hms, frac, _ := strings.Cut(s, ".")
	parts := strings.Split(hms, ":")
	if len(parts) != 3 {
		return math.MinInt64
	}
	h, _ := strconv.ParseInt(parts[0], 10, 64)
	m, _ := strconv.ParseInt(parts[1], 10, 64)
	sec, _ := strconv.ParseInt(parts[2], 10, 64)
	us := ((h*60+m)*60 + sec) * 1e6
	if frac != "" {
		f, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
		us += f
	}
	if neg {
		us = -us
	}
	return us
}
