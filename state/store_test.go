package state

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var testID = Identity{Pipeline: "p", Source: "127.0.0.1:3307", Tables: "app.\\.*"}

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, testID)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if cp, err := s.Load(); err != nil || cp != nil {
		t.Fatalf("fresh Load = %v, %v; want nil, nil", cp, err)
	}
	want := Checkpoint{Position: "mariadb:0-1-42", Snapshot: json.RawMessage(`{"done":[1,2]}`)}
	if err := s.Save(want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got.Position != want.Position || string(got.Snapshot) != string(want.Snapshot) || got.SavedAt.IsZero() {
		t.Fatalf("Load = %+v, want %+v with SavedAt set", got, want)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp*")); len(tmps) != 0 {
		t.Fatalf("temporary files left behind: %v", tmps)
	}
}

func TestSecondOpenIsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, testID)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, testID)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), "held by pid") {
		t.Errorf("message does not name the holder: %v", err)
	}
	s.Close()
	s2, err := Open(dir, testID)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s2.Close()
}

func TestForeignStateIsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, testID)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	tests := []struct {
		name string
		id   Identity
		want string
	}{
		{"other pipeline", Identity{Pipeline: "q", Source: testID.Source, Tables: testID.Tables}, `pipeline "p" (this pipeline: "q")`},
		{"other server", Identity{Pipeline: "p", Source: "db2:3306", Tables: testID.Tables}, `source "127.0.0.1:3307" (this pipeline: "db2:3306")`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(dir, tc.id)
			var mm *MismatchError
			if !errors.As(err, &mm) {
				t.Fatalf("Open: %v, want *MismatchError", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--state") {
				t.Errorf("message %q lacks %q or the fix", err, tc.want)
			}
		})
	}
}

func TestFailedSaveKeepsLastCheckpoint(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, testID)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Save(Checkpoint{Position: "good"}); err != nil {
		t.Fatal(err)
	}
	// A value that cannot be encoded makes the write fail before anything is replaced.
	if err := s.Save(Checkpoint{Position: "bad", Snapshot: json.RawMessage(`{not json`)}); err == nil {
		t.Fatal("Save of an unencodable checkpoint succeeded")
	}
	cp, err := s.Load()
	if err != nil || cp.Position != "good" {
		t.Fatalf("after a failed Save, Load = %+v, %v; want the last good checkpoint", cp, err)
	}
}

func TestDamagedCheckpointIsAnError(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, testID)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := os.WriteFile(filepath.Join(dir, checkpointFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("Load of a damaged file: %v", err)
	}
}

func TestPeekReadsWithoutTheLock(t *testing.T) {
	dir := t.TempDir()
	if id, cp, err := Peek(dir); err != nil || id != nil || cp != nil {
		t.Fatalf("Peek of an empty dir = %v, %v, %v", id, cp, err)
	}
	s, err := Open(dir, testID)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Save(Checkpoint{Position: "p1"}); err != nil {
		t.Fatal(err)
	}
	id, cp, err := Peek(dir)
	if err != nil || *id != testID || cp.Position != "p1" {
		t.Fatalf("Peek while locked = %v, %v, %v", id, cp, err)
	}
}

// TestRecordServer records the server identity once and keeps it across opens, which do not
// compare it (the runner does, once connected).
func TestRecordServer(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, testID)
	if err != nil {
		t.Fatal(err)
	}
	if s.Server() != "" {
		t.Fatalf("fresh Server() = %q", s.Server())
	}
	if err := s.RecordServer("server_id=1;gtid_domains=0"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(dir, testID) // the caller does not know the server yet
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if s.Server() != "server_id=1;gtid_domains=0" {
		t.Fatalf("Server() = %q after reopen", s.Server())
	}
	id, _, err := Peek(dir)
	if err != nil || id.Pipeline != testID.Pipeline || id.Server != "server_id=1;gtid_domains=0" {
		t.Fatalf("Peek = %+v, %v", id, err)
	}
	s.Close()
	other := testID
	other.Tables = "other.*"
	s, err = Open(dir, other)
	if err != nil {
		t.Fatalf("Open with other tables: %v", err)
	}
	if s.Tables() != testID.Tables || !s.TablesChanged() {
		t.Fatalf("other tables: Tables() = %q, changed %v; want the stored %q, changed", s.Tables(), s.TablesChanged(), testID.Tables)
	}
	if err := s.RecordTables(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(dir, other)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Tables() != "other.*" || s.TablesChanged() || s.Server() != "server_id=1;gtid_domains=0" {
		t.Fatalf("after RecordTables: Tables() = %q, changed %v, server %q", s.Tables(), s.TablesChanged(), s.Server())
	}
}
