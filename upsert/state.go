package upsert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DefaultStateTopic is the compacted topic that holds each pipeline's checkpoint as a few
// small records keyed "<pipeline>/<part>" (see [State]).
const DefaultStateTopic = "__ingest_state"

// stateVersion is the version of the state records; version 1 was one record per pipeline,
// keyed by the pipeline name, holding the position and all the progress.
const stateVersion = 2

// The parts of a pipeline's state, each its own record keyed "<pipeline>/<part>".
const (
	partPosition = "position"
	partIdentity = "identity"
	partSnapshot = "snapshot"
	partShapes   = "shapes"
	partSchema   = "schema/" // followed by the key of a SchemaParts element
	partChunk    = "chunk/"  // followed by the chunk's index, zero-padded to chunkDigits
	chunkDigits  = 8
)

// State is a checkpoint's state besides the position. The sink stores each part as its own
// compacted record and writes a part only when it changed, so that no record grows with
// the number of chunks and a checkpoint costs the bytes of what changed. The parts are
// opaque JSON to the sink.
type State struct {
	// Snapshot is the snapshot progress without its chunks; nil when no snapshot progress
	// is kept (and then Chunks is empty too).
	Snapshot []byte
	// Chunks are the snapshot's finished chunks, one JSON value each, in order. A later
	// checkpoint's Chunks extend an earlier one's (or are empty): the sink writes only the
	// ones beyond what it stored, and tombstones stored ones beyond len(Chunks).
	Chunks [][]byte
	// Schema is the source's schema history, whole: the sink does not store it, but gives
	// it back in the acknowledged [Checkpoint] (for the caller's own store).
	Schema []byte
	// SchemaParts are the schema history's parts (one per table), which the sink stores,
	// each written when it changed; one with the same slice as the last checkpoint's is
	// taken as unchanged without looking. A key has no '/' and exactly one '.'.
	SchemaParts []Part
	// Shapes are the shapes the pipeline writes per table under schema.change.behavior
	// LENIENT or IGNORE (opaque JSON, the same slice until a DDL changes them); nil under the
	// other behaviours, whose stored shapes are then deleted.
	Shapes []byte
	// Legacy is the progress of a version-1 state record (the whole progress in one
	// record), set only in what [Sink.Start] read; the next write replaces that record by
	// the parts.
	Legacy []byte
}

// Part is a keyed part of the state.
type Part struct {
	Key   string
	Value []byte
}

// StoredState is a pipeline's state as the state topic holds it.
type StoredState struct {
	// Checkpoint is the stored checkpoint, nil when there is none.
	Checkpoint *Checkpoint
	// Identity is the identity record (Config.Identity of the writer), nil when there is none.
	Identity []byte
	// keys are every live key of the pipeline, for a reset.
	keys []string
	// chunks is the number of chunk records the state's Chunks stand for.
	chunks int
}

// positionValue is the JSON of the position record.
type positionValue struct {
	Version  int    `json:"version"`
	Position string `json:"position"`
}

// legacyValue is the JSON of a version-1 state record. Position and Progress are opaque
// bytes (base64 in the JSON).
type legacyValue struct {
	Version  int    `json:"version"`
	Position []byte `json:"position"`
	Progress []byte `json:"progress,omitempty"`
}

func decodeLegacy(b []byte) (*Checkpoint, error) {
	var v legacyValue
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	if v.Version != 1 {
		return nil, fmt.Errorf("unknown state version %d (written by a newer ingest?)", v.Version)
	}
	return &Checkpoint{Position: v.Position, State: State{Legacy: v.Progress}}, nil
}

func chunkKey(i int) string { return partChunk + fmt.Sprintf("%0*d", chunkDigits, i) }

// statePart returns the part of key for pipeline: "" for the version-1 record, ok false
// when key is not one of pipeline's. A pipeline name may hold '/', but no key of one
// pipeline is a key of another: a part has a '/' only as "chunk/<digits>" or as
// "schema/<key>", where the key has no '/' and one '.'.
func statePart(pipeline, key string) (part string, ok bool) {
	if key == pipeline {
		return "", true
	}
	part, ok = strings.CutPrefix(key, pipeline+"/")
	if !ok {
		return "", false
	}
	switch part {
	case partPosition, partIdentity, partSnapshot, partShapes:
		return part, true
	}
	if k, ok := strings.CutPrefix(part, partSchema); ok {
		return part, !strings.Contains(k, "/") && strings.Count(k, ".") == 1
	}
	n, ok := strings.CutPrefix(part, partChunk)
	if !ok || len(n) != chunkDigits {
		return "", false
	}
	_, err := strconv.ParseUint(n, 10, 32)
	return part, err == nil
}

// assemble builds a pipeline's state from its live records (part → value).
func assemble(pipeline string, live map[string][]byte) (*StoredState, error) {
	st := &StoredState{Identity: live[partIdentity]}
	for part := range live {
		key := pipeline + "/" + part
		if part == "" {
			key = pipeline
		}
		st.keys = append(st.keys, key)
	}
	sort.Strings(st.keys)
	pos, ok := live[partPosition]
	if !ok {
		if legacy, ok := live[""]; ok {
			cp, err := decodeLegacy(legacy)
			st.Checkpoint = cp
			return st, err
		}
		return st, nil
	}
	var v positionValue
	if err := json.Unmarshal(pos, &v); err != nil {
		return nil, fmt.Errorf("position record: %w", err)
	}
	if v.Version != stateVersion {
		return nil, fmt.Errorf("unknown state version %d (written by a newer ingest?)", v.Version)
	}
	cp := &Checkpoint{Position: []byte(v.Position), State: State{Snapshot: live[partSnapshot], Shapes: live[partShapes]}}
	for _, key := range st.keys {
		if part, _ := statePart(pipeline, key); strings.HasPrefix(part, partSchema) {
			cp.State.SchemaParts = append(cp.State.SchemaParts, Part{Key: part[len(partSchema):], Value: live[part]})
		}
	}
	if cp.State.Snapshot != nil {
		// Chunk records without a snapshot record are left over from a write that stopped
		// half way (at-least-once): the position record says the snapshot is over.
		for _, key := range st.keys {
			if part, _ := statePart(pipeline, key); strings.HasPrefix(part, partChunk) {
				cp.State.Chunks = append(cp.State.Chunks, live[part])
			}
		}
	}
	st.chunks = len(cp.State.Chunks)
	if len(cp.Position) == 0 && cp.State.Snapshot == nil {
		cp = nil // only an identity: nothing to resume from
	}
	st.Checkpoint = cp
	return st, nil
}

// checkChunks makes sure the chunk records are 0..n-1 without a gap: a gap means records
// are missing (a topic that lost data), and resuming would skip chunks.
func checkChunks(pipeline string, st *StoredState) error {
	i := 0
	for _, key := range st.keys {
		part, _ := statePart(pipeline, key)
		if n, ok := strings.CutPrefix(part, partChunk); ok {
			if want := fmt.Sprintf("%0*d", chunkDigits, i); n != want {
				return fmt.Errorf("chunk record %s is missing (found %s); the state is incomplete", pipeline+"/"+chunkKey(i), key)
			}
			i++
		}
	}
	return nil
}

// readState returns the pipeline's committed state records in topic. It reads with
// read_committed up to the end offset the partition had when it started, so it waits for
// open transactions on the partition to end (the caller has already fenced its own
// predecessor, which aborted any transaction that one left open). With stable it reads
// only up to the last stable offset instead, so that it never waits for other pipelines'
// transactions (at-least-once, whose own records are not transactional: it may miss its
// newest ones behind an open transaction, and resume from an earlier checkpoint).
func readState(ctx context.Context, opts []kgo.Opt, admin *kadm.Client, topic, pipeline string, stable bool) (*StoredState, int32, error) {
	part, end, err := stateEnd(ctx, admin, topic, pipeline, stable)
	if err != nil || end == 0 {
		return &StoredState{}, part, err
	}
	cl, err := kgo.NewClient(append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {part: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		return nil, part, err
	}
	defer cl.Close()
	live := map[string][]byte{}
	for done := false; !done; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, part, fmt.Errorf("read state of %s from %s: %w", pipeline, topic, err)
		}
		var fetchErr error
		fs.EachError(func(_ string, _ int32, err error) { fetchErr = err })
		if fetchErr != nil {
			return nil, part, fmt.Errorf("read state of %s from %s: %w", pipeline, topic, fetchErr)
		}
		fs.EachRecord(func(r *kgo.Record) {
			// A transaction marker has no data, but it moves the offset on.
			if p, ok := statePart(pipeline, string(r.Key)); ok && !r.Attrs.IsControl() {
				if r.Value == nil {
					delete(live, p)
				} else {
					live[p] = r.Value
				}
			}
			done = done || r.Offset >= end-1
		})
	}
	st, err := assemble(pipeline, live)
	if err == nil {
		err = checkChunks(pipeline, st)
	}
	if err != nil {
		return nil, part, fmt.Errorf("state of %s in %s: %w", pipeline, topic, err)
	}
	return st, part, nil
}

// stateEnd returns the partition of topic that holds the pipeline's records and its end
// offset (with stable, its last stable offset).
func stateEnd(ctx context.Context, admin *kadm.Client, topic, pipeline string, stable bool) (int32, int64, error) {
	details, err := admin.ListTopics(ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	d, ok := details[topic]
	if !ok || d.Err != nil || len(d.Partitions) == 0 {
		return 0, 0, fmt.Errorf("state topic %s: not found (%v)", topic, d.Err)
	}
	part := int32(PartitionFor([]byte(pipeline), len(d.Partitions)))
	list := admin.ListEndOffsets
	if stable {
		list = admin.ListCommittedOffsets
	}
	ends, err := list(ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	o, ok := ends.Lookup(topic, part)
	if !ok {
		return 0, 0, errors.New("no end offset for the state partition")
	}
	if o.Err != nil {
		return 0, 0, o.Err
	}
	return part, o.Offset, nil
}
