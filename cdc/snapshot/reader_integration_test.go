//go:build integration

package snapshot

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
)

// runSnapshot runs s to the end, returning every batch it sent.
func runSnapshot(t *testing.T, s *Snapshot) ([]change.Batch, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := make(chan change.Batch, 4)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, out); close(out) }()
	var batches []change.Batch
	for b := range out {
		batches = append(batches, b)
	}
	return batches, <-done
}

// checkTransactions checks the batch framing: End batches carry tokens, FetchSize holds.
func checkTransactions(t *testing.T, batches []change.Batch, fetch int) {
	t.Helper()
	for i, b := range batches {
		if len(b.Changes) > fetch {
			t.Errorf("batch %d has %d changes, fetch size %d", i, len(b.Changes), fetch)
		}
		if b.End != IsToken(b.Position) || (!b.End && b.Position != nil) {
			t.Errorf("batch %d: End %v with position %q", i, b.End, b.Position)
		}
	}
	if len(batches) == 0 || !batches[len(batches)-1].End || len(batches[len(batches)-1].Changes) != 0 {
		t.Errorf("the last batch is not the empty end marker")
	}
}

func TestReadQuietTables(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db,
			"SET time_zone = '+05:30'",
			"CREATE TABLE a (id INT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(12,2), ts TIMESTAMP(6) NULL, bin VARBINARY(8))",
			"INSERT INTO a SELECT seq, IF(seq % 7 = 0, NULL, CONCAT('n', seq)), seq / 100, FROM_UNIXTIME(1000000 + seq + 0.5), IF(seq % 5 = 0, '', UNHEX(HEX(seq))) FROM seq_1_to_2345",
			"CREATE TABLE e (a INT, b INT, PRIMARY KEY (a, b))")
		ida, ide := change.TableID{DB: name, Table: "a"}, change.TableID{DB: name, Table: "e"}
		cfg := testConfig(srv, ida, ide)
		cfg.Parallelism, cfg.FetchSize = 2, 300
		var progress []TableProgress
		cfg.OnProgress = func(p TableProgress) { progress = append(progress, p) }
		s := New(cfg)
		batches, err := runSnapshot(t, s)
		if err != nil {
			t.Fatal(err)
		}
		checkTransactions(t, batches, 300)
		got := map[int64]change.Row{}
		for _, b := range batches {
			for _, c := range b.Changes {
				if c.Op != change.Insert || c.Schema.Table != ida {
					t.Fatalf("unexpected change %v of %s", c.Op, c.Schema.Table)
				}
				got[c.After[0].Int()] = c.After
			}
		}
		if len(got) != 2345 {
			t.Fatalf("%d rows, want 2345", len(got))
		}
		for _, id := range []int64{1, 7, 10, 2345} {
			row := got[id]
			ts := change.TimestampValue((1000000+id)*1e6 + 500000)
			if row[3].Kind != ts.Kind || row[3].Num != ts.Num {
				t.Errorf("id %d: ts %+v, want %+v (UTC instant whatever the writer's zone)", id, row[3], ts)
			}
			if (id%7 == 0) != row[1].IsNull() {
				t.Errorf("id %d: name %+v", id, row[1])
			}
			if (id%5 == 0) != (row[4].Kind == change.Bytes && len(row[4].Bytes) == 0) {
				t.Errorf("id %d: bin %+v (empty, not NULL, for multiples of 5)", id, row[4])
			}
		}
		p, err := s.ProgressAt(batches[len(batches)-1].Position)
		if err != nil || !p.Done {
			t.Fatalf("final progress %+v, %v", p, err)
		}
		// A restart after the snapshot: nothing is read again, and the hand-off is the same.
		h1, err := s.Handoff(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		cfg.Resume = &p
		again := New(cfg)
		if batches, err := runSnapshot(t, again); err != nil || len(batches) != 0 {
			t.Fatalf("a done snapshot ran again: %d batches, %v", len(batches), err)
		}
		h2, err := again.Handoff(context.Background())
		if err != nil || h2.Start().String() != h1.Start().String() || !h1.Start().HasGTID() {
			t.Fatalf("hand-off after restart: %v, start %s, want %s with a GTID", err, h2.Start(), h1.Start())
		}
		rows := map[string]int64{}
		for _, d := range p.Chunks {
			rows[d.Table] += d.Rows
		}
		if rows["a"] != 2345 || rows["e"] != 0 {
			t.Errorf("progress rows %v", rows)
		}
		final := map[change.TableID]TableProgress{}
		for _, p := range progress {
			final[p.Table] = p
		}
		if final[ida].Rows != 2345 || final[ide].Chunks != 1 || final[ida].Chunks != int64(len(p.Chunks)-1) {
			t.Errorf("progress callback ends with %+v", final)
		}
	})
}

// TestTLSReachesConnections: Config.TLS is used by the snapshot's connections. The test
// server has no TLS, so a snapshot asked to use it must fail to connect, saying why.
func TestTLSReachesConnections(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE a (id INT PRIMARY KEY)", "INSERT INTO a VALUES (1)")
	cfg := testConfig(testenv.Primary(), change.TableID{DB: name, Table: "a"})
	cfg.TLS = &tls.Config{ServerName: "localhost", MinVersion: tls.VersionTLS12}
	_, err := runSnapshot(t, New(cfg))
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "tls") {
		t.Fatalf("snapshot with TLS against a server without it: %v, want a TLS error", err)
	}
	t.Logf("as expected: %v", err)
}

// TestReadWideRows: a table of 512 KiB rows is read in pieces of about pieceBytes (by its
// AVG_ROW_LENGTH), not in chunks of ChunkSize rows held whole, and every row arrives.
func TestReadWideRows(t *testing.T) {
	srv := testenv.Primary()
	name, db := srv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE w (id INT PRIMARY KEY, p LONGTEXT NOT NULL)",
		"INSERT INTO w SELECT seq, REPEAT(CHAR(65 + seq % 26), 524288) FROM seq_1_to_100",
		"ANALYZE TABLE w")
	id := change.TableID{DB: name, Table: "w"}
	s := New(testConfig(srv, id))
	batches, err := runSnapshot(t, s)
	if err != nil {
		t.Fatal(err)
	}
	perPiece := int(pieceBytes / (512 << 10)) // 8
	rows, pieces, piece := 0, 0, 0
	for _, b := range batches {
		rows += len(b.Changes)
		piece += len(b.Changes)
		if b.End {
			if piece > perPiece+perPiece/2 { // AVG_ROW_LENGTH is InnoDB's estimate
				t.Errorf("a piece of %d rows of 512 KiB (%d MiB), want about %d", piece, piece/2, perPiece)
			}
			if piece > 0 {
				pieces++
			}
			piece = 0
		}
	}
	if rows != 100 || pieces < 8 {
		t.Errorf("%d rows in %d pieces, want 100 rows in about %d pieces", rows, pieces, 100/perPiece)
	}
}
