package runner

import (
	"encoding/json"
	"fmt"

	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/schemachange"
	"github.com/ingestkit/ingest/state"
)

// extra is what a checkpoint carries besides the position: the snapshot progress, the
// source's schema history and the written shapes of schema.change.behavior. It travels through the sink as the opaque Input.Progress (into
// the state topic with exactly-once) and lands in the local store's fields.
type extra struct {
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
	Schema   json.RawMessage `json:"schema,omitempty"`
	Shapes   json.RawMessage `json:"shapes,omitempty"`
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

// extraCache encodes extras, reusing the last encoding while no part changed: the history
// and the written shapes are the same slices until a DDL changes them, and the snapshot
// progress is nil once the hand-off is over, so a stream of transactions costs no encoding
// at all.
type extraCache struct {
	snapshot, schema, shapes []byte
	enc                      []byte
}

func (c *extraCache) encode(snapshot, schema, shapes []byte) ([]byte, error) {
	if c.enc != nil && sameSlice(snapshot, c.snapshot) && sameSlice(schema, c.schema) && sameSlice(shapes, c.shapes) {
		return c.enc, nil
	}
	enc, err := json.Marshal(extra{Snapshot: snapshot, Schema: schema, Shapes: shapes})
	if err != nil {
		return nil, err
	}
	c.snapshot, c.schema, c.shapes, c.enc = snapshot, schema, shapes, enc
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
	return state.Checkpoint{Position: string(position), Snapshot: e.Snapshot, Schema: e.Schema, Shapes: e.Shapes}, nil
}

// newShapes returns the mapper of the pipeline's schema.change.behavior, resuming the
// written shapes stored with the checkpoint.
func newShapes(def *pipeline.Definition, stored *state.Checkpoint) (*schemachange.Mapper, error) {
	var shapes []byte
	if stored != nil {
		shapes = stored.Shapes
	}
	return schemachange.New(shapesMode(def.Pipeline.SchemaChangeBehavior), shapes)
}

// shapesMode maps the option's value to the mapper's mode: TRY_EVOLVE is EVOLVE, as an
// upsert topic has no sink schema that could refuse a change.
func shapesMode(b pipeline.SchemaChangeBehavior) schemachange.Mode {
	switch b {
	case pipeline.SchemaLenient:
		return schemachange.Lenient
	case pipeline.SchemaIgnore:
		return schemachange.Ignore
	case pipeline.SchemaException:
		return schemachange.Exception
	}
	return schemachange.Evolve
}
