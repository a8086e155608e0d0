//go:build integration

package snapshot

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
)

// crashAfter runs s and "crashes" (cancels Run) once it has received crashAt chunks. The
// stored progress is the ProgressAt of the token lag chunks back, as if the acks lagged, or
// the progress of Begin when lag is crashAt. It returns every batch received (a consumer saw
// them all) and the stored progress as JSON.
func crashAfter(t *testing.T, s *Snapshot, crashAt, lag int) ([]change.Batch, []byte) {
	t.Helper()
	begin, err := s.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make(chan change.Batch)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, out) }()
	var batches []change.Batch
	var tokens [][]byte
	for len(tokens) < crashAt {
		b := <-out
		batches = append(batches, b)
		if b.End {
			tokens = append(tokens, b.Position)
		}
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Run after the crash: %v", err)
	}
	p := begin
	if lag < crashAt {
		if p, err = s.ProgressAt(tokens[crashAt-1-lag]); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return batches, stored
}

// TestResumeAfterCrash crashes a snapshot of a table under writes between emitting chunks and
// storing their progress, resumes from the stored progress, and checks that the second run
// reads only the key ranges not stored, and that the consumer still never sees a value go
// backwards and ends equal to the table (keys deleted between the crash and the re-read get
// their tombstones).
func TestResumeAfterCrash(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		t.Run("acks lag", func(t *testing.T) { testResume(t, srv, 10, 3) })
		t.Run("nothing stored but Begin", func(t *testing.T) { testResume(t, srv, 6, 6) })
	})
}

func testResume(t *testing.T, srv testenv.Server, crashAt, lag int) {
	name, db := srv.Database(t)
	w := newWorkload(t, db, 12000)
	id := change.TableID{DB: name, Table: "t"}
	cfg := testConfig(srv, id)
	cfg.ChunkSize, cfg.Parallelism = 500, 2

	stop := make(chan struct{})
	var writers sync.WaitGroup
	for range 2 {
		writers.Add(1)
		go func() { defer writers.Done(); _ = w.run(stop) }()
	}
	first := New(cfg)
	seen, stored := crashAfter(t, first, crashAt, lag)
	var resume Progress
	if err := json.Unmarshal(stored, &resume); err != nil {
		t.Fatal(err)
	}
	if len(resume.Chunks) != crashAt-lag || resume.Done || resume.Since == "" {
		t.Fatalf("stored progress has %d chunks (done %v, since %q), want %d", len(resume.Chunks), resume.Done, resume.Since, crashAt-lag)
	}
	cfg.Resume = &resume
	second := New(cfg)
	batches, err := runSnapshot(t, second)
	time.Sleep(100 * time.Millisecond)
	close(stop)
	writers.Wait()
	if err != nil {
		t.Fatal(err)
	}
	end := masterPosition(t, db)

	final := second.Progress()
	rereadRows, storedRows := int64(0), int64(0)
	for _, d := range resume.Chunks {
		storedRows += d.Rows
	}
	for _, d := range final.Chunks[len(resume.Chunks):] {
		rereadRows += d.Rows
		for _, s := range resume.Chunks {
			if overlaps(t, s, d) {
				t.Errorf("resumed run read %s, which the stored chunk %s covers", d.chunk(), s.chunk())
			}
		}
	}
	tombstones := 0
	for _, b := range batches {
		for _, ch := range b.Changes {
			if ch.Op == change.Delete {
				tombstones++
			}
		}
	}
	t.Logf("stored %d chunks (%d rows); the resumed run read %d chunks (%d rows) with %d tombstones of keys gone since %s",
		len(resume.Chunks), storedRows, len(final.Chunks)-len(resume.Chunks), rereadRows, tombstones, resume.Since)
	if !final.Done || len(final.Chunks) <= len(resume.Chunks) {
		t.Fatalf("final progress: %d chunks, done %v", len(final.Chunks), final.Done)
	}

	c := newChecker(t)
	c.repeats = true
	for _, b := range append(seen, batches...) {
		for _, ch := range b.Changes {
			c.change(ch)
		}
	}
	h, err := second.Handoff(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	tbl, _ := testTable(t, cfg, id)
	sctx, scancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer scancel()
	err = streamTable(sctx, second.cfg, tbl, h.Start(), end, func(b change.Batch, pos binlogpos.Position) {
		kept, err := h.Filter(sctx, b, pos)
		if err != nil {
			t.Error(err)
			return
		}
		for _, ch := range kept.Changes {
			c.change(ch)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	c.matches(db)
}

// overlaps reports whether two chunks of the single-integer-key table share a key.
func overlaps(t *testing.T, a, b DoneChunk) bool {
	tbl := intTable()
	sa, err1 := newSpan(t.Context(), tbl, a.Lo, a.Hi)
	sb, err2 := newSpan(t.Context(), tbl, b.Lo, b.Hi)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	// They overlap unless one ends at or before the other starts.
	before := func(x, y span) bool { return x.hiV != nil && y.loV != nil && tbl.key.compare(x.hiV, y.loV) <= 0 }
	return !before(sa, sb) && !before(sb, sa)
}
