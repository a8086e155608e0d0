package upsert

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/fault"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrFenced reports that another writer with the same transactional id has started, so
// this one must stop: the newer writer owns the pipeline now.
var ErrFenced = errors.New("fenced by a newer writer with the same transactional id")

// Error is an error of the sink with the coordinates of what failed. Use [IsRetryable] to
// tell whether restarting the pipeline from its last stored position may succeed.
type Error struct {
	// Op is what the sink was doing: "produce", "commit", "create topic"…
	Op string
	// Topic is the topic involved, if any.
	Topic string
	// Table is the source table involved, if known.
	Table change.TableID
	// Key is the record key involved, if any.
	Key []byte
	// Retryable says that the cause may go away (a broker down, a timeout), so that a
	// restart from the last position may succeed; otherwise the cause needs a person (a
	// record too large, an authorization or configuration error, fencing).
	Retryable bool
	// Err is the cause.
	Err error
}

// Error returns "upsert: <op> topic <t> table <db.t> key <k>: <cause>".
func (e *Error) Error() string {
	s := "upsert: " + e.Op
	if e.Topic != "" {
		s += " topic " + e.Topic
	}
	if e.Table != (change.TableID{}) {
		s += " table " + e.Table.String()
	}
	if e.Key != nil {
		s += " key " + strconv.Quote(string(truncate(e.Key)))
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Retry reports the Retryable field: the sink's verdict in the fault model
// (internal/fault), which the runner's supervisor follows.
func (e *Error) Retry() bool { return e.Retryable }

// IsRetryable reports whether err is a sink [Error] marked retryable (and no outer mark
// overrules it).
func IsRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && fault.IsRetryable(err)
}

// OversizedError is the cause of an [Error] for a record larger than max.request.size.
type OversizedError struct {
	Size, Max int
}

// Error names both sizes.
func (e *OversizedError) Error() string {
	return fmt.Sprintf("record of %d bytes is larger than max.request.size %d (raise properties.max.request.size and the topic's max.message.bytes, or set sink.skip-oversized-records)", e.Size, e.Max)
}

// retryable classifies a cause: broker and network trouble that a restart may outlive.
func retryable(err error) bool {
	switch {
	case errors.Is(err, ErrFenced), errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge):
		return false
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, kgo.ErrRecordTimeout),
		errors.Is(err, kgo.ErrRecordRetries):
		return true
	case fault.IsMarked(err):
		return fault.IsRetryable(err)
	}
	return fault.IsRetryable(fault.Network(err)) || kerr.IsRetriable(err)
}

// ErrTransactionTimedOut reports that the Kafka transaction coordinator aborted the open
// transaction because it outlived transaction.timeout.ms (a broker that takes records too
// slowly), which bumps the producer epoch as a newer writer would. Nothing committed is
// lost; a restart from the last commit, with a new producer epoch, continues.
var ErrTransactionTimedOut = errors.New("the Kafka transaction outlived properties.transaction.timeout.ms and the coordinator aborted it")

// defaultTransactionTimeout is franz-go's transaction timeout when
// properties.transaction.timeout.ms is not set.
const defaultTransactionTimeout = 40 * time.Second

// fenced reports whether err says that a newer producer took the transactional id over.
func fenced(err error) bool {
	return errors.Is(err, ErrFenced) || errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch)
}

// tableNone is the zero table, for errors that concern no table.
var tableNone change.TableID

// wrap makes a sink Error of err, classifying it.
func wrap(op, topic string, table change.TableID, key []byte, err error) *Error {
	switch {
	case errors.Is(err, kerr.InvalidProducerEpoch) && !errors.Is(err, ErrFenced):
		// Not necessarily another writer: the coordinator also bumps the epoch when it aborts
		// a transaction that outlived transaction.timeout.ms (a slow or stalled broker).
		err = fmt.Errorf("%w (the transaction coordinator aborted the open Kafka transaction: either another writer "+
			"with the same transactional id started, or the transaction outlived properties.transaction.timeout.ms; "+
			"nothing committed is lost, a restart resumes from the last commit; if no other writer runs, raise "+
			"properties.transaction.timeout.ms or lower sink.transaction.interval): %w", ErrFenced, err)
	case fenced(err) && !errors.Is(err, ErrFenced):
		err = fmt.Errorf("%w: %w", ErrFenced, err)
	}
	return &Error{Op: op, Topic: topic, Table: table, Key: key, Retryable: retryable(err), Err: err}
}
