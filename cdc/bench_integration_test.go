//go:build integration

package cdc

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
)

const benchTable = `CREATE TABLE bench (id BIGINT PRIMARY KEY, a INT, b VARCHAR(32), c VARCHAR(32), d DECIMAL(12,2),
  e INT, f TINYINT, g DOUBLE, h VARCHAR(255), i DATETIME(6), j TIMESTAMP(6) NULL)`

// fillBench inserts rows into a fresh bench table, perTxn rows per transaction, and
// returns the database and the file position before the inserts.
func fillBench(tb testing.TB, rows, perTxn int) (string, binlogpos.Position) {
	name, db := testenv.Database(tb)
	testenv.Exec(tb, db, benchTable)
	from := filePos(tb, db)
	for lo := 1; lo <= rows; lo += perTxn {
		testenv.Exec(tb, db, fmt.Sprintf(`INSERT INTO bench SELECT seq, seq %% 1000, CONCAT('b', seq), CONCAT('c', seq),
  seq / 100, seq * 7, seq %% 100, seq / 3, REPEAT('h', 20 + seq %% 60), NOW(6), NOW(6) FROM seq_%d_to_%d`, lo, min(lo+perTxn-1, rows)))
	}
	return name, from
}

// BenchmarkDecode streams the same binlog range with go-mysql alone (its default decode,
// every table, values as go-mysql returns them) and with the Source (decode to
// change.Value, batching, channel), and reports rows/s of each. The ratio of the two is
// the cost of this package over the raw decode.
func BenchmarkDecode(b *testing.B) {
	const rows = 200_000
	name, from := fillBench(b, rows, 10_000)
	b.Run("go-mysql", func(b *testing.B) {
		for range b.N {
			rawDecode(b, from, rows)
		}
		b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("cdc", func(b *testing.B) {
		for range b.N {
			sourceDecode(b, name, from, rows)
		}
		b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}

func rawDecode(b *testing.B, from binlogpos.Position, rows int) {
	u, p := testenv.CDCUser()
	cfg := testConfig(testenv.Primary(), "")
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID: cfg.ServerID.First, Flavor: "mariadb", Host: "127.0.0.1", Port: 3307, User: u, Password: p,
		Logger: slog.New(slog.DiscardHandler), DisableRetrySync: true, TimestampStringLocation: time.UTC,
	})
	defer syncer.Close()
	st, err := syncer.StartSync(gomysql.Position{Name: from.File, Pos: from.Offset})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for n := 0; n < rows; {
		ev, err := st.GetEvent(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if re, ok := ev.Event.(*replication.RowsEvent); ok && string(re.Table.Table) == "bench" {
			n += len(re.Rows)
		}
	}
}

func sourceDecode(b *testing.B, name string, from binlogpos.Position, rows int) {
	cfg := testConfig(testenv.Primary(), name)
	cfg.Startup, cfg.StartPosition = StartSpecific, from
	src, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan change.Batch, 64)
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, out) }()
	for n := 0; n < rows; {
		select {
		case batch := <-out:
			n += len(batch.Changes)
		case err := <-done:
			b.Fatal(err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// TestBigTransactionMemory streams one 1,000,000-row transaction and checks that the heap
// stays bounded (batches of MaxBatch, go-mysql's event cache of 256 events).
func TestBigTransactionMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000,000 rows")
	}
	const rows = 1_000_000
	name, from := fillBench(t, rows, rows)
	cfg := testConfig(testenv.Primary(), name)
	cfg.Startup, cfg.StartPosition = StartSpecific, from
	r := start(t, cfg)
	runtime.GC()
	var ms runtime.MemStats
	var peak uint64
	n, batches, began := 0, 0, time.Now()
	for n < rows {
		b := r.nextChanges(t, time.Minute)
		n += len(b.Changes)
		if batches++; batches%50 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
		if b.End != (n == rows) {
			t.Fatalf("End=%v after %d of %d rows", b.End, n, rows)
		}
	}
	elapsed := time.Since(began)
	t.Logf("1,000,000-row transaction: %d batches in %v (%.0f rows/s), peak HeapInuse %.1f MiB",
		batches, elapsed.Round(time.Millisecond), rows/elapsed.Seconds(), float64(peak)/(1<<20))
	if peak > 256<<20 {
		t.Fatalf("peak HeapInuse %d MiB, want < 256 MiB", peak>>20)
	}
}
