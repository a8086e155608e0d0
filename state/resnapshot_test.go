package state

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ingestkit/ingest/change"
)

func TestResnapshotRequest(t *testing.T) {
	dir := t.TempDir()
	a, b, c := change.TableID{DB: "d", Table: "a"}, change.TableID{DB: "d", Table: "b"}, change.TableID{DB: "d", Table: "c"}
	if err := RequestResnapshot(dir, []change.TableID{a}); err == nil {
		t.Fatal("a request for a directory without pipeline state was accepted")
	}
	st, err := Open(dir, Identity{Pipeline: "p", Source: "s", Tables: "d.*"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got, err := ResnapshotRequested(dir); err != nil || got != nil {
		t.Fatalf("no request: got %v, %v", got, err)
	}
	// The request is written while the store (a running apply) holds the directory's lock.
	if err := RequestResnapshot(dir, []change.TableID{a, b}); err != nil {
		t.Fatal(err)
	}
	if err := RequestResnapshot(dir, []change.TableID{b, c}); err != nil {
		t.Fatal(err)
	}
	if got, _ := ResnapshotRequested(dir); !slices.Equal(got, []change.TableID{a, b, c}) {
		t.Fatalf("requested %v, want a, b and c once each", got)
	}
	if err := st.ResnapshotTaken([]change.TableID{a, c}); err != nil {
		t.Fatal(err)
	}
	if got, _ := ResnapshotRequested(dir); !slices.Equal(got, []change.TableID{b}) {
		t.Fatalf("after a and c were taken: %v, want b", got)
	}
	if err := st.ResnapshotTaken([]change.TableID{b}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, resnapshotFile)); !os.IsNotExist(err) {
		t.Fatalf("the request file is still there once every table is taken: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, resnapshotFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ResnapshotRequested(dir); err == nil {
		t.Fatal("a damaged request reads without an error")
	}
}
