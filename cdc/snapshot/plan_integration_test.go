//go:build integration

package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestkit/ingest/cdc"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
)

// testConfig returns a config for the CDC user on srv with the test describer and a server id
// range of its own.
func testConfig(srv testenv.Server, ids ...change.TableID) Config {
	user, pass := testenv.CDCUser()
	first := uint32(100_000 + rand.IntN(1_000_000))
	return Config{Addr: srv.Addr, User: user, Password: pass, Tables: ids,
		ServerIDs: cdc.ServerIDRange{First: first, Last: first + 7}, ChunkSize: 1000}
}

func testTable(t *testing.T, cfg Config, id change.TableID) (*table, *sql.DB) {
	t.Helper()
	cfg.Tables = []change.TableID{id}
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	db, err := cfg.openDB()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tbl, err := loadTable(context.Background(), db, &cfg, id)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, db
}

// planWhole plans a whole table and checks that the chunks partition its key space and
// together hold every row; it returns the chunks' row counts.
func planWhole(t *testing.T, tbl *table, db *sql.DB, size int) ([]span, []int, planMethod) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var spans []span
	whole, err := newSpan(ctx, tbl, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &planner{db: db, size: size}
	method, err := p.plan(ctx, tbl, []span{whole}, func(s span) error { spans = append(spans, s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, tbl, spans)
	var counts []int
	total := 0
	for _, s := range spans {
		cond, args, err := s.where()
		if err != nil {
			t.Fatal(err)
		}
		q := "SELECT COUNT(*) FROM " + tbl.name()
		if cond != "" {
			q += " WHERE " + cond
		}
		var n int
		if err := db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		counts, total = append(counts, n), total+n
	}
	var all int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+tbl.name()).Scan(&all); err != nil {
		t.Fatal(err)
	}
	if total != all {
		t.Fatalf("chunks hold %d rows, the table %d", total, all)
	}
	return spans, counts, method
}

func checkPartition(t *testing.T, tbl *table, spans []span) {
	t.Helper()
	if len(spans) == 0 || spans[0].lo != nil || spans[len(spans)-1].hi != nil {
		t.Fatalf("chunks do not start at -∞ and end at +∞: %v", spans)
	}
	for i := 1; i < len(spans); i++ {
		if spans[i].lo == nil || tbl.key.compare(spans[i].loV, spans[i-1].hiV) != 0 {
			t.Fatalf("chunk %d %s does not start where %s ends", i, spans[i], spans[i-1])
		}
		if spans[i].hi != nil && tbl.key.compare(spans[i].hiV, spans[i].loV) <= 0 {
			t.Fatalf("chunk %d %s is empty or reversed", i, spans[i])
		}
	}
}

func TestPlanDenseInteger(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id BIGINT PRIMARY KEY, v INT)",
			"INSERT INTO t SELECT seq, seq FROM seq_1_to_20000",
			"DELETE FROM t WHERE id % 10 = 3", // a few holes keep it dense
			"ANALYZE TABLE t")
		tbl, pool := testTable(t, testConfig(srv), change.TableID{DB: name, Table: "t"})
		spans, counts, method := planWhole(t, tbl, pool, 1000)
		if method != planEven {
			t.Fatalf("method %d, want even split", method)
		}
		if len(spans) < 15 || len(spans) > 25 {
			t.Errorf("%d chunks for 18000 rows of 1000", len(spans))
		}
		for i, n := range counts {
			if n > 2*1000 {
				t.Errorf("chunk %d %s holds %d rows", i, spans[i], n)
			}
		}
	})
}

func TestPlanSparseInteger(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id INT UNSIGNED PRIMARY KEY, v INT)",
			"INSERT INTO t SELECT seq * seq, seq FROM seq_1_to_5500",
			"ANALYZE TABLE t")
		tbl, pool := testTable(t, testConfig(srv), change.TableID{DB: name, Table: "t"})
		spans, counts, method := planWhole(t, tbl, pool, 1000)
		if method != planWalk {
			t.Fatalf("method %d, want walk", method)
		}
		want := []int{1000, 1000, 1000, 1000, 1000, 500}
		if !slices.Equal(counts, want) {
			t.Fatalf("counts %v, want %v (chunks %v)", counts, want, spans)
		}
		if got := string(spans[0].hi[0]); got != "1000000" {
			t.Errorf("first boundary %s, want 1000000 (1000²)", got)
		}
	})
}

func TestPlanIntegerExtremes(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE u (id BIGINT UNSIGNED PRIMARY KEY)",
			"INSERT INTO u SELECT 18446744073709551615 - seq FROM seq_0_to_2999",
			"CREATE TABLE s (id BIGINT PRIMARY KEY)",
			"INSERT INTO s SELECT CAST(seq AS SIGNED) + (-9223372036854775807 - 1) FROM seq_0_to_1499",
			"INSERT INTO s SELECT 9223372036854775807 - CAST(seq AS SIGNED) FROM seq_0_to_1499",
			"ANALYZE TABLE u, s")
		tu, pool := testTable(t, testConfig(srv), change.TableID{DB: name, Table: "u"})
		if _, counts, method := planWhole(t, tu, pool, 1000); method != planEven || len(counts) < 3 {
			t.Errorf("unsigned near the top: method %d, counts %v", method, counts)
		}
		ts, pool := testTable(t, testConfig(srv), change.TableID{DB: name, Table: "s"})
		if _, counts, method := planWhole(t, ts, pool, 1000); method != planWalk || !slices.Equal(counts, []int{1000, 1000, 1000, 0}) {
			t.Errorf("signed at both ends: method %d, counts %v", method, counts)
		}
	})
}

func TestPlanCompositeKey(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (a INT, b VARCHAR(20) COLLATE utf8mb4_bin, c DECIMAL(10,2), v INT, PRIMARY KEY (a, b, c))",
			"INSERT INTO t SELECT seq DIV 100, CONCAT('k', seq MOD 10), (seq MOD 100) DIV 10 - 4.5, seq FROM seq_0_to_4499",
			"ANALYZE TABLE t")
		tbl, pool := testTable(t, testConfig(srv), change.TableID{DB: name, Table: "t"})
		spans, counts, _ := planWhole(t, tbl, pool, 1000)
		if !slices.Equal(counts, []int{1000, 1000, 1000, 1000, 500}) {
			t.Fatalf("counts %v (chunks %v)", counts, spans)
		}
		// The range conditions use the primary key as a range, not a full index scan.
		cond, args, err := spans[2].where()
		if err != nil {
			t.Fatal(err)
		}
		var id int
		var selType, tbName, typ string
		var rest [6]sql.NullString
		row := pool.QueryRow("EXPLAIN SELECT * FROM "+tbl.name()+" WHERE "+cond, args...)
		if err := row.Scan(&id, &selType, &tbName, &typ, &rest[0], &rest[1], &rest[2], &rest[3], &rest[4], &rest[5]); err != nil {
			t.Fatal(err)
		}
		if typ != "range" {
			t.Errorf("EXPLAIN type %q for %s, want range", typ, cond)
		}
	})
}

// TestPlanStringKeys chunks tables keyed by binary and text keys in several collations and
// character sets (latin1 and ucs2 bounds are sent as bytes read back in the column's set:
// they once met "Illegal mix of collations").
func TestPlanStringKeys(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db,
			"CREATE TABLE b (k VARBINARY(16) PRIMARY KEY, v INT)",
			"INSERT INTO b SELECT UNHEX(MD5(seq)), seq FROM seq_1_to_2500",
			"CREATE TABLE s (k VARCHAR(40) COLLATE utf8mb4_bin PRIMARY KEY, v INT)",
			"INSERT INTO s SELECT CONCAT(IF(seq % 2, 'é', 'Z'), MD5(seq)), seq FROM seq_1_to_2500",
			"CREATE TABLE ci (k VARCHAR(40) PRIMARY KEY, v INT) COLLATE utf8mb4_general_ci",
			"INSERT INTO ci SELECT CONCAT(IF(seq % 2, 'É', 'e'), IF(seq % 3, 'X', 'x'), MD5(seq)), seq FROM seq_1_to_2500",
			"CREATE TABLE uca (k VARCHAR(40) PRIMARY KEY, v INT) COLLATE utf8mb4_uca1400_ai_ci",
			"INSERT INTO uca SELECT CONCAT(IF(seq % 2, 'ß', 'SS'), IF(seq % 3, 'X', 'x'), MD5(seq)), seq FROM seq_1_to_2500",
			"CREATE TABLE cs (k VARCHAR(40) PRIMARY KEY) COLLATE utf8mb4_uca1400_as_cs",
			"CREATE TABLE l1 (k VARCHAR(40) PRIMARY KEY, v INT) CHARACTER SET latin1 COLLATE latin1_swedish_ci",
			"INSERT INTO l1 SELECT CONCAT(IF(seq % 2, 'É', 'e'), IF(seq % 3, 'ÿ', 'Z'), MD5(seq)), seq FROM seq_1_to_2500",
			"CREATE TABLE u2 (k VARCHAR(40) PRIMARY KEY, v INT) CHARACTER SET ucs2 COLLATE ucs2_unicode_ci",
			"INSERT INTO u2 SELECT CONCAT(IF(seq % 2, 'ß', 'SS'), IF(seq % 3, 'Ω', 'x'), MD5(seq)), seq FROM seq_1_to_2500",
			"ANALYZE TABLE b, s, ci, uca, l1, u2")
		for _, tab := range []string{"b", "s", "ci", "uca", "l1", "u2"} {
			tbl, pool := testTable(t, testConfig(srv), change.TableID{DB: name, Table: tab})
			if _, counts, _ := planWhole(t, tbl, pool, 1000); !slices.Equal(counts, []int{1000, 1000, 500}) {
				t.Errorf("table %s: counts %v", tab, counts)
			}
		}
		cfg, _ := testConfig(srv, change.TableID{DB: name, Table: "cs"}).withDefaults()
		pool, _ := cfg.openDB()
		defer pool.Close()
		_, err := loadTable(context.Background(), pool, &cfg, change.TableID{DB: name, Table: "cs"})
		if err == nil || !strings.Contains(err.Error(), "utf8mb4_uca1400_as_cs") || !strings.Contains(err.Error(), name+".cs") ||
			!strings.Contains(err.Error(), "chunk.key-column") {
			t.Errorf("uca1400_as_cs key: error %v, want one naming the table, the collation and the fix", err)
		}
	})
}

func TestPlanEmptyTables(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE i (id INT PRIMARY KEY)", "CREATE TABLE c (a INT, b INT, PRIMARY KEY (a, b))")
		for _, tab := range []string{"i", "c"} {
			tbl, pool := testTable(t, testConfig(srv), change.TableID{DB: name, Table: tab})
			if spans, _, _ := planWhole(t, tbl, pool, 1000); len(spans) != 1 {
				t.Errorf("table %s: %d chunks, want one unbounded", tab, len(spans))
			}
		}
	})
}

func TestPlanNoPrimaryKey(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE n (a INT NOT NULL, b INT)", "INSERT INTO n SELECT seq, seq FROM seq_1_to_2500")
		id := change.TableID{DB: name, Table: "n"}
		cfg, _ := testConfig(srv, id).withDefaults()
		pool, _ := cfg.openDB()
		defer pool.Close()
		_, err := loadTable(context.Background(), pool, &cfg, id)
		if err == nil || !strings.Contains(err.Error(), id.String()) || !strings.Contains(err.Error(), "primary-keys") {
			t.Fatalf("error %v, want one naming the table and the fix", err)
		}
		cfg.Keys = func(string, string) ([]string, bool) { return []string{"a"}, true }
		tbl, err := loadTable(context.Background(), pool, &cfg, id)
		if err != nil {
			t.Fatal(err)
		}
		if _, counts, _ := planWhole(t, tbl, pool, 1000); len(counts) != 3 {
			t.Errorf("counts %v", counts)
		}
		cfg.Keys = func(string, string) ([]string, bool) { return []string{"b"}, true }
		if _, err = loadTable(context.Background(), pool, &cfg, id); err == nil || !strings.Contains(err.Error(), "nullable") {
			t.Errorf("nullable key: error %v", err)
		}
	})
}

// TestLoadTableGoneAfterDescribe: a table dropped between its description and the reading
// of its key's facts is a table that does not exist (errNoTable: left out of the snapshot
// and of the hand-off), not a failed run.
func TestLoadTableGoneAfterDescribe(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE g (id INT PRIMARY KEY, v INT)")
		id := change.TableID{DB: name, Table: "g"}
		cfg, _ := testConfig(srv, id).withDefaults()
		pool, _ := cfg.openDB()
		defer pool.Close()
		desc, err := cfg.Describe(context.Background(), pool, id, DescribeOptions{})
		if err != nil || desc == nil {
			t.Fatalf("describe: %v %v", desc, err)
		}
		testenv.Exec(t, db, "DROP TABLE g")
		cfg.Describe = func(context.Context, *sql.DB, change.TableID, DescribeOptions) (*Table, error) { return desc, nil }
		if _, err := loadTable(context.Background(), pool, &cfg, id); !errors.Is(err, errNoTable) {
			t.Errorf("loadTable of a table dropped after its description: %v, want errNoTable", err)
		}
	})
}
