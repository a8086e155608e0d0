package snapshot

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestConnectionLost(t *testing.T) {
	for _, c := range []struct {
		err  error
		lost bool
	}{
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{fmt.Errorf("query: %w", driver.ErrBadConn), true},
		{fmt.Errorf("scan: %w", mysql.ErrInvalidConn), true},
		{&mysql.MySQLError{Number: 1253, Message: "COLLATION is not valid"}, false},
		{errors.New("sql: no rows in result set"), false},
	} {
		if got := connectionLost(c.err); got != c.lost {
			t.Errorf("connectionLost(%v) = %v, want %v", c.err, got, c.lost)
		}
	}
}
