package runner

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ingestkit/ingest/cdc/snapshot"
	"github.com/ingestkit/ingest/upsert"
)

func progressWith(n int) *snapshot.Progress {
	p := &snapshot.Progress{Since: "file=b.1:4"}
	for i := range n {
		p.Chunks = append(p.Chunks, snapshot.DoneChunk{DB: "d", Table: "t", Low: "file=b.1:4", High: fmt.Sprintf("file=b.1:%d", 5+i), Rows: 2})
	}
	return p
}

// TestProgressParts: the parts of a progress join into the same progress, and a chunk is
// encoded only once however often the progress is split.
func TestProgressParts(t *testing.T) {
	var c chunkParts
	p := progressWith(3)
	head, chunks, err := c.parts(p)
	if err != nil || len(chunks) != 3 {
		t.Fatalf("parts: %d chunks, %v", len(chunks), err)
	}
	first := &chunks[0][0]
	p.Chunks = append(p.Chunks, progressWith(4).Chunks[3])
	_, chunks, _ = c.parts(p)
	if len(chunks) != 4 || &chunks[0][0] != first {
		t.Error("a chunk was encoded again")
	}
	got, err := progressOf(head, chunks[:3])
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(progressWith(3))
	if b, _ := json.Marshal(got); string(b) != string(want) {
		t.Errorf("joined %s, want %s", b, want)
	}
}

// TestLegacyCheckpoint: a version-1 state record's progress (the whole snapshot progress
// and the schema history in one value) is read as the parts.
func TestLegacyCheckpoint(t *testing.T) {
	whole, _ := json.Marshal(progressWith(2))
	legacy, _ := json.Marshal(legacyExtra{Snapshot: whole, Schema: []byte(`{"format":1}`)})
	cp, err := checkpointOf(upsert.Checkpoint{Position: []byte("file=b.1:9"), State: upsert.State{Legacy: legacy}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := progressOf(cp.Snapshot, cp.Chunks)
	if err != nil || len(p.Chunks) != 2 || string(cp.Schema) != `{"format":1}` || cp.Position != "file=b.1:9" {
		t.Fatalf("%+v %+v %v", cp, p, err)
	}
}
