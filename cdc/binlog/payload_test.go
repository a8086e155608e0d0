package binlog

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/fault"
)

// TestCompressedTransactionStops: a MySQL compressed transaction (TRANSACTION_PAYLOAD_EVENT)
// stops the stream with a fatal error at the position before it, instead of being skipped
// with its rows.
func TestCompressedTransactionStops(t *testing.T) {
	from := binlogpos.Position{File: "binlog.000007", Offset: 1200}
	s := NewStream(Options{}, nil, make(chan change.Batch, 1), from, false)
	ev := &replication.BinlogEvent{
		Header: &replication.EventHeader{EventType: replication.TRANSACTION_PAYLOAD_EVENT, LogPos: 5000, Timestamp: 1},
		Event:  &replication.TransactionPayloadEvent{},
	}
	err := s.Handle(context.Background(), ev)
	var ce *CompressedTransactionError
	if !errors.As(err, &ce) {
		t.Fatalf("handle = %v, want a CompressedTransactionError", err)
	}
	if fault.IsRetryable(err) {
		t.Error("a compressed transaction is retryable; retrying cannot read it")
	}
	if ce.Position.String() != from.String() || s.cur.String() != from.String() {
		t.Errorf("error at %s, stream at %s; want both at %s (before the transaction)", ce.Position, s.cur, from)
	}
	if msg := err.Error(); !strings.Contains(msg, "binlog_transaction_compression = OFF") || !strings.Contains(msg, "binlog.000007") {
		t.Errorf("message lacks the fix or the position: %s", msg)
	}
}
