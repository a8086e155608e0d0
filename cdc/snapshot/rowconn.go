package snapshot

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
)

// The chunks' SELECTs go over a connection of go-mysql's client, one per reader: it parses
// each row into a reused []FieldValue (integers and doubles as numbers, the rest as bytes),
// where go-sql-driver's driver.Rows puts every column into an interface, an allocation each.
// The watermarks keep the reader's database/sql connection; any connection serves a SELECT
// taken between them.

// openRowConn connects for the chunks' SELECTs, with the session settings of Config.openDB:
// TIMESTAMP in UTC, and text in each column's own character set.
func (c *Config) openRowConn(ctx context.Context) (*client.Conn, error) {
	dialer := &net.Dialer{Timeout: c.ConnectTimeout}
	conn, err := client.ConnectWithDialer(ctx, "tcp", c.Addr, c.User, c.Password, "", dialer.DialContext,
		func(conn *client.Conn) error {
			if c.TLS != nil {
				conn.SetTLSConfig(c.TLS)
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", c.Addr, err)
	}
	if _, err := conn.Execute("SET time_zone = '+00:00', character_set_results = NULL"); err != nil {
		conn.Close()
		return nil, fmt.Errorf("connect %s: session settings: %w", c.Addr, err)
	}
	return conn, nil
}

// interpolate replaces the ? placeholders of a query (outside `quoted` identifiers) with the
// SQL literals of args, in order.
func interpolate(query string, args []any) (string, error) {
	var b strings.Builder
	quoted := false
	next := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '`':
			quoted = !quoted
		case c == '?' && !quoted:
			if next == len(args) {
				return "", fmt.Errorf("query has more placeholders than the %d arguments", len(args))
			}
			lit, err := literal(args[next])
			if err != nil {
				return "", err
			}
			b.WriteString(lit)
			next++
			continue
		}
		b.WriteByte(c)
	}
	if next != len(args) {
		return "", fmt.Errorf("query has %d placeholders for %d arguments", next, len(args))
	}
	return b.String(), nil
}

// literal renders a chunk bound parameter (see keyColumn.paramValue) as SQL. Text and bytes
// are written in hexadecimal, which no sql_mode reads differently: bytes as a binary string,
// text with the _utf8mb4 introducer (text chunk keys are utf8 or ascii).
func literal(v any) (string, error) {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case []byte:
		return "X'" + hex.EncodeToString(x) + "'", nil
	case string:
		return "_utf8mb4 X'" + hex.EncodeToString([]byte(x)) + "'", nil
	}
	return "", fmt.Errorf("no SQL literal for a parameter of type %T", v)
}
