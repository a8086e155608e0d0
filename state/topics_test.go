package state

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPartitionsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, testID)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Partitions(); err != nil || len(got) != 0 {
		t.Fatalf("fresh Partitions = %v, %v; want an empty map", got, err)
	}
	want := map[string]int32{"app.orders": 3, "shops": 12}
	if err := s.SavePartitions(want); err != nil {
		t.Fatal(err)
	}
	for name, read := range map[string]func() (map[string]int32, error){
		"Partitions":     s.Partitions,
		"PeekPartitions": func() (map[string]int32, error) { return PeekPartitions(dir, nil) },
	} {
		got, err := read()
		if err != nil || !maps.Equal(got, want) {
			t.Errorf("%s = %v, %v; want %v", name, got, err, want)
		}
	}
	if cp, err := s.Load(); err != nil || cp != nil {
		t.Errorf("SavePartitions touched the checkpoint: %v, %v", cp, err)
	}
}

func TestPartitionsDamaged(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, topicsFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := PeekPartitions(dir, nil)
	if err == nil || !strings.Contains(err.Error(), "is damaged") {
		t.Fatalf("PeekPartitions of a damaged file = %v, want the damaged-state error", err)
	}
}
