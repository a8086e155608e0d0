package upsert

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// apply plays records into live (part → value) as compaction would keep them.
func apply(t *testing.T, pipeline string, live map[string][]byte, recs []*kgo.Record) {
	t.Helper()
	for _, r := range recs {
		part, ok := statePart(pipeline, string(r.Key))
		if !ok {
			t.Fatalf("record key %q is not one of %s's", r.Key, pipeline)
		}
		if r.Value == nil {
			delete(live, part)
		} else {
			live[part] = r.Value
		}
	}
}

func chunks(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf(`{"n":%d}`, i))
	}
	return out
}

// TestStateWriter: each write stores only what changed, and reading the records back
// gives the checkpoint written, through a snapshot, its end, and a migration from
// version 1.
func TestStateWriter(t *testing.T) {
	const p = "orders"
	s1 := []Part{{Key: "d.a", Value: []byte(`{"a":1}`)}, {Key: "d.b", Value: []byte(`{"b":1}`)}}
	s2 := []Part{{Key: "d.a", Value: []byte(`{"a":2}`)}, {Key: "d.c", Value: []byte(`{"c":1}`)}}
	legacy := []byte(`{"version":1,"position":"ZmlsZS4wMDAwMDE6NA==","progress":"e30="}`)
	steps := []struct {
		name  string
		cp    Checkpoint
		keys  []string // the keys written, in order
		check func(t *testing.T, got *Checkpoint)
	}{
		{name: "first chunks", cp: Checkpoint{State: State{Snapshot: []byte(`{"since":"a"}`), Chunks: chunks(2), SchemaParts: s1}},
			keys: []string{"identity", "chunk/00000000", "chunk/00000001", "snapshot", "schema/d.a", "schema/d.b", "position", ""}},
		{name: "one more chunk", cp: Checkpoint{State: State{Snapshot: []byte(`{"since":"a"}`), Chunks: chunks(3), SchemaParts: s1}},
			keys: []string{"chunk/00000002", "position"}},
		{name: "snapshot done", cp: Checkpoint{Position: []byte("f:9"), State: State{Snapshot: []byte(`{"done":true}`), Chunks: chunks(3), SchemaParts: s1}},
			keys: []string{"snapshot", "position"}},
		{name: "hand-off over", cp: Checkpoint{Position: []byte("f:10"), State: State{SchemaParts: s2}},
			keys: []string{"schema/d.a", "schema/d.c", "position", "snapshot", "schema/d.b", "chunk/00000000", "chunk/00000001", "chunk/00000002"}},
		{name: "stream", cp: Checkpoint{Position: []byte("f:11"), State: State{SchemaParts: s2}},
			keys: []string{"position"}},
	}
	live := map[string][]byte{"": legacy}
	st, err := assemble(p, live)
	if err != nil || string(st.Checkpoint.Position) != "file.000001:4" || string(st.Checkpoint.State.Legacy) != "{}" {
		t.Fatalf("version 1: %+v, %v", st.Checkpoint, err)
	}
	w := newStateWriter(&Config{Pipeline: p, StateTopic: "st", Identity: []byte(`{"id":1}`)}, 0, st)
	for _, step := range steps {
		recs := w.records(&step.cp)
		var keys []string
		for _, r := range recs {
			part, _ := statePart(p, string(r.Key))
			keys = append(keys, part)
		}
		if strings.Join(keys, " ") != strings.Join(step.keys, " ") {
			t.Errorf("%s: wrote %q, want %q", step.name, keys, step.keys)
		}
		apply(t, p, live, recs)
		got, err := assemble(p, live)
		if err == nil {
			err = checkChunks(p, got)
		}
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if fmt.Sprintf("%q", got.Checkpoint.Position) != fmt.Sprintf("%q", step.cp.Position) ||
			fmt.Sprintf("%s", got.Checkpoint.State.Chunks) != fmt.Sprintf("%s", step.cp.State.Chunks) ||
			string(got.Checkpoint.State.Snapshot) != string(step.cp.State.Snapshot) ||
			fmt.Sprintf("%s", got.Checkpoint.State.SchemaParts) != fmt.Sprintf("%s", step.cp.State.SchemaParts) {
			t.Errorf("%s: read back %+v, want %+v", step.name, got.Checkpoint, step.cp)
		}
		if string(got.Identity) != `{"id":1}` {
			t.Errorf("%s: identity %s", step.name, got.Identity)
		}
	}
	// After a lost write, everything is written again, and stale chunks are tombstoned.
	w.forget()
	recs := w.records(&Checkpoint{Position: []byte("f:12"), State: State{Snapshot: []byte(`{}`), Chunks: chunks(1)}})
	if len(recs) != 9 { // identity, chunk 0, snapshot, position; shapes, schema d.a, d.c, chunks 1 and 2 tombstoned
		t.Errorf("rewrite after a loss: %d records", len(recs))
	}
}

// TestStateKeys: no key of one pipeline is taken for another's, even when a name holds '/'.
func TestStateKeys(t *testing.T) {
	tests := []struct {
		pipeline, key string
		ok            bool
	}{
		{"a", "a", true},
		{"a", "a/position", true},
		{"a", "a/chunk/00000012", true},
		{"a", "a/chunk/12", false},
		{"a", "a/chunk/position", false},
		{"a/chunk", "a/chunk/00000012", false},
		{"a", "ab/position", false},
		{"a", "a/other", false},
	}
	for _, tc := range tests {
		if _, ok := statePart(tc.pipeline, tc.key); ok != tc.ok {
			t.Errorf("statePart(%q, %q) = %v, want %v", tc.pipeline, tc.key, ok, tc.ok)
		}
	}
}

// TestStateGap: a missing chunk record is an error, not a shorter progress.
func TestStateGap(t *testing.T) {
	live := map[string][]byte{"position": []byte(`{"version":2,"position":""}`), "snapshot": []byte(`{}`),
		"chunk/00000000": []byte(`{}`), "chunk/00000002": []byte(`{}`)}
	st, err := assemble("p", live)
	if err == nil {
		err = checkChunks("p", st)
	}
	if err == nil || !strings.Contains(err.Error(), "p/chunk/00000001") {
		t.Errorf("err = %v", err)
	}
}
