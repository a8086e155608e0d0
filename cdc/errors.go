package cdc

import (
	"fmt"
	"strings"

	"github.com/ingestkit/ingest/cdc/binlog"
	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/internal/fault"
)

// IsRetryable reports whether err is retryable in the fault model: its outermost mark is a
// [RetryableError] or fault.Retryable.
func IsRetryable(err error) bool { return fault.IsRetryable(err) }

// retryableOp makes err, a failure of op talking to the server, a [RetryableError], unless
// the server's answer says no new connection cures it (access denied, a missing grant):
// then it is marked terminal.
func retryableOp(op string, err error) error {
	if m := fault.MySQL(err); fault.IsMarked(m) && !fault.IsRetryable(m) {
		return fault.Terminal(fmt.Errorf("cdc: %s: %w", op, err))
	}
	return &binlog.RetryableError{Op: op, Err: err}
}

// PositionLostError says the binlog the stream must resume from is gone from the server
// (purged by binlog_expire_logs_seconds or PURGE BINARY LOGS; MySQL/MariaDB error 1236).
// Resuming would lose changes, so it is fatal: re-snapshot.
type PositionLostError struct {
	Position binlogpos.Position // the position asked for
	Err      error              // the server's error
}

func (e *PositionLostError) Error() string {
	return fmt.Sprintf("cdc: binlog position %s is no longer on the server (%v); the changes since then are lost: "+
		"re-snapshot the tables (remove the pipeline's stored state so it starts with the initial snapshot, or use "+
		"scan.startup.mode latest-offset to skip the gap knowingly), and raise binlog_expire_logs_seconds so the "+
		"binlog outlives the longest stop", e.Position, e.Err)
}

// Retry reports false: a restart meets it again (fault.Classified).
func (e *PositionLostError) Retry() bool { return false }

// Unwrap returns the server's error.
func (e *PositionLostError) Unwrap() error { return e.Err }

// PreflightError says the server, the user or the stored position is unfit for the stream
// ([Preflight] found Error problems): reading on would lose or mis-decode changes, so it is
// fatal. Each problem names the fix.
type PreflightError struct {
	Addr     string    // the server's host:port
	Problems []Problem // Error severity only
}

func (e *PreflightError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Check + ": " + p.Message
	}
	return fmt.Sprintf("cdc: source %s cannot be read without losing changes: %s", e.Addr, strings.Join(msgs, "; "))
}

// Retry reports false: a restart meets it again (fault.Classified).
func (e *PreflightError) Retry() bool { return false }

// Has reports whether one of the problems is of the given check ("position", "server", …).
func (e *PreflightError) Has(check string) bool {
	for _, p := range e.Problems {
		if p.Check == check {
			return true
		}
	}
	return false
}

// ServerIDConflictError says another replica connected with the same server id (error
// 4052 or a 1236 naming the id), and the server dropped this connection. Two readers with
// one id kick each other off in turn, so it is fatal.
type ServerIDConflictError struct {
	ServerID uint32
	Err      error
}

func (e *ServerIDConflictError) Error() string {
	return fmt.Sprintf("cdc: another replica is connected with server-id %d (%v); give every pipeline and "+
		"replica of this server its own server-id (source option server-id)", e.ServerID, e.Err)
}

// Retry reports false: a restart meets it again (fault.Classified).
func (e *ServerIDConflictError) Retry() bool { return false }

// Unwrap returns the server's error.
func (e *ServerIDConflictError) Unwrap() error { return e.Err }
