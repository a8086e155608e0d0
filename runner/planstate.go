package runner

import (
	"context"
	"encoding/json"

	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/secrets"
	"github.com/ingestkit/ingest/state"
	"github.com/ingestkit/ingest/upsert"
)

// startWithKafka completes the start reason of an at-least-once pipeline whose state
// directory holds no checkpoint with what Kafka's state topic holds for it: apply resumes
// from that copy, or refuses when it belongs to other tables or another source (see
// resumeState, checkStoredIdentity). local is the reason startReason gave.
func startWithKafka(ctx context.Context, def *pipeline.Definition, opts Options, local string) string {
	dir := opts.StateDir
	if def.Sink.DeliveryGuarantee == pipeline.DeliveryExactlyOnce {
		return local
	}
	if _, cp, err := state.Peek(dir); err != nil || cp != nil {
		return local
	}
	p, err := upsert.ParseProperties(secrets.RevealMap(def.Sink.Properties))
	if err != nil {
		return local
	}
	st, err := upsert.ReadState(ctx, p.ClientOpts(), upsert.DefaultStateTopic, def.Pipeline.Name)
	if err != nil || st.Checkpoint == nil {
		return local // no state topic yet, or none of this pipeline's state in it
	}
	want := kafkaIdentity(state.Identity{Pipeline: def.Pipeline.Name, Source: sourceAddr(def), Tables: tablesIdentity(def)}, opts.Scrubber)
	var got state.Identity
	if st.Identity != nil && (json.Unmarshal(st.Identity, &got) != nil || got.Pipeline != want.Pipeline || got.Source != want.Source) {
		return "apply will refuse: the state topic " + upsert.DefaultStateTopic + " holds a state of " + def.Pipeline.Name +
			" for source " + got.Source + " (give this pipeline another pipeline.name, or start afresh with --reset-state)"
	}
	pos := string(st.Checkpoint.Position)
	if pos == "" {
		pos = "none yet: the snapshot resumes"
	}
	return "from the copy of the checkpoint in the state topic " + upsert.DefaultStateTopic + " (position " +
		pos + "; the state directory " + dir + " holds none)"
}
