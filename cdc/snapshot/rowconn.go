package snapshot

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// The chunks' SELECTs go over a connection of go-mysql's client, one per reader, whose
// packet layer (authentication, TLS, sequence numbers) we use, but not its result set
// reader: rowConn reads each row packet straight into the chunk's arena and slices the
// columns out of it. go-mysql's streaming reader copies a row three times and parses it into
// []FieldValue (numbers converted twice); go-sql-driver's driver.Rows puts every column into
// an interface, an allocation each. The watermarks keep the reader's database/sql
// connection; any connection serves a SELECT taken between them.

// rowConn is a connection for the chunks' SELECTs.
type rowConn struct {
	*client.Conn
	scratch discard // the packets that are not rows
}

// openRowConn connects for the chunks' SELECTs, with the session settings of Config.openDB:
// TIMESTAMP in UTC, and text in each column's own character set.
func (c *Config) openRowConn(ctx context.Context) (*rowConn, error) {
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
	return &rowConn{Conn: conn}, nil
}

// errMalformed is a packet the text protocol does not allow where it came.
var errMalformed = errors.New("malformed result set packet")

// query sends a SELECT of len(cols) columns and calls row for each row of its result with
// the columns' text (nil for NULL), which stays valid in the arena a. cols is reused for
// every row. An error returned by row, or a server error, ends the query; the connection is
// then only usable if the server's error came before the first row.
func (c *rowConn) query(q string, a *arena, cols [][]byte, row func([][]byte) error) error {
	if err := c.send(q); err != nil {
		return err
	}
	if err := c.header(len(cols)); err != nil {
		return err
	}
	w := packetWriter{a: a}
	for {
		w.begin()
		if err := c.ReadPacketTo(&w); err != nil {
			return err
		}
		pkt := w.packet()
		switch {
		case len(pkt) == 0:
			return errMalformed
		case isEOF(pkt):
			w.discard()
			return nil
		case pkt[0] == mysql.ERR_HEADER:
			err := parseError(pkt)
			w.discard()
			return err
		}
		if err := splitRow(pkt, cols); err != nil {
			return err
		}
		if err := row(cols); err != nil {
			return err
		}
	}
}

// send writes a COM_QUERY packet.
func (c *rowConn) send(q string) error {
	c.ResetSequence()
	data := make([]byte, 5, 5+len(q))
	data[4] = mysql.COM_QUERY
	return c.WritePacket(append(data, q...))
}

// header reads the result set's column count, column definitions and the EOF packet after
// them (go-mysql's client does not ask for CLIENT_DEPRECATE_EOF).
func (c *rowConn) header(n int) error {
	c.scratch.b = c.scratch.b[:0]
	if err := c.ReadPacketTo(&c.scratch); err != nil {
		return err
	}
	first := c.scratch.b
	switch {
	case len(first) == 0:
		return errMalformed
	case first[0] == mysql.ERR_HEADER:
		return parseError(first)
	case first[0] == mysql.OK_HEADER || first[0] == mysql.LocalInFile_HEADER:
		return errors.New("the query returned no result set")
	}
	count, used, ok := lenEnc(first)
	if !ok || used != len(first) {
		return errMalformed
	}
	if count != uint64(n) {
		return fmt.Errorf("result of %d columns, the table has %d", count, n)
	}
	for i := 0; i <= n; i++ { // n definitions, then EOF
		c.scratch.b = c.scratch.b[:0]
		if err := c.ReadPacketTo(&c.scratch); err != nil {
			return err
		}
	}
	if !isEOF(c.scratch.b) {
		return errMalformed
	}
	return nil
}

// isEOF reports whether a packet is an EOF packet (a row starting with 0xfe is longer: the
// length of its first column takes 8 more bytes).
func isEOF(pkt []byte) bool { return len(pkt) > 0 && pkt[0] == mysql.EOF_HEADER && len(pkt) <= 5 }

// parseError returns the server's error of an ERR packet as go-mysql's client does.
func parseError(pkt []byte) error {
	if len(pkt) < 3 {
		return errMalformed
	}
	e := &mysql.MyError{Code: binary.LittleEndian.Uint16(pkt[1:])}
	msg := pkt[3:]
	if len(msg) >= 6 && msg[0] == '#' {
		e.State, msg = string(msg[1:6]), msg[6:]
	}
	e.Message = string(msg)
	return e
}

// splitRow sets cols to the columns of a text protocol row packet, slices of it with their
// capacity clipped; a NULL column is nil, an empty one is empty.
func splitRow(pkt []byte, cols [][]byte) error {
	pos := 0
	for i := range cols {
		if pos >= len(pkt) {
			return errMalformed
		}
		if pkt[pos] == 0xfb {
			cols[i] = nil
			pos++
			continue
		}
		n, used, ok := lenEnc(pkt[pos:])
		if !ok || n > uint64(len(pkt)-pos-used) {
			return errMalformed
		}
		pos += used
		end := pos + int(n)
		cols[i] = pkt[pos:end:end]
		pos = end
	}
	if pos != len(pkt) {
		return errMalformed
	}
	return nil
}

// lenEnc decodes the length-encoded integer at the start of b (not empty), and the bytes it
// takes; ok is false when b is too short or does not start with one.
func lenEnc(b []byte) (n uint64, used int, ok bool) {
	switch b[0] {
	case 0xfb, 0xff: // NULL, undefined
		return 0, 0, false
	case 0xfc:
		if len(b) < 3 {
			return 0, 0, false
		}
		return uint64(binary.LittleEndian.Uint16(b[1:])), 3, true
	case 0xfd:
		if len(b) < 4 {
			return 0, 0, false
		}
		return uint64(b[1]) | uint64(b[2])<<8 | uint64(b[3])<<16, 4, true
	case 0xfe:
		if len(b) < 9 {
			return 0, 0, false
		}
		return binary.LittleEndian.Uint64(b[1:]), 9, true
	}
	return uint64(b[0]), 1, true
}

// discard is an io.Writer keeping the last packet read into it.
type discard struct{ b []byte }

func (d *discard) Write(p []byte) (int, error) {
	d.b = append(d.b, p...)
	return len(p), nil
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
// are written in hexadecimal, which no sql_mode reads differently: bytes as a binary string
// (a text key's placeholder converts it to the column's character set), text with the
// _utf8mb4 introducer.
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
