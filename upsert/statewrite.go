package upsert

import (
	"bytes"
	"encoding/json"

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

	known    bool  // stored says what the topic holds; false: write every part
	stored   State // the parts the topic holds (Chunks unused)
	chunks   int   // chunk records 0..chunks-1 are live
	identOK  bool  // the identity record is the writer's
	legacy   bool  // the version-1 record is live
	maxChunk int   // at least every chunk record that may be live (for tombstones)
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
	if cp := st.Checkpoint; cp != nil && cp.State.Legacy == nil {
		w.stored = State{Snapshot: cp.State.Snapshot, Schema: cp.State.Schema}
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
	if s.Snapshot != nil && (!w.known || !bytes.Equal(s.Snapshot, w.stored.Snapshot)) {
		put(partSnapshot, s.Snapshot)
	}
	if s.Schema != nil && (!w.known || !bytes.Equal(s.Schema, w.stored.Schema)) {
		put(partSchema, s.Schema)
	}
	pos, _ := json.Marshal(positionValue{Version: stateVersion, Position: string(cp.Position)})
	put(partPosition, pos)
	if s.Snapshot == nil && (!w.known || w.stored.Snapshot != nil) {
		del(w.pipeline + "/" + partSnapshot)
	}
	if s.Schema == nil && (!w.known || w.stored.Schema != nil) {
		del(w.pipeline + "/" + partSchema)
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
	w.known, w.stored, w.chunks = true, State{Snapshot: s.Snapshot, Schema: s.Schema}, len(s.Chunks)
	w.maxChunk = max(w.maxChunk, w.chunks)
	return append(recs, tombs...)
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
