package upsert

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/twmb/franz-go/pkg/kgo"
)

// stateWriter turns checkpoints into the state records that bring the state topic from what
// it holds to the checkpoint: the parts that changed, the position, and tombstones for
// parts no longer there. The order is the one that keeps every prefix of a write a state
// to resume from (it matters at-least-once, where the records are not written atomically):
// new and changed parts first, then the position, then the tombstones.
type stateWriter struct {
	pipeline  string
	topic     string
	partition int32
	identity  []byte

	known    bool              // the fields below say what the topic holds; false: write every part
	snapshot []byte            // the snapshot record
	shapes   []byte            // the shapes record
	schema   map[string][]byte // the schema records by key
	parts    []Part            // the SchemaParts last stored
	chunks   int               // chunk records 0..chunks-1 are live
	identOK  bool              // the identity record is the writer's
	legacy   bool              // the version-1 record is live
	maxChunk int               // at least every chunk record that may be live (for tombstones)
}

// newStateWriter starts from what the topic holds (st, as read by readState).
func newStateWriter(cfg *Config, partition int32, st *StoredState) *stateWriter {
	w := &stateWriter{pipeline: cfg.Pipeline, topic: cfg.StateTopic, partition: partition, identity: cfg.Identity, known: true}
	w.identOK = bytes.Equal(st.Identity, cfg.Identity)
	for _, k := range st.keys {
		if k == cfg.Pipeline {
			w.legacy = true
		}
	}
	w.schema = map[string][]byte{}
	if cp := st.Checkpoint; cp != nil && cp.State.Legacy == nil {
		w.snapshot, w.shapes = cp.State.Snapshot, cp.State.Shapes
		for _, p := range cp.State.SchemaParts {
			w.schema[p.Key] = p.Value
		}
	}
	w.chunks, w.maxChunk = st.chunks, st.chunks
	return w
}

// forget makes the next write write every part: the records of the last one may not all
// have been written.
func (w *stateWriter) forget() { w.known, w.identOK = false, false }

// records returns the records that store cp, and takes them as written.
func (w *stateWriter) records(cp *Checkpoint) []*kgo.Record {
	var recs, tombs []*kgo.Record
	put := func(part string, v []byte) {
		recs = append(recs, &kgo.Record{Topic: w.topic, Partition: w.partition, Key: []byte(w.pipeline + "/" + part), Value: v})
	}
	del := func(key string) {
		tombs = append(tombs, &kgo.Record{Topic: w.topic, Partition: w.partition, Key: []byte(key)})
	}
	s := cp.State
	if s.Snapshot == nil {
		s.Chunks = nil
	}
	if !w.identOK && w.identity != nil {
		put(partIdentity, w.identity)
		w.identOK = true
	}
	from := w.chunks
	if !w.known || len(s.Chunks) < w.chunks {
		from = 0 // rewrite them all; stale ones beyond are tombstoned below
	}
	for i := from; i < len(s.Chunks); i++ {
		put(chunkKey(i), s.Chunks[i])
	}
	if s.Snapshot != nil && (!w.known || !bytes.Equal(s.Snapshot, w.snapshot)) {
		put(partSnapshot, s.Snapshot)
	}
	if s.Shapes != nil && (!w.known || !bytes.Equal(s.Shapes, w.shapes)) {
		put(partShapes, s.Shapes)
	}
	schemaChanged := !w.known || !sameParts(s.SchemaParts, w.parts)
	if schemaChanged {
		for _, p := range s.SchemaParts {
			if old, ok := w.schema[p.Key]; !w.known || !ok || !bytes.Equal(old, p.Value) {
				put(partSchema+p.Key, p.Value)
			}
		}
	}
	pos, _ := json.Marshal(positionValue{Version: stateVersion, Position: string(cp.Position)})
	put(partPosition, pos)
	if s.Snapshot == nil && (!w.known || w.snapshot != nil) {
		del(w.pipeline + "/" + partSnapshot)
	}
	if s.Shapes == nil && (!w.known || w.shapes != nil) {
		del(w.pipeline + "/" + partShapes)
	}
	if schemaChanged {
		live := make(map[string][]byte, len(s.SchemaParts))
		for _, p := range s.SchemaParts {
			live[p.Key] = p.Value
		}
		var gone []string
		for k := range w.schema {
			if _, ok := live[k]; !ok {
				gone = append(gone, k)
			}
		}
		sort.Strings(gone)
		for _, k := range gone {
			del(w.pipeline + "/" + partSchema + k)
		}
		w.schema, w.parts = live, s.SchemaParts
	}
	top := w.chunks
	if !w.known {
		top = max(top, w.maxChunk)
	}
	for i := len(s.Chunks); i < top; i++ {
		del(w.pipeline + "/" + chunkKey(i))
	}
	if w.legacy {
		del(w.pipeline)
		w.legacy = false
	}
	w.known, w.snapshot, w.shapes, w.chunks = true, s.Snapshot, s.Shapes, len(s.Chunks)
	w.maxChunk = max(w.maxChunk, w.chunks)
	return append(recs, tombs...)
}

// sameParts reports whether a and b are the same slice (or both empty).
func sameParts(a, b []Part) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	return len(a) == len(b) && &a[0] == &b[0]
}

// resetRecords returns tombstones for every live record of the pipeline in st.
func resetRecords(topic string, partition int32, st *StoredState) []*kgo.Record {
	recs := make([]*kgo.Record, len(st.keys))
	for i, k := range st.keys {
		recs[i] = &kgo.Record{Topic: topic, Partition: partition, Key: []byte(k)}
	}
	return recs
}

// StateEncoder gives the state records a sink writes for a sequence of checkpoints, from
// an empty state topic (benchmarks and tools).
type StateEncoder struct{ w *stateWriter }

// NewStateEncoder returns a StateEncoder for pipeline's records in topic.
func NewStateEncoder(pipeline, topic string) *StateEncoder {
	return &StateEncoder{w: newStateWriter(&Config{Pipeline: pipeline, StateTopic: topic}, 0, &StoredState{})}
}

// Encode returns the records that store cp after the earlier checkpoints given.
func (e *StateEncoder) Encode(cp *Checkpoint) []*kgo.Record { return e.w.records(cp) }
