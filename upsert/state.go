package upsert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DefaultStateTopic is the compacted topic that holds each exactly-once pipeline's
// checkpoint, keyed by the pipeline name.
const DefaultStateTopic = "__ingest_state"

// stateVersion is the version of the state record's value.
const stateVersion = 1

// stateValue is the JSON of a state record. Position and Progress are opaque bytes (base64
// in the JSON).
type stateValue struct {
	Version  int    `json:"version"`
	Position []byte `json:"position"`
	Progress []byte `json:"progress,omitempty"`
}

func encodeState(cp *Checkpoint) []byte {
	b, _ := json.Marshal(stateValue{Version: stateVersion, Position: cp.Position, Progress: cp.Progress})
	return b
}

func decodeState(b []byte) (*Checkpoint, error) {
	var v stateValue
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	if v.Version != stateVersion {
		return nil, fmt.Errorf("unknown state version %d (written by a newer ingest?)", v.Version)
	}
	return &Checkpoint{Position: v.Position, Progress: v.Progress}, nil
}

// readState returns the last committed state record of key in topic, or nil if there is
// none. It reads with read_committed up to the end offset the partition had when it
// started, so it waits for open transactions on the partition to end (the caller has
// already fenced its own predecessor, which aborted any transaction that one left open).
func readState(ctx context.Context, opts []kgo.Opt, admin *kadm.Client, topic, key string) (*Checkpoint, error) {
	part, end, err := stateEnd(ctx, admin, topic, key)
	if err != nil || end == 0 {
		return nil, err
	}
	cl, err := kgo.NewClient(append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {part: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var last []byte
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read state of %s from %s: %w", key, topic, err)
		}
		var fetchErr error
		fs.EachError(func(_ string, _ int32, err error) { fetchErr = err })
		if fetchErr != nil {
			return nil, fmt.Errorf("read state of %s from %s: %w", key, topic, fetchErr)
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			if r.Attrs.IsControl() {
				// A transaction marker: no data, but it moves the offset on.
			} else if string(r.Key) == key {
				last = r.Value
			}
			done = done || r.Offset >= end-1
		})
		if done {
			break
		}
	}
	if last == nil {
		return nil, nil // a tombstone, or only other pipelines' records
	}
	cp, err := decodeState(last)
	if err != nil {
		return nil, fmt.Errorf("state of %s in %s: %w", key, topic, err)
	}
	return cp, nil
}

// stateEnd returns the partition of topic that holds key and its end offset.
func stateEnd(ctx context.Context, admin *kadm.Client, topic, key string) (int32, int64, error) {
	details, err := admin.ListTopics(ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	d, ok := details[topic]
	if !ok || d.Err != nil || len(d.Partitions) == 0 {
		return 0, 0, fmt.Errorf("state topic %s: not found (%v)", topic, d.Err)
	}
	part := int32(PartitionFor([]byte(key), len(d.Partitions)))
	ends, err := admin.ListEndOffsets(ctx, topic)
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
