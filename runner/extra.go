package runner

import (
	"encoding/json"
	"fmt"

	"github.com/ingestkit/ingest/state"
)

// extra is what a checkpoint carries besides the position: the snapshot progress and the
// source's schema history. It travels through the sink as the opaque Input.Progress (into
// the state topic with exactly-once) and lands in the local store's fields.
type extra struct {
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
	Schema   json.RawMessage `json:"schema,omitempty"`
}

func decodeExtra(b []byte) (extra, error) {
	var e extra
	if len(b) == 0 {
		return e, nil
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("stored checkpoint: %w", err)
	}
	return e, nil
}

// extraCache encodes extras, reusing the last encoding while neither part changed: the
// history is the same slice until a DDL changes it, and the snapshot progress is nil once
// the hand-off is over, so a stream of transactions costs no encoding at all.
type extraCache struct {
	snapshot, schema []byte
	enc              []byte
}

func (c *extraCache) encode(snapshot, schema []byte) ([]byte, error) {
	if c.enc != nil && sameSlice(snapshot, c.snapshot) && sameSlice(schema, c.schema) {
		return c.enc, nil
	}
	enc, err := json.Marshal(extra{Snapshot: snapshot, Schema: schema})
	if err != nil {
		return nil, err
	}
	c.snapshot, c.schema, c.enc = snapshot, schema, enc
	return enc, nil
}

// sameSlice reports whether a and b are the same bytes in memory (or both empty).
func sameSlice(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	return len(a) == len(b) && &a[0] == &b[0]
}

// checkpointOf turns what the sink acknowledged into the local store's form.
func checkpointOf(position, progress []byte) (state.Checkpoint, error) {
	e, err := decodeExtra(progress)
	if err != nil {
		return state.Checkpoint{}, err
	}
	return state.Checkpoint{Position: string(position), Snapshot: e.Snapshot, Schema: e.Schema}, nil
}
