package state

import (
	"errors"
	"io/fs"
	"path/filepath"
	"time"
)

// topicsFile records the partition count of every topic the pipeline has written to: a
// key's partition is murmur2(key) modulo that count, so the count is part of the data's
// layout (see upsert/partition.go).
const topicsFile = "topics.json"

// topicsRecord is the content of topicsFile.
type topicsRecord struct {
	Partitions map[string]int32 `json:"partitions"`
	SavedAt    time.Time        `json:"saved_at"`
}

// Partitions returns the recorded partition count of each topic the pipeline has written
// to; an empty map when none is recorded.
func (s *Store) Partitions() (map[string]int32, error) { return readPartitions(s.dir, s.reveal) }

// SavePartitions replaces the record of partition counts atomically. It writes its own file,
// so it may be called while another goroutine calls [Store.Save].
func (s *Store) SavePartitions(counts map[string]int32) error {
	return writeJSONWith(s.dir, topicsFile, topicsRecord{Partitions: counts, SavedAt: time.Now().UTC()}, s.hide)
}

// PeekPartitions reads the recorded partition counts of a state directory without taking
// its lock (for `ingest plan`); an empty map when none is recorded. sec (nil: none) puts
// back the secret values in topic names, which the file holds as placeholders.
func PeekPartitions(dir string, sec Secrets) (map[string]int32, error) {
	reveal := func(b []byte) []byte { return b }
	if sec != nil {
		reveal = sec.RevealJSON
	}
	return readPartitions(dir, reveal)
}

func readPartitions(dir string, reveal func([]byte) []byte) (map[string]int32, error) {
	var rec topicsRecord
	err := readJSONWith(filepath.Join(dir, topicsFile), &rec, reveal)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if rec.Partitions == nil {
		rec.Partitions = map[string]int32{}
	}
	return rec.Partitions, nil
}
