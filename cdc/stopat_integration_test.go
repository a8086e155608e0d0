//go:build integration

package cdc

import (
	"context"
	"testing"
	"time"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
)

// TestStopAt is the source half of --until-caught-up: a stream with StopAt delivers
// everything up to it and returns nil, and a second run from there returns at once.
func TestStopAt(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)", "CREATE TABLE other (id INT PRIMARY KEY)")
		from := gtidPos(t, db)
		testenv.Exec(t, db, "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)",
			"INSERT INTO other VALUES (1)") // the last transaction touches no captured table

		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cfg := testConfig(srv, name)
		cfg.Tables = func(d, tbl string) bool { return d == name && tbl == "t" }
		cfg.Position = from
		target, err := CurrentPosition(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.StopAt = target

		batches := runToEnd(ctx, t, cfg)
		var ids []int64
		var last change.Batch
		for _, b := range batches {
			for _, c := range b.Changes {
				ids = append(ids, c.After[0].Int())
			}
			if b.End {
				last = b
			}
		}
		if len(ids) != 2 || ids[0] != 1 || ids[1] != 2 {
			t.Fatalf("rows %v, want [1 2]", ids)
		}
		end, err := binlogpos.ParsePosition(string(last.Position))
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := end.Compare(target); !ok || c < 0 {
			t.Fatalf("last End position %s is before the target %s", end, target)
		}

		cfg.Position = end
		for _, b := range runToEnd(ctx, t, cfg) {
			if len(b.Changes) != 0 || string(b.Position) != end.String() {
				t.Fatalf("a run from the caught-up position sent %d changes at %s, want only a heartbeat at %s", len(b.Changes), b.Position, end)
			}
		}
	})
}

// runToEnd runs a source that must stop by itself and returns what it sent.
func runToEnd(ctx context.Context, t *testing.T, cfg Config) []change.Batch {
	t.Helper()
	src, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan change.Batch, 16)
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, out); close(out) }()
	var got []change.Batch
	for b := range out {
		got = append(got, b)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the source did not stop by itself before the deadline")
	}
	return got
}
