//go:build integration

package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"testing"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
)

// benchTable is the benchmark's 11-column table.
const benchTable = `CREATE TABLE bench (
  id BIGINT PRIMARY KEY, a INT, s1 VARCHAR(32), s2 VARCHAR(32), amount DECIMAL(12,2), b INT,
  flag TINYINT, score DOUBLE, note VARCHAR(255), created DATETIME(6), ts TIMESTAMP(6) NULL)`

func loadBench(b *testing.B, db *sql.DB, rows int) {
	testenv.Exec(b, db, benchTable)
	for lo := 0; lo < rows; lo += 100_000 {
		testenv.Exec(b, db, fmt.Sprintf(`INSERT INTO bench SELECT seq, seq %% 1000, CONCAT('name-', seq), MD5(seq),
  seq / 100, seq %% 7, seq %% 2, seq / 3, REPEAT(CONCAT('note ', seq), 1 + seq %% 5),
  '2024-05-01 10:00:00.123456' + INTERVAL seq SECOND, FROM_UNIXTIME(1700000000 + seq)
FROM seq_%d_to_%d`, lo+1, min(lo+100_000, rows)))
	}
	testenv.Exec(b, db, "ANALYZE TABLE bench")
}

// BenchmarkScan1M compares the snapshot of a 1M-row table with a plain SELECT * of it:
//
//	go test -tags integration ./cdc/snapshot/ -run '^$' -bench Scan1M -benchtime 3x
func BenchmarkScan1M(b *testing.B) {
	const rows = 1_000_000
	name, db := testenv.Database(b)
	loadBench(b, db, rows)
	id := change.TableID{DB: name, Table: "bench"}
	b.Run("select-star-rawbytes", func(b *testing.B) {
		for b.Loop() {
			if n := selectStar(b, id, false); n != rows {
				b.Fatalf("%d rows", n)
			}
		}
		b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("select-star-decoded", func(b *testing.B) {
		for b.Loop() {
			if n := selectStar(b, id, true); n != rows {
				b.Fatalf("%d rows", n)
			}
		}
		b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	for _, par := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("snapshot-parallelism-%d", par), func(b *testing.B) {
			for b.Loop() {
				cfg := testConfig(testenv.Primary(), id)
				cfg.ChunkSize, cfg.Parallelism = 0, par // the default 8096
				if n := countSnapshot(b, New(cfg)); n != rows {
					b.Fatalf("%d rows", n)
				}
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// selectStar scans the table with one SELECT into sql.RawBytes, decoding with the test
// decoders when decode is set.
func selectStar(b *testing.B, id change.TableID, decode bool) int {
	cfg, err := testConfig(testenv.Primary(), id).withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	db, err := cfg.openDB()
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	t, err := loadTable(context.Background(), db, &cfg, id)
	if err != nil {
		b.Fatal(err)
	}
	if decode {
		return scanDecoded(b, &cfg, t)
	}
	rows, err := db.Query(t.selectSQL)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	raw := make([]sql.RawBytes, len(t.desc.Columns))
	dest := make([]any, len(raw))
	for i := range raw {
		dest[i] = &raw[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

// scanDecoded reads the table as a reader does (row connection, arena, decoders) in one
// SELECT.
func scanDecoded(b *testing.B, cfg *Config, t *table) int {
	conn, err := cfg.openRowConn(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	sc := newScanner(t, math.MaxInt)
	if err := conn.query(t.selectSQL, nil, sc.out.arena, sc.cols, sc.row); err != nil {
		b.Fatal(err)
	}
	return len(sc.out.rows)
}

func countSnapshot(b *testing.B, s *Snapshot) int {
	out := make(chan change.Batch, 16)
	done := make(chan error, 1)
	go func() { done <- s.Run(context.Background(), out); close(out) }()
	n := 0
	for batch := range out {
		n += len(batch.Changes)
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return n
}
