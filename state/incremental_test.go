package state

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func lines(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf(`{"n":%d}`, i))
	}
	return out
}

// TestSaveWritesWhatChanged: chunks are appended to chunks.jsonl and never rewritten while
// they only grow, schema.json is written only when the history changes, and each Load
// gives back what was saved; a checkpoint.json of the earlier form (everything in it) is
// still read.
func TestSaveWritesWhatChanged(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, testID)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mtime := func(name string) time.Time {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return time.Time{}
		}
		return fi.ModTime()
	}
	schema := []byte(`{"format":1}`)
	steps := []struct {
		name          string
		cp            Checkpoint
		chunksWritten bool // chunks.jsonl is written
		schemaWritten bool
	}{
		{"first", Checkpoint{Snapshot: []byte(`{}`), Chunks: lines(2), Schema: schema}, true, true},
		{"more chunks", Checkpoint{Snapshot: []byte(`{}`), Chunks: lines(5), Schema: schema}, true, false},
		{"same chunks", Checkpoint{Position: "f:1", Snapshot: []byte(`{"done":true}`), Chunks: lines(5), Schema: schema}, false, false},
		{"snapshot over", Checkpoint{Position: "f:2", Schema: []byte(`{"format":1,"x":1}`)}, false, true},
		{"a new snapshot", Checkpoint{Snapshot: []byte(`{}`), Chunks: lines(1), Schema: schema}, true, true},
	}
	for _, step := range steps {
		chunksAt, schemaAt := mtime(chunksFile), mtime(schemaFile)
		time.Sleep(10 * time.Millisecond) // mtimes differ
		if err := s.Save(step.cp); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := !mtime(chunksFile).Equal(chunksAt); got != step.chunksWritten {
			t.Errorf("%s: chunks.jsonl written %v, want %v", step.name, got, step.chunksWritten)
		}
		if got := !mtime(schemaFile).Equal(schemaAt); got != step.schemaWritten {
			t.Errorf("%s: schema.json written %v, want %v", step.name, got, step.schemaWritten)
		}
		got, err := s.Load()
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got.Position != step.cp.Position || string(got.Snapshot) != string(step.cp.Snapshot) ||
			fmt.Sprintf("%s", got.Chunks) != fmt.Sprintf("%s", step.cp.Chunks) || string(got.Schema) != string(step.cp.Schema) {
			t.Errorf("%s: Load = %+v, want %+v", step.name, got, step.cp)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, checkpointFile))
	if strings.Contains(string(b), `"n":`) {
		t.Errorf("checkpoint.json holds chunks: %s", b)
	}
	old := `{"position":"f:3","snapshot":{"chunks":[{"rows":1}]},"schema":{"format":1},"saved_at":"2026-01-02T03:04:05Z"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, checkpointFile), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load()
	if err != nil || got.Position != "f:3" || string(got.Snapshot) != `{"chunks":[{"rows":1}]}` || string(got.Schema) != `{"format":1}` {
		t.Errorf("earlier form: %+v, %v", got, err)
	}
}
