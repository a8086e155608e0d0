package runner

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
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

// TestProgressHead: the head of a progress is the JSON of the progress without its chunks,
// byte for byte, whatever fields are set, and the captured set is encoded once while the
// progress shares its slice.
func TestProgressHead(t *testing.T) {
	set := []snapshot.TableState{{DB: "d", Table: "a", Done: true}, {DB: "d", Table: "b\"q", From: "file=b.1:9", Skipped: snapshot.SkippedNoKey}}
	cases := map[string]snapshot.Progress{
		"nothing set":      {},
		"no table matched": {Tables: []snapshot.TableState{}, ListedAt: "file=b.1:4"},
		"done":             {Done: true, Tables: set},
		"since":            {Since: "file=b.1:4", Tables: set, ListedAt: "file=b.1:3"},
		"all":              {Done: true, Since: "file=b.1:4", Tables: set, ListedAt: "file=b.1:3", Chunks: progressWith(2).Chunks},
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			var c chunkParts
			got, err := c.head(&p)
			if err != nil {
				t.Fatal(err)
			}
			rest := p
			rest.Chunks = nil
			want, _ := json.Marshal(rest)
			if string(got) != string(want) {
				t.Errorf("head %s, want %s", got, want)
			}
		})
	}
	var c chunkParts
	p := snapshot.Progress{Tables: set}
	if _, err := c.head(&p); err != nil {
		t.Fatal(err)
	}
	enc := &c.tablesEnc[0]
	p.Since = "file=b.1:7"
	if _, err := c.head(&p); err != nil || &c.tablesEnc[0] != enc {
		t.Errorf("the same set was encoded again (%v)", err)
	}
	p.Tables = slices.Clone(set)
	p.Tables[0].Done = false
	got, _ := c.head(&p)
	if want, _ := json.Marshal(p); string(got) != string(want) {
		t.Errorf("a changed set: head %s, want %s", got, want)
	}
}

// progressHeadFields are the JSON names of snapshot.Progress's fields that head writes, in
// order, after "chunks" (which it leaves out).
var progressHeadFields = []string{"done", "since", "tables", "listed_at"}

// TestProgressHeadFields: head writes every JSON field of snapshot.Progress but chunks; a
// field added there must be added to head too.
func TestProgressHeadFields(t *testing.T) {
	typ := reflect.TypeFor[snapshot.Progress]()
	var names []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "chunks" {
			names = append(names, name)
		}
	}
	if !slices.Equal(names, progressHeadFields) {
		t.Errorf("snapshot.Progress has the fields %v after chunks; head writes %v", names, progressHeadFields)
	}
}
