package upsert

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// txnState is the exactly-once writer's view of its Kafka transaction.
type txnState struct {
	open       bool        // BeginTransaction was called and the transaction not ended
	since      time.Time   // when the transaction got its first record or checkpoint
	bytes      int64       // key and value bytes produced in it
	partial    bool        // it holds records of a source transaction whose end has not come
	checkpoint *Checkpoint // the newest source transaction end in it, nil if none
}

// startTxn fences earlier writers with the same transactional id (InitProducerID bumps
// the epoch and aborts their open transaction).
func (s *Sink) startTxn(ctx context.Context) error {
	if _, _, err := s.cl.ProducerID(ctx); err != nil {
		return wrap("init transactional id "+s.cfg.TransactionalID, "", tableNone, nil, err)
	}
	return nil
}

// beginTxn opens a Kafka transaction if none is open.
func (s *Sink) beginTxn() error {
	if s.txn.open {
		return nil
	}
	if err := s.cl.BeginTransaction(); err != nil {
		return wrap("begin transaction", "", tableNone, nil, err)
	}
	s.txn.open = true
	if s.txn.since.IsZero() {
		s.txn.since = time.Now()
	}
	return nil
}

// endTxn notes the end of a source transaction and commits when the Kafka transaction is
// due.
func (s *Sink) endTxn(ctx context.Context, cp *Checkpoint) error {
	s.txn.partial = false
	s.txn.checkpoint = cp
	if s.txn.since.IsZero() {
		s.txn.since = time.Now()
	}
	return s.maybeCommit(ctx, false)
}

// maybeCommit commits when the Kafka transaction ends on a source transaction boundary,
// has something to commit, and is due by time or size (or force is set).
func (s *Sink) maybeCommit(ctx context.Context, force bool) error {
	t := s.txn
	if t.partial || t.checkpoint == nil {
		return nil
	}
	if !force && time.Since(t.since) < s.cfg.TransactionInterval && t.bytes < s.cfg.TransactionMaxBytes {
		return nil
	}
	return s.commit(ctx)
}

// commit writes the buffered records and the state record, waits for every record's
// result, and commits only if none failed. Kafka's EndTransaction would commit even a
// transaction whose records all failed, so the promises are the only safeguard.
func (s *Sink) commit(ctx context.Context) error {
	if err := s.beginTxn(); err != nil {
		return err
	}
	if err := s.flush(ctx); err != nil {
		return err
	}
	cp := s.txn.checkpoint
	for _, r := range s.state.records(cp) {
		s.cl.Produce(ctx, r, s.promise(tableNone, nil))
	}
	if err := s.cl.Flush(ctx); err != nil {
		return wrap("commit: flush", "", tableNone, nil, err)
	}
	if err := s.failure(); err != nil {
		return err // Run aborts the transaction
	}
	if s.canceled.Load() {
		return wrap("commit", "", tableNone, nil, fmt.Errorf("records were not produced: %w", context.Canceled))
	}
	if err := s.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return wrap("commit", "", tableNone, nil, err)
	}
	s.txn.open = false
	*s.txn = txnState{}
	s.stats.Commits.Add(1)
	if s.cfg.Acked != nil {
		s.cfg.Acked(*cp)
	}
	return nil
}

// timedOut returns err as a retryable ErrTransactionTimedOut when it says the producer was
// fenced while the open transaction was older than transaction.timeout.ms: the coordinator
// aborted it for its age, not for another writer. Any other err is returned as it is.
func (s *Sink) timedOut(err error) error {
	if !fenced(err) || !s.txn.open || s.txn.since.IsZero() {
		return err
	}
	limit := s.cfg.Properties.TransactionTimeout
	if limit <= 0 {
		limit = defaultTransactionTimeout
	}
	age := time.Since(s.txn.since)
	if age < limit {
		return err
	}
	return &Error{Op: "transaction", Retryable: true, Err: fmt.Errorf("%w (open %s, properties.transaction.timeout.ms %s: "+
		"the broker took the records too slowly; a restart resumes from the last commit): %w",
		ErrTransactionTimedOut, age.Round(time.Second), limit, err)}
}

// abortTxn aborts the open transaction, dropping the records still buffered in the
// client. Errors are logged: the caller is already failing, and the next writer's
// InitProducerID aborts whatever is left.
func (s *Sink) abortTxn(ctx context.Context) {
	if !s.txn.open {
		return
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.StopTimeout)
	defer cancel()
	if err := s.cl.AbortBufferedRecords(actx); err != nil {
		s.log.Warn("upsert: abort buffered records", "err", err)
	}
	if err := s.cl.EndTransaction(actx, kgo.TryAbort); err != nil {
		s.log.Warn("upsert: abort transaction", "transactional_id", s.cfg.TransactionalID, "err", err)
	}
	*s.txn = txnState{}
	s.stats.Aborts.Add(1)
}

// stopTxn ends an exactly-once Run: commit when the input stopped on a source
// transaction boundary, abort otherwise (the partial transaction is written again after
// the restart, from the last committed position).
func (s *Sink) stopTxn(ctx context.Context) error {
	if s.txn.partial || s.canceled.Load() {
		s.abortTxn(ctx)
		return nil
	}
	if err := s.maybeCommit(ctx, true); err != nil {
		s.abortTxn(ctx)
		return err
	}
	s.abortTxn(ctx) // nothing left unless there was nothing to commit
	return nil
}
