package binlog

import (
	"fmt"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/change"
)

// RetryableError marks a failure that a new connection may cure (network loss, a killed
// replication connection, a server restart); it is retryable in the fault model
// (internal/fault). Run retries these itself, with backoff, up to Config.ConnectRetries
// consecutive failures, and then returns the last one marked terminal (fault.Terminal): the
// runner does not restart a stream that could not reconnect.
type RetryableError struct {
	Op  string // what was being done: "connect", "read binlog", …
	Err error
}

func (e *RetryableError) Error() string { return "cdc: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *RetryableError) Unwrap() error { return e.Err }

// Retry reports true: a new connection may cure it (fault.Classified).
func (e *RetryableError) Retry() bool { return true }

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
