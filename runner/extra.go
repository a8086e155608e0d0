package runner

import (
	"encoding/json"
	"fmt"

	"github.com/ingestkit/ingest/cdc/history"
	"github.com/ingestkit/ingest/cdc/snapshot"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/schemachange"
	"github.com/ingestkit/ingest/state"
	"github.com/ingestkit/ingest/upsert"
)

// A checkpoint carries, besides the position, the snapshot progress and the source's schema
// history, as the parts of an upsert.State: the progress without its chunks (small: the
// flags and watermarks of the whole snapshot), each finished chunk on its own, and the
// history. The sink and the local store write each part only when it changed, so no
// record or file rewritten per transaction grows with the number of chunks.

// chunkParts encodes the chunks of the snapshot progress, each once: the progress of a
// run only ever grows at its end (chunks are recorded in the order they are emitted).
type chunkParts struct {
	enc [][]byte
	// tablesOf and tablesEnc are the captured set last encoded and its JSON: the progress
	// of every chunk of a run shares one slice of the set (the snapshot package's ledger),
	// so a set of thousands of tables is encoded once, not once per chunk.
	tablesOf  []snapshot.TableState
	tablesEnc []byte
}

// parts splits p into the progress without its chunks and the chunks' encodings.
func (c *chunkParts) parts(p *snapshot.Progress) (head []byte, chunks [][]byte, err error) {
	if len(p.Chunks) < len(c.enc) {
		c.enc = c.enc[:len(p.Chunks)] // not a run's own progress: encode it afresh
	}
	for i := len(c.enc); i < len(p.Chunks); i++ {
		b, err := json.Marshal(p.Chunks[i])
		if err != nil {
			return nil, nil, err
		}
		c.enc = append(c.enc, b)
	}
	if head, err = c.head(p); err != nil {
		return nil, nil, err
	}
	n := len(p.Chunks)
	return head, c.enc[:n:n], nil
}

// head returns the JSON of p without its chunks, as json.Marshal writes a
// snapshot.Progress whose Chunks are nil (TestProgressHeadFields checks that it knows every field),
// with the captured set's encoding reused while p.Tables is the slice encoded last.
func (c *chunkParts) head(p *snapshot.Progress) ([]byte, error) {
	// nil and empty encode differently (null, []): both must match.
	if (p.Tables == nil) != (c.tablesOf == nil) || !sameSlice(p.Tables, c.tablesOf) || c.tablesEnc == nil {
		b, err := json.Marshal(p.Tables)
		if err != nil {
			return nil, err
		}
		c.tablesOf, c.tablesEnc = p.Tables, b
	}
	flags, err := json.Marshal(struct {
		Done  bool   `json:"done,omitempty"`
		Since string `json:"since,omitempty"`
	}{p.Done, p.Since})
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(flags)+len(c.tablesEnc)+len(p.ListedAt)+32)
	out = append(out, flags[:len(flags)-1]...) // without its closing brace
	if len(flags) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"tables":`...)
	out = append(out, c.tablesEnc...)
	if p.ListedAt != "" {
		at, err := json.Marshal(p.ListedAt)
		if err != nil {
			return nil, err
		}
		out = append(out, `,"listed_at":`...)
		out = append(out, at...)
	}
	return append(out, '}'), nil
}

// progressOf joins the parts of a stored progress; nil when none is stored. A progress
// stored whole (by an earlier version) holds its chunks itself.
func progressOf(head []byte, chunks [][]byte) (*snapshot.Progress, error) {
	if len(head) == 0 {
		return nil, nil
	}
	var p snapshot.Progress
	if err := json.Unmarshal(head, &p); err != nil {
		return nil, fmt.Errorf("stored snapshot progress: %w", err)
	}
	for i, b := range chunks {
		var d snapshot.DoneChunk
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("stored snapshot chunk %d: %w", i, err)
		}
		p.Chunks = append(p.Chunks, d)
	}
	return &p, nil
}

// legacyExtra is the progress of a version-1 exactly-once state record: the snapshot
// progress (whole) and the schema history.
type legacyExtra struct {
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
	Schema   json.RawMessage `json:"schema,omitempty"`
	Shapes   json.RawMessage `json:"shapes,omitempty"`
}

// checkpointOf turns a checkpoint of the sink (acknowledged, or read from the state topic)
// into the local store's form.
func checkpointOf(cp upsert.Checkpoint) (state.Checkpoint, error) {
	s := cp.State
	if s.Legacy != nil {
		var e legacyExtra
		if err := json.Unmarshal(s.Legacy, &e); err != nil {
			return state.Checkpoint{}, fmt.Errorf("stored checkpoint (version 1): %w", err)
		}
		return state.Checkpoint{Position: string(cp.Position), Snapshot: e.Snapshot, Schema: e.Schema, Shapes: e.Shapes}, nil
	}
	schema := s.Schema
	if schema == nil && len(s.SchemaParts) > 0 { // read from the state topic
		parts := make([]history.Part, len(s.SchemaParts))
		for i, p := range s.SchemaParts {
			parts[i] = history.Part{Key: p.Key, Value: p.Value}
		}
		schema = history.Join(parts)
	}
	return state.Checkpoint{Position: string(cp.Position), Snapshot: s.Snapshot, Chunks: s.Chunks, Schema: schema, Shapes: s.Shapes}, nil
}

// historyParts splits the schema history into the parts the sink stores (one per table),
// again only when the history changed: it is the same slice until a DDL changes it.
type historyParts struct {
	of    []byte
	parts []upsert.Part
}

func (h *historyParts) split(hist []byte) ([]upsert.Part, error) {
	if h.of != nil && sameSlice(hist, h.of) {
		return h.parts, nil
	}
	parts, err := history.Split(hist)
	if err != nil {
		return nil, err
	}
	h.of, h.parts = hist, make([]upsert.Part, len(parts))
	for i, p := range parts {
		h.parts[i] = upsert.Part{Key: p.Key, Value: p.Value}
	}
	return h.parts, nil
}

// sameSlice reports whether a and b are the same elements in memory (or both empty).
func sameSlice[T any](a, b []T) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	return len(a) == len(b) && &a[0] == &b[0]
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

// schemaState sets the schema history of st, whole and in parts.
func (r *run) schemaState(st *upsert.State) error {
	st.Schema = r.source.SchemaHistory()
	var err error
	st.SchemaParts, err = r.history.split(st.Schema)
	return err
}
