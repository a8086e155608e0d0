package cdc

import (
	"fmt"
	"strings"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/fault"
)

// RetryableError marks a failure that a new connection may cure (network loss, a killed
// replication connection, a server restart); it is retryable in the fault model
// (internal/fault). Run retries these itself, with backoff, up to Config.ConnectRetries
// consecutive failures, and then returns the last one marked terminal (fault.Terminal): the
// runner does not restart a stream that could not reconnect.
//
// The other error types of this file are terminal: each needs a person.
type RetryableError struct {
	Op  string // what was being done: "connect", "read binlog", …
	Err error
}

func (e *RetryableError) Error() string { return "cdc: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *RetryableError) Unwrap() error { return e.Err }

// Retry reports true: a new connection may cure it (fault.Classified).
func (e *RetryableError) Retry() bool { return true }

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
	return &RetryableError{Op: op, Err: err}
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

// CompressedTransactionError says the binlog holds a compressed transaction
// (TRANSACTION_PAYLOAD_EVENT, written by MySQL 8.0.20+ with binlog_transaction_compression
// ON for the server or the session). ingest cannot read its rows; going past it would lose
// them, so it is fatal and the stored position stays before it.
type CompressedTransactionError struct {
	Position binlogpos.Position // where the compressed transaction starts
}

func (e *CompressedTransactionError) Error() string {
	return fmt.Sprintf("cdc: the binlog at %s holds a compressed transaction (MySQL binlog_transaction_compression is ON "+
		"for the server or the session that wrote it), which ingest cannot read; its rows would be lost: set "+
		"binlog_transaction_compression = OFF globally and in the server configuration (and stop sessions from "+
		"setting it), then re-snapshot the tables, or restart past it knowingly with scan.startup.mode "+
		"specific-offset", e.Position)
}

// Retry reports false: a restart meets it again (fault.Classified).
func (e *CompressedTransactionError) Retry() bool { return false }

// StatementFormatError says the binlog holds a row change of a captured table as an SQL
// statement (a Query event), not as row events: the server, or the session that wrote it,
// uses binlog_format STATEMENT or MIXED. Its rows cannot be read; going past would lose them,
// so it is fatal and the stored position stays before it.
type StatementFormatError struct {
	Table     change.TableID     // the table written; zero when the statement names none readable
	Position  binlogpos.Position // the position before the transaction
	Statement string
}

func (e *StatementFormatError) Error() string {
	stmt := e.Statement
	if len(stmt) > 200 {
		stmt = stmt[:200] + "…"
	}
	table := "a table that may be captured"
	if e.Table.Table != "" {
		table = "captured table " + e.Table.String()
	}
	return fmt.Sprintf("cdc: the binlog after %s holds a change of %s as a statement, not as rows (%q): "+
		"the server or the session that wrote it uses binlog_format STATEMENT or MIXED, and the change would be lost: "+
		"SET GLOBAL binlog_format = 'ROW' (and in the server configuration), stop sessions from setting binlog_format, "+
		"then re-snapshot the table (remove the pipeline's stored state)", e.Position, table, stmt)
}

// Retry reports false: a restart meets it again (fault.Classified).
func (e *StatementFormatError) Retry() bool { return false }

// SchemaError says a row could not be matched with or decoded by the table description.
type SchemaError struct {
	Table    change.TableID
	Position binlogpos.Position
	Err      error
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("cdc: table %s at %s: %v", e.Table, e.Position, e.Err)
}

// Retry reports false: a restart meets it again (fault.Classified).
func (e *SchemaError) Retry() bool { return false }

// Unwrap returns the cause.
func (e *SchemaError) Unwrap() error { return e.Err }
