// Package fault is ingest's one fault model: an error is either retryable (a restart from the
// stored position may cure it: a connection lost, a server restarting, a broker away) or
// terminal (it needs a person: a refused password, a missing grant, a purged binlog, a
// record too large). The part that knows marks the error once, where it is known; the
// runner's supervisor (runner/runner.go, restarting) asks [IsRetryable] and restarts the
// pipeline from its stored progress, or stops it.
//
// A mark keeps the cause: errors.Is and errors.As see through it, and its text is the
// cause's. The outermost mark decides, so a part may overrule a cause's mark (the binlog
// reader's exhausted retries are terminal, though each failure was retryable). An error
// without any mark is terminal: the supervisor restarts only what someone said may pass.
//
// Error types that know their own class implement [Classified] (the RetryableError of
// cdc/binlog, upsert.Error) instead of being wrapped.
package fault

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"
)

// Classified is an error that says itself whether a restart may cure it.
type Classified interface {
	error
	// Retry reports whether a restart from the stored position may succeed.
	Retry() bool
}

// mark is the wrapper of [Retryable] and [Terminal].
type mark struct {
	err   error
	retry bool
}

func (m *mark) Error() string { return m.err.Error() }
func (m *mark) Unwrap() error { return m.err }
func (m *mark) Retry() bool   { return m.retry }

// Retryable marks err retryable; nil stays nil.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return &mark{err: err, retry: true}
}

// Terminal marks err terminal; nil stays nil.
func Terminal(err error) error {
	if err == nil {
		return nil
	}
	return &mark{err: err}
}

// class returns the outermost mark's verdict on err, and whether it has one.
func class(err error) (retry, marked bool) {
	var c Classified
	if errors.As(err, &c) {
		return c.Retry(), true
	}
	return false, false
}

// IsRetryable reports whether err's outermost mark says retryable.
func IsRetryable(err error) bool {
	retry, _ := class(err)
	return retry
}

// IsTerminal reports whether err is an error that no restart cures: marked terminal, or not
// marked at all. nil is not.
func IsTerminal(err error) bool {
	return err != nil && !IsRetryable(err)
}

// IsMarked reports whether err carries a mark (or a [Classified] error) at all.
func IsMarked(err error) bool {
	_, marked := class(err)
	return marked
}

// Network marks err retryable when it is the network's: the connection closed (io.EOF in
// the middle of a reply), reset, refused or timed out. Otherwise, and when err is marked
// already, it returns err as it is.
func Network(err error) error {
	if err == nil || IsMarked(err) || errors.Is(err, context.Canceled) {
		return err
	}
	if network(err) {
		return Retryable(err)
	}
	return err
}

func network(err error) bool {
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE)
}

// MySQL server error codes that a new connection may outlive.
var mysqlRetryable = map[uint16]string{
	1040: "too many connections",
	1053: "server shutdown in progress",
	1152: "aborted connection",
	1158: "error reading communication packets",
	1159: "timeout reading communication packets",
	1160: "error writing communication packets",
	1161: "timeout writing communication packets",
	1205: "lock wait timeout",
	1213: "deadlock",
	1317: "query interrupted",
	1927: "connection killed (MariaDB)",
	2002: "cannot connect (socket)",
	2003: "cannot connect (TCP)",
	2006: "server has gone away",
	2013: "lost connection during query",
	2055: "lost connection (system error)",
	4031: "disconnected by the server for inactivity",
}

// MySQL classifies an error of a MySQL or MariaDB client (go-sql-driver/mysql or go-mysql):
// a lost connection (the driver's bad connection, a network error, the server's "gone
// away", "lost connection", "shutdown in progress", "connection killed" …) is retryable;
// any other server error (access denied 1045, a missing grant 1142/1227, a syntax error, an
// unknown table) is terminal. An error that is marked already, a context's error and an
// error of neither kind are returned as they are.
func MySQL(err error) error {
	if err == nil || IsMarked(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if code, ok := mysqlCode(err); ok {
		if _, retry := mysqlRetryable[code]; retry {
			return Retryable(err)
		}
		return Terminal(err)
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, gomysql.ErrBadConn) {
		return Retryable(err)
	}
	return Network(err)
}

// mysqlCode is the server error number in err, from either client.
func mysqlCode(err error) (uint16, bool) {
	var se *mysql.MySQLError
	if errors.As(err, &se) {
		return se.Number, true
	}
	var me *gomysql.MyError
	if errors.As(err, &me) {
		return me.Code, true
	}
	return 0, false
}
