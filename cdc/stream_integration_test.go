//go:build integration

package cdc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingestkit/ingest/cdc/binlog"
	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
)

func intKeys(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("int:%d", i))
	}
	return out
}

// TestTransactionBatches checks that a transaction is one unit: End only on its last batch,
// at most MaxBatch changes per batch, and the End position is the server's GTID position.
func TestTransactionBatches(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
		cfg := testConfig(srv, name)
		cfg.Startup, cfg.StartPosition, cfg.MaxBatch = StartSpecific, gtidPos(t, db), 3
		r := start(t, cfg)

		// The transaction's own GTID (@@last_gtid of its connection): tests of other packages
		// commit on the same server meanwhile, so @@gtid_binlog_pos may already be past it.
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 10; i++ {
			if _, err := tx.Exec("INSERT INTO t VALUES (?, 'x')", i); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		var last string
		if err := conn.QueryRowContext(ctx, "SELECT @@last_gtid").Scan(&last); err != nil {
			t.Fatal(err)
		}
		set, err := binlogpos.ParseMariaDBGTIDs(last)
		if err != nil {
			t.Fatal(err)
		}
		want := binlogpos.Position{MariaDB: set}
		var sizes []int
		var keys []string
		for {
			b := r.nextChanges(t, 10*time.Second)
			sizes = append(sizes, len(b.Changes))
			keys = append(keys, keysOf(b.Changes)...)
			if b.End {
				if got, _ := binlogpos.ParsePosition(string(b.Position)); got.MariaDBString() != want.MariaDBString() {
					t.Errorf("End position %s, want gtid %s", b.Position, want.MariaDBString())
				}
				break
			}
		}
		if !slices.Equal(sizes, []int{3, 3, 3, 1}) || !slices.Equal(keys, intKeys(1, 10)) {
			t.Fatalf("batch sizes %v keys %v", sizes, keys)
		}
	})
}

// TestStartupModes checks where each startup mode starts.
func TestStartupModes(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)")
		first := func(t *testing.T, cfg Config) string {
			t.Helper()
			r := start(t, cfg)
			// earliest-offset reads every binlog the shared test server still keeps (a day of
			// other tests' data); skipping a large transaction of another database can take a while.
			r.wait = 2 * time.Minute
			changes, _ := r.changesUntil(t, isRow)
			return keysOf(changes)[0]
		}

		t.Run("latest-offset", func(t *testing.T) {
			testenv.Exec(t, db, "INSERT INTO t VALUES (1)")
			cfg := testConfig(srv, name)
			r := start(t, cfg)
			time.Sleep(time.Second) // let Run read the latest position
			testenv.Exec(t, db, "INSERT INTO t VALUES (2)")
			changes, _ := r.changesUntil(t, isRow)
			if got := keysOf(changes)[0]; got != "int:2" {
				t.Fatalf("first change %s, want int:2", got)
			}
		})
		t.Run("earliest-offset", func(t *testing.T) {
			cfg := testConfig(srv, name)
			cfg.Startup = StartEarliest
			if got := first(t, cfg); got != "int:1" {
				t.Fatalf("first change %s, want int:1", got)
			}
		})
		t.Run("specific-offset file", func(t *testing.T) {
			cfg := testConfig(srv, name)
			cfg.Startup, cfg.StartPosition = StartSpecific, filePos(t, db)
			testenv.Exec(t, db, "INSERT INTO t VALUES (3)")
			if got := first(t, cfg); got != "int:3" {
				t.Fatalf("first change %s, want int:3", got)
			}
		})
		t.Run("specific-offset gtid", func(t *testing.T) {
			cfg := testConfig(srv, name)
			cfg.Startup, cfg.StartPosition = StartSpecific, gtidPos(t, db)
			testenv.Exec(t, db, "INSERT INTO t VALUES (4)")
			if got := first(t, cfg); got != "int:4" {
				t.Fatalf("first change %s, want int:4", got)
			}
		})
		t.Run("timestamp", func(t *testing.T) {
			testenv.Exec(t, db, "FLUSH BINARY LOGS", "INSERT INTO t VALUES (5)")
			time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
			at := time.Now()
			testenv.Exec(t, db, "FLUSH BINARY LOGS", "INSERT INTO t VALUES (6)")
			cfg := testConfig(srv, name)
			cfg.Startup, cfg.StartTime = StartTimestamp, at
			if got := first(t, cfg); got != "int:6" {
				t.Fatalf("first change %s, want int:6", got)
			}
		})
	})
}

// TestResumeExactlyAfter stops after a transaction and resumes from its End position, by
// GTID and by file and offset: the next change is the next transaction's.
func TestResumeExactlyAfter(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)")
		cfg := testConfig(srv, name)
		cfg.Startup, cfg.StartPosition = StartSpecific, gtidPos(t, db)
		r := start(t, cfg)
		testenv.Exec(t, db, "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)", "INSERT INTO t VALUES (3)")
		_, end := r.changesUntil(t, func(c change.Change) bool { return c.After[0].Int() == 2 })
		if err := r.stop(t); err != nil {
			t.Fatal(err)
		}
		pos, err := binlogpos.ParsePosition(string(end.Position))
		if err != nil || !pos.HasGTID() || pos.File == "" {
			t.Fatalf("End position %q: %v", end.Position, err)
		}
		for _, resume := range []binlogpos.Position{pos, {File: pos.File, Offset: pos.Offset}} {
			cfg := testConfig(srv, name)
			cfg.Position = resume
			r := start(t, cfg)
			changes, _ := r.changesUntil(t, isRow)
			if got := keysOf(changes); !slices.Equal(got, []string{"int:3"}) {
				t.Fatalf("resume from %s: got %v, want [int:3]", resume, got)
			}
		}
	})
}

// TestKillResumes kills the replication connection from the server twice, once in the
// middle of a big transaction, and checks that every row arrives exactly once, in order.
// The events already received are handled before the connection's end is seen, so the
// big transaction is larger than the socket buffers can hold (8 MB): the kill must land
// in a part the server has not sent yet.
func TestKillResumes(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		const big = 40000 // rows of the big transaction, 200 bytes each
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, pad VARCHAR(200))")
		cfg := testConfig(srv, name)
		cfg.Startup, cfg.StartPosition, cfg.MaxBatch = StartSpecific, gtidPos(t, db), 50
		src, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var connID atomic.Uint32
		src.onConnect = func(id uint32) { connID.Store(id) }
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out := make(chan change.Batch) // unbuffered: the stream waits for this test
		done := make(chan error, 1)
		go func() { done <- src.Run(ctx, out) }()

		testenv.Exec(t, db, fmt.Sprintf("INSERT INTO t SELECT seq, REPEAT('x', 200) FROM seq_1_to_%d", big)) // one transaction
		smallDone := make(chan error, 1)
		small := func() { // 100 small transactions, spread out so that the second KILL lands among them
			for i := big + 1; i <= big+100; i++ {
				if _, err := db.Exec(fmt.Sprintf("INSERT INTO t VALUES (%d, 'y')", i)); err != nil {
					smallDone <- err
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
			smallDone <- nil
		}
		var killed []uint32
		kill := func() {
			id := connID.Load()
			killed = append(killed, id)
			t.Logf("KILL %d", id)
			if _, err := db.Exec(fmt.Sprintf("KILL %d", id)); err != nil {
				t.Fatalf("KILL %d: %v", id, err)
			}
		}
		var keys []string
		batches, startedSmall := 0, false
		for len(keys) < big+100 {
			select {
			case b := <-out:
				batches++
				keys = append(keys, keysOf(b.Changes)...)
				reconnected := len(killed) > 0 && connID.Load() != killed[len(killed)-1]
				switch {
				case batches == 5: // in the middle of the big transaction
					kill()
				case reconnected && !startedSmall:
					startedSmall = true
					if len(keys) >= big {
						t.Fatalf("the first reconnection was seen after the big transaction (%d keys): nothing was resumed mid-transaction", len(keys))
					}
					go small()
				case reconnected && len(killed) == 1 && len(keys) >= big+30: // among the small ones
					kill()
				}
			case err := <-done:
				t.Fatalf("Run returned %v after %d keys", err, len(keys))
			case <-time.After(30 * time.Second):
				t.Fatalf("stuck after %d keys", len(keys))
			}
		}
		if err := <-smallDone; err != nil {
			t.Fatal(err)
		}
		if len(killed) != 2 {
			t.Fatalf("killed %v, want two connections", killed)
		}
		if !slices.Equal(keys, intKeys(1, big+100)) {
			t.Fatalf("keys not exactly 1..%d in order (%d keys)", big+100, len(keys))
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestHeartbeatAdvancesPosition writes only to a table that is not captured and expects an
// empty End batch whose position is past the writes.
func TestHeartbeatAdvancesPosition(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE captured (id INT PRIMARY KEY)", "CREATE TABLE other (id INT PRIMARY KEY)")
		cfg := testConfig(srv, name)
		cfg.Tables = func(d, tbl string) bool { return d == name && tbl == "captured" }
		startPos := gtidPos(t, db)
		cfg.Startup, cfg.StartPosition = StartSpecific, startPos
		r := start(t, cfg)
		for i := 1; i <= 3; i++ {
			testenv.Exec(t, db, fmt.Sprintf("INSERT INTO other VALUES (%d)", i))
		}
		want := gtidPos(t, db)
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			b := r.next(t, 15*time.Second)
			if len(b.Changes) != 0 || !b.End {
				t.Fatalf("unexpected batch %+v", b)
			}
			pos, err := binlogpos.ParsePosition(string(b.Position))
			if err != nil {
				t.Fatal(err)
			}
			if c, ok := pos.Compare(want); ok && c >= 0 {
				return
			}
		}
		t.Fatal("no heartbeat reached the position after the writes")
	})
}

// TestPurgedPosition resumes from a binlog file the server does not have.
func TestPurgedPosition(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, _ := srv.Database(t)
		cfg := testConfig(srv, name)
		cfg.Position = binlogpos.Position{File: "mariadb-bin.000000", Offset: 4}
		src, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err = src.Run(ctx, make(chan change.Batch))
		var lost *PositionLostError
		if !errors.As(err, &lost) || IsRetryable(err) || !strings.Contains(err.Error(), "re-snapshot") {
			t.Fatalf("got %v, want a PositionLostError", err)
		}
		t.Log(err)
	})
}

// TestServerIDConflict starts two sources with one server id: the first is kicked off.
func TestServerIDConflict(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		cfg := testConfig(srv, name)
		cfg.Startup, cfg.StartPosition = StartSpecific, gtidPos(t, db)
		first := start(t, cfg)
		time.Sleep(500 * time.Millisecond)
		start(t, cfg)
		select {
		case err := <-first.done:
			var conflict *ServerIDConflictError
			if !errors.As(err, &conflict) {
				t.Fatalf("got %v, want a ServerIDConflictError", err)
			}
			t.Log(err)
			first.done <- nil // for the cleanup's stop
		case <-time.After(30 * time.Second):
			t.Fatal("the first source was not kicked off")
		}
	})
}

// TestNoPrimaryKey names a keyless captured table at start, and accepts it with a key
// override.
func TestNoPrimaryKey(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE keyless (a INT, b INT NOT NULL)")
		cfg := testConfig(srv, name)
		src, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = src.Run(context.Background(), make(chan change.Batch))
		var npk *schema.NoPrimaryKeyError
		if !errors.As(err, &npk) || !strings.Contains(err.Error(), name+".keyless") {
			t.Fatalf("got %v, want a NoPrimaryKeyError naming the table", err)
		}
		cfg.Keys = func(_, tbl string) ([]string, bool) { return []string{"b"}, tbl == "keyless" }
		cfg.Startup, cfg.StartPosition = StartSpecific, gtidPos(t, db)
		r := start(t, cfg)
		testenv.Exec(t, db, "INSERT INTO keyless VALUES (1, 2)")
		changes, _ := r.changesUntil(t, isRow)
		if k := changes[0].Schema.Key; !slices.Equal(k, []int{1}) {
			t.Fatalf("key %v, want [1]", k)
		}
	})
}

// TestGTIDServerIDChange writes in domain 0 under another server id (a simulated
// fail-over) and back, then resumes from each End position.
func TestGTIDServerIDChange(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)")
		cfg := testConfig(srv, name)
		cfg.Startup, cfg.StartPosition = StartSpecific, gtidPos(t, db)
		r := start(t, cfg)
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		testenvExec(t, conn, "INSERT INTO t VALUES (1)", "SET SESSION server_id = 2", "INSERT INTO t VALUES (2)",
			"SET SESSION server_id = 1", "INSERT INTO t VALUES (3)", "INSERT INTO t VALUES (4)")
		var ends []change.Batch
		for len(ends) < 4 {
			_, end := r.changesUntil(t, isRow)
			ends = append(ends, end)
		}
		for i, end := range ends[:3] {
			pos, err := binlogpos.ParsePosition(string(end.Position))
			if err != nil {
				t.Fatal(err)
			}
			if len(pos.MariaDB) == 0 {
				t.Fatalf("End position %s has no GTID", end.Position)
			}
			cfg := testConfig(srv, name)
			cfg.Position = binlogpos.Position{MariaDB: pos.MariaDB}
			rr := start(t, cfg)
			changes, _ := rr.changesUntil(t, isRow)
			if got, want := keysOf(changes)[0], fmt.Sprintf("int:%d", i+2); got != want {
				t.Fatalf("resume from %s: first key %s, want %s", pos.MariaDBString(), got, want)
			}
			rr.stop(t)
		}
	})
}

// TestDDLMidStream alters a captured table between inserts: every row carries the columns
// of its time, and each DDL surfaces a SchemaChange with a new version.
func TestDDLMidStream(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10))")
		cfg := testConfig(srv, name)
		cfg.Startup, cfg.StartPosition = StartSpecific, gtidPos(t, db)
		src, r := startSource(t, cfg, nil)
		waitHistory(t, src) // the shapes at the start position are read before the DDL runs
		testenv.Exec(t, db,
			"INSERT INTO t VALUES (1, 10, 'one')",
			"ALTER TABLE t ADD COLUMN c DATE AFTER id",
			"INSERT INTO t VALUES (2, '2024-01-02', 20, 'two')",
			"ALTER TABLE t DROP COLUMN a",
			"INSERT INTO t VALUES (3, '2024-01-03', 'three')",
			"ALTER TABLE t RENAME COLUMN b TO bee",
			"INSERT INTO t VALUES (4, NULL, 'four')",
			"ALTER TABLE t MODIFY bee VARCHAR(20) CHARACTER SET latin1, MODIFY c DATETIME(3)",
			"INSERT INTO t VALUES (5, '2024-01-05 10:11:12.5', 'fünf')",
			"CREATE TABLE t2 (k BIGINT UNSIGNED PRIMARY KEY)",
			"INSERT INTO t2 VALUES (18446744073709551615)",
		)
		changes, _ := r.changesUntil(t, func(c change.Change) bool { return c.Schema.Table.Table == "t2" && c.Op == change.Insert })
		// Rows are decoded with the columns of their time, and each SchemaChange announces the
		// shape right after its DDL (from the schema history, not from information_schema when
		// the stream reaches the DDL, which may be later), so the whole stream goes to the golden
		// file whatever the stream's lag.
		versions := map[string]uint64{}
		for _, c := range changes {
			name := c.Schema.Table.Table
			if c.Schema.Version < versions[name] {
				t.Errorf("%s: version %d after %d", name, c.Schema.Version, versions[name])
			}
			versions[name] = c.Schema.Version
		}
		if versions["t"] < 5 {
			t.Errorf("table t reached version %d after four DDL, want at least 5", versions["t"])
		}
		golden(t, "ddl.golden", renderPlain(changes))
	})
}

// TestMinimalRowImageStops: a session writing with binlog_row_image MINIMAL leaves columns
// out of its row images; the stream stops with the fix instead of writing them as NULL.
func TestMinimalRowImageStops(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)", "INSERT INTO t VALUES (1, 2, 3)")
		cfg := testConfig(srv, name)
		cfg.Startup, cfg.StartPosition = StartSpecific, gtidPos(t, db)
		r := start(t, cfg)
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		testenvExec(t, conn, "SET SESSION binlog_row_image = 'MINIMAL'", "UPDATE t SET a = 5 WHERE id = 1")
		deadline := time.After(20 * time.Second)
		for {
			select {
			case err := <-r.done:
				if err == nil || !strings.Contains(err.Error(), "binlog_row_image = FULL") || IsRetryable(err) {
					t.Fatalf("Run ended with %v, want a fatal error asking for binlog_row_image = FULL", err)
				}
				t.Log(err)
				close(r.done)
				return
			case b := <-r.out:
				for _, c := range b.Changes {
					if c.Op != change.SchemaChange {
						t.Fatalf("the minimal image became a change: %v", render(b.Changes))
					}
				}
			case <-deadline:
				t.Fatal("the stream neither stopped nor sent a change")
			}
		}
	})
}

// TestWideRowBatches: a transaction of wide rows is sent in batches of about
// binlog.MaxBatchBytes of rows events, not of MaxBatch changes, and every change arrives
// once, in order, the last batch with End.
func TestWideRowBatches(t *testing.T) {
	srv := testenv.Primary()
	name, db := srv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE w (id INT PRIMARY KEY, p LONGTEXT NOT NULL)")
	cfg := testConfig(srv, name)
	cfg.Startup, cfg.StartPosition = StartSpecific, gtidPos(t, db)
	r := start(t, cfg)
	// 60 rows of 512 KiB in one transaction: 30 MiB of rows events, 4 MiB at most per batch.
	testenv.Exec(t, db, "INSERT INTO w SELECT seq, REPEAT(CHAR(65 + seq % 26), 524288) FROM seq_1_to_60")
	perBatch := binlog.MaxBatchBytes/(512<<10) + 1 // the rows of the event that crosses the bound join the batch
	var sizes []int
	var keys []string
	for {
		b := r.nextChanges(t, 30*time.Second)
		sizes = append(sizes, len(b.Changes))
		keys = append(keys, keysOf(b.Changes)...)
		if len(b.Changes) > perBatch {
			t.Errorf("a batch of %d rows of 512 KiB, want at most %d", len(b.Changes), perBatch)
		}
		if b.End {
			break
		}
	}
	if len(sizes) < 4 || !slices.Equal(keys, intKeys(1, 60)) {
		t.Fatalf("batch sizes %v keys %v", sizes, keys)
	}
}
