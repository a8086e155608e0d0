package upsert

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// aloState is the at-least-once sink's copy of its checkpoints in the state topic: the
// newest acknowledged checkpoint is written there, without a transaction, at most every
// Config.StateInterval and when Run stops. It is written only after every record it
// covers is acknowledged, so it is never ahead of the data.
type aloState struct {
	due     *Checkpoint // acknowledged, not yet written
	written time.Time   // when the last one was handed to the client
	lost    atomic.Bool // a state record failed: the next write writes every part
	warned  atomic.Bool
}

// startState makes sure the state topic exists, fences earlier writers (exactly-once) and
// reads the pipeline's state.
func (s *Sink) startState(ctx context.Context) (*Checkpoint, error) {
	state := &topicManager{admin: s.admin, creator: s.topics.creator, create: true, log: s.log,
		known: map[string]bool{},
		spec: TopicSpec{Partitions: 1, ReplicationFactor: s.cfg.ReplicationFactor,
			Configs: map[string]string{"cleanup.policy": "compact"}}}
	if err := state.ensure(ctx, []string{s.cfg.StateTopic}); err != nil {
		return nil, err
	}
	if s.txn != nil {
		if err := s.startTxn(ctx); err != nil {
			return nil, err
		}
	}
	opts := append(s.cfg.Properties.ClientOpts(), s.cfg.ClientOpts...)
	st, part, err := readState(ctx, opts, s.admin, s.cfg.StateTopic, s.cfg.Pipeline, s.txn == nil)
	if err != nil {
		return nil, wrap("read state", s.cfg.StateTopic, tableNone, []byte(s.cfg.Pipeline), err)
	}
	s.stored, s.state = st, newStateWriter(&s.cfg, part, st)
	if s.txn == nil {
		// The caller may resume from its own checkpoint, not this one (at-least-once): the
		// chunks it gives need not extend the ones stored here, so the first write writes
		// them all.
		s.state.forget()
	}
	return st.Checkpoint, nil
}

// StoredIdentity returns the identity record [Sink.Start] found in the state topic (the
// Config.Identity of the run that wrote the state), nil when there was none.
func (s *Sink) StoredIdentity() []byte {
	if s.stored == nil {
		return nil
	}
	return s.stored.Identity
}

// ResetState deletes the pipeline's state from the state topic (tombstones for every
// record [Sink.Start] found), in a transaction of its own with exactly-once. Call it
// after Start and before Run; the run then starts as a first one.
func (s *Sink) ResetState(ctx context.Context) error {
	if s.stored == nil || len(s.stored.keys) == 0 {
		return nil
	}
	recs := resetRecords(s.cfg.StateTopic, s.state.partition, s.stored)
	if s.txn != nil {
		if err := s.cl.BeginTransaction(); err != nil {
			return wrap("reset state: begin transaction", "", tableNone, nil, err)
		}
	}
	res := s.cl.ProduceSync(ctx, recs...)
	err := res.FirstErr()
	if s.txn != nil {
		commit := kgo.TryCommit
		if err != nil {
			commit = kgo.TryAbort
		}
		if eerr := s.cl.EndTransaction(ctx, commit); err == nil {
			err = eerr
		}
	}
	if err != nil {
		return wrap("reset state", s.cfg.StateTopic, tableNone, []byte(s.cfg.Pipeline), err)
	}
	s.stored = &StoredState{}
	s.state = newStateWriter(&s.cfg, s.state.partition, s.stored)
	return nil
}

// StoreState writes cp to the state topic and waits for it, before Run (at-least-once and
// none: a checkpoint that covers no record yet, such as a snapshot's starting progress).
// With exactly-once it does nothing: only what a transaction commits is stored.
func (s *Sink) StoreState(ctx context.Context, cp Checkpoint) error {
	if s.txn != nil || s.state == nil {
		return nil
	}
	if err := s.cl.ProduceSync(ctx, s.state.records(&cp)...).FirstErr(); err != nil {
		s.state.forget()
		return wrap("store state", s.cfg.StateTopic, tableNone, []byte(s.cfg.Pipeline), err)
	}
	return nil
}

// writeState hands the newest acknowledged checkpoint's state records to the client when
// StateInterval has passed since the last (or force is set). Failures are warnings: the
// caller's own store has the checkpoint, and the next write writes every part again.
func (s *Sink) writeState(ctx context.Context, force bool) {
	a := &s.alo
	if a.due == nil || s.state == nil || (!force && time.Since(a.written) < s.cfg.StateInterval) {
		return
	}
	if a.lost.Swap(false) {
		s.state.forget()
	}
	for _, r := range s.state.records(a.due) {
		s.cl.Produce(ctx, r, s.stateWritten)
	}
	a.due, a.written = nil, time.Now()
}

// stateWritten is the promise of an at-least-once state record.
func (s *Sink) stateWritten(r *kgo.Record, err error) {
	if err == nil {
		return
	}
	s.alo.lost.Store(true)
	if !s.alo.warned.Swap(true) {
		s.log.Warn("upsert: a checkpoint was not written to the state topic; the next one is written whole",
			"topic", r.Topic, "key", string(r.Key), "err", err)
	}
}

// statePartitioner is the sink's partitioner: data's for the data topics (the fixed
// partition counts of layout.go); the state topic's records carry their partition (the one
// of the pipeline's name), so that all of a pipeline's state records are in one partition.
type statePartitioner struct {
	state string
	data  kgo.Partitioner
}

// ForTopic returns the manual partitioner for the state topic, data's for the others.
func (p statePartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	if topic == p.state {
		return kgo.ManualPartitioner().ForTopic(topic)
	}
	return p.data.ForTopic(topic)
}

// ReadState reads the pipeline's committed state from topic with a client of its own made
// with opts (seed brokers and security). It is for tools and tests; the sink reads its
// state in Start.
func ReadState(ctx context.Context, opts []kgo.Opt, topic, pipeline string) (*StoredState, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	st, _, err := readState(ctx, opts, kadm.NewClient(cl), topic, pipeline, false)
	return st, err
}
