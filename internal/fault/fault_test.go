package fault

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"
)

// selfClassified is an error type that knows its class, as binlog.RetryableError (cdc/binlog) does.
type selfClassified struct{ retry bool }

func (e selfClassified) Error() string { return "self" }
func (e selfClassified) Retry() bool   { return e.retry }

func TestMarks(t *testing.T) {
	cause := errors.New("cause")
	for _, c := range []struct {
		name          string
		err           error
		retry, marked bool
	}{
		{"nil", nil, false, false},
		{"unmarked", cause, false, false},
		{"retryable", Retryable(cause), true, true},
		{"terminal", Terminal(cause), false, true},
		{"wrapped retryable", fmt.Errorf("op: %w", Retryable(cause)), true, true},
		{"terminal over retryable", Terminal(fmt.Errorf("gave up: %w", Retryable(cause))), false, true},
		{"retryable over terminal", Retryable(Terminal(cause)), true, true},
		{"classified retryable", fmt.Errorf("op: %w", selfClassified{true}), true, true},
		{"classified terminal", selfClassified{false}, false, true},
		{"terminal over classified", Terminal(selfClassified{true}), false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := IsRetryable(c.err); got != c.retry {
				t.Errorf("IsRetryable = %v, want %v", got, c.retry)
			}
			if got := IsTerminal(c.err); got != (c.err != nil && !c.retry) {
				t.Errorf("IsTerminal = %v, want %v", got, c.err != nil && !c.retry)
			}
			if got := IsMarked(c.err); got != c.marked {
				t.Errorf("IsMarked = %v, want %v", got, c.marked)
			}
		})
	}
}

// TestMarkKeepsCause: a mark is invisible to errors.Is/As and to the text.
func TestMarkKeepsCause(t *testing.T) {
	se := &mysql.MySQLError{Number: 1045, Message: "Access denied"}
	for _, err := range []error{Retryable(fmt.Errorf("connect: %w", se)), Terminal(fmt.Errorf("connect: %w", se))} {
		var got *mysql.MySQLError
		if !errors.As(err, &got) || got != se || !errors.Is(err, se) {
			t.Errorf("%v: the cause is not found through the mark", err)
		}
		if err.Error() != "connect: "+se.Error() {
			t.Errorf("text %q, want the cause's", err.Error())
		}
	}
	if Retryable(nil) != nil || Terminal(nil) != nil || MySQL(nil) != nil || Network(nil) != nil {
		t.Error("a mark of nil is not nil")
	}
}

func TestMySQL(t *testing.T) {
	opErr := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	for _, c := range []struct {
		name   string
		err    error
		retry  bool
		marked bool
	}{
		// Lost connections.
		{"database/sql bad connection", fmt.Errorf("query: %w", driver.ErrBadConn), true, true},
		{"go-sql-driver invalid connection", mysql.ErrInvalidConn, true, true},
		{"go-mysql bad connection", fmt.Errorf("io.ReadFull(header) failed: %w", gomysql.ErrBadConn), true, true},
		{"EOF", fmt.Errorf("read: %w", io.EOF), true, true},
		{"unexpected EOF", io.ErrUnexpectedEOF, true, true},
		{"connection reset", opErr, true, true},
		{"connection refused", syscall.ECONNREFUSED, true, true},
		{"closed", net.ErrClosed, true, true},
		{"gone away 2006", &mysql.MySQLError{Number: 2006}, true, true},
		{"lost connection 2013", &gomysql.MyError{Code: 2013}, true, true},
		{"shutdown 1053", &gomysql.MyError{Code: 1053}, true, true},
		{"killed 1927 (MariaDB)", fmt.Errorf("chunk: %w", &gomysql.MyError{Code: 1927, Message: "Connection was killed"}), true, true},
		{"interrupted 1317", &mysql.MySQLError{Number: 1317}, true, true},
		{"aborted 1152", &mysql.MySQLError{Number: 1152}, true, true},
		{"read timeout 1159", &mysql.MySQLError{Number: 1159}, true, true},
		{"write timeout 1161", &mysql.MySQLError{Number: 1161}, true, true},
		{"too many connections 1040", &mysql.MySQLError{Number: 1040}, true, true},
		// What a person must fix.
		{"access denied 1045", &mysql.MySQLError{Number: 1045, Message: "Access denied for user"}, false, true},
		{"access denied 1045 (go-mysql)", &gomysql.MyError{Code: 1045}, false, true},
		{"table grant 1142", &mysql.MySQLError{Number: 1142}, false, true},
		{"privilege 1227", &gomysql.MyError{Code: 1227}, false, true},
		{"syntax 1064", &mysql.MySQLError{Number: 1064}, false, true},
		{"unknown table 1146", &mysql.MySQLError{Number: 1146}, false, true},
		{"unknown database 1049", &mysql.MySQLError{Number: 1049}, false, true},
		// Not MySQL's: left as they are.
		{"plain", errors.New("decode DATETIME"), false, false},
		{"cancelled", fmt.Errorf("read: %w", context.Canceled), false, false},
		{"deadline", context.DeadlineExceeded, false, false},
		// Decided once: a mark already there stays.
		{"already terminal", Terminal(io.EOF), false, true},
		{"already retryable", Retryable(&mysql.MySQLError{Number: 1045}), true, true},
		{"already classified", fmt.Errorf("x: %w", selfClassified{false}), false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := MySQL(c.err)
			if IsRetryable(got) != c.retry || IsMarked(got) != c.marked {
				t.Errorf("MySQL(%v): retryable %v, marked %v; want %v, %v", c.err, IsRetryable(got), IsMarked(got), c.retry, c.marked)
			}
			if !errors.Is(got, c.err) || got.Error() != c.err.Error() {
				t.Errorf("MySQL(%v) = %v: the cause or its text is lost", c.err, got)
			}
		})
	}
}

func TestNetwork(t *testing.T) {
	for _, c := range []struct {
		name  string
		err   error
		retry bool
	}{
		{"EOF", io.EOF, true},
		{"timeout", &net.OpError{Op: "dial", Err: os.ErrDeadlineExceeded}, true},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), true},
		{"plain", errors.New("record too large"), false},
		{"MySQL access denied is not the network's", &mysql.MySQLError{Number: 1045}, false},
		{"cancelled", context.Canceled, false},
		{"marked terminal", Terminal(io.EOF), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := IsRetryable(Network(c.err)); got != c.retry {
				t.Errorf("Network(%v) retryable %v, want %v", c.err, got, c.retry)
			}
		})
	}
}
