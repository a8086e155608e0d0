package runner

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ingestkit/ingest/secrets"
	"github.com/ingestkit/ingest/state"
	"github.com/ingestkit/ingest/upsert"
)

// The state of a pipeline lives in two places: the local state directory (at-least-once:
// the checkpoint the run resumes from; exactly-once: the identity and the lock) and Kafka's
// compacted state topic (exactly-once: the checkpoint, written in the transactions;
// at-least-once: a copy written behind the acknowledgements). The copy in Kafka is what
// notices a state directory that was deleted or replaced: without it the pipeline would
// take the empty directory for a first run and snapshot again over topics that still hold
// the keys deleted meanwhile, which nothing would ever tombstone.

// resumeState picks the checkpoint to resume from: the local one when there is one (it is
// at least as far as Kafka's copy unless a write to Kafka failed); else Kafka's, which was
// written only after every record it covers was acknowledged, so it is as safe a place to
// resume at-least-once as the local one: the records since are written again, and the
// changes made while the pipeline was away, deletes included, come from the binlog. With
// exactly-once, local is nil and Kafka's is the checkpoint.
func (r *run) resumeState(local *state.Checkpoint, kafka *upsert.Checkpoint) (*state.Checkpoint, error) {
	if local != nil {
		r.log.Info("resuming from the stored state", "position", local.Position, "snapshot", len(local.Snapshot) > 0)
		return local, nil
	}
	if kafka == nil {
		return nil, nil
	}
	cp, err := checkpointOf(*kafka)
	if err != nil {
		return nil, err
	}
	if !r.exactlyOnce() {
		r.log.Warn("the state directory holds no checkpoint, but the state topic does: resuming from the copy in Kafka "+
			"(to start afresh instead, run apply with --reset-state)",
			"state", r.store.Dir(), "topic", r.stateTopic(), "position", cp.Position, "snapshot", len(cp.Snapshot) > 0)
	}
	return &cp, nil
}

// checkStoredIdentity refuses a state in Kafka that another pipeline wrote: the same
// pipeline.name over another source. Resuming from its position would read the wrong
// server's binlog; snapshotting afresh would leave its keys. Another table selection is
// accepted: the tables that join are snapshotted, those that leave are let go (join.go).
// A state without an identity (written before ingest stored one) is taken as this one's.
func (r *run) checkStoredIdentity(b []byte) error {
	if b == nil {
		return nil
	}
	var id state.Identity
	if err := json.Unmarshal(b, &id); err != nil {
		return fmt.Errorf("state topic %s: identity of %s: %w", r.stateTopic(), r.id.Pipeline, err)
	}
	mine := kafkaIdentity(r.id, r.opts.Scrubber)
	if id.Pipeline == mine.Pipeline && id.Source == mine.Source {
		return nil // another table selection is reconciled at the start (join.go)
	}
	return fmt.Errorf("state topic %s holds a state of pipeline %q for source %q, but this pipeline reads source %q: "+
		"a pipeline's state is keyed by pipeline.name. Choose: give this pipeline another pipeline.name; "+
		"or put back the source of that state; or, to start this pipeline afresh over that state "+
		"(a new snapshot; records of keys deleted meanwhile stay in the topics), run apply once with --reset-state",
		r.stateTopic(), id.Pipeline, id.Source, mine.Source)
}

// kafkaIdentity is the identity stored with the state in Kafka (Config.Identity) and
// compared with it: a secret value in a field (a hostname from ${secret_values.NAME}) is
// replaced by its placeholder, so that the state topic holds no secret; the salt and the
// server identity of the local directory are not part of it (the server itself is checked
// by the source checks, preflight.go).
func kafkaIdentity(id state.Identity, sc *secrets.Scrubber) state.Identity {
	out := state.Identity{Pipeline: id.Pipeline, Source: id.Source, Tables: id.Tables}
	if sc != nil {
		out.Pipeline, out.Source, out.Tables = sc.Scrub(out.Pipeline), sc.Scrub(out.Source), sc.Scrub(out.Tables)
	}
	return out
}

// resetState deletes the stored state (--reset-state), once: an in-process restart
// resumes from what this run stores.
func (r *run) resetState(ctx context.Context, sink *upsert.Sink) error {
	if err := sink.ResetState(ctx); err != nil {
		return err
	}
	if err := r.store.Reset(); err != nil {
		return err
	}
	r.opts.ResetState = false
	r.log.Warn("the stored state was deleted (--reset-state): starting afresh", "state", r.store.Dir(), "topic", r.stateTopic())
	return nil
}

// stateTopic is the sink's state topic.
func (r *run) stateTopic() string {
	if r.snk.StateTopic != "" {
		return r.snk.StateTopic
	}
	return upsert.DefaultStateTopic
}
