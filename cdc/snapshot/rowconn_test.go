package snapshot

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// binaryPacket builds a binary protocol row packet of values in the given forms; a nil value
// is NULL.
func binaryPacket(forms []wireForm, values ...[]byte) []byte {
	bitmap := make([]byte, (len(values)+9)/8)
	var body []byte
	for i, v := range values {
		switch {
		case v == nil:
			bitmap[(i+2)/8] |= 1 << ((i + 2) % 8)
		case forms[i] == wireText:
			body = append(mysql.AppendLengthEncodedInteger(body, uint64(len(v))), v...)
		case forms[i] == wireTemporal:
			body = append(append(body, byte(len(v))), v...)
		default:
			body = append(body, v...)
		}
	}
	return append(append([]byte{0}, bitmap...), body...)
}

func TestSplitBinaryRow(t *testing.T) {
	long := bytes.Repeat([]byte{'x'}, 70000) // a 3-byte length
	text2 := []wireForm{wireText, wireText}
	mixed := []wireForm{8, wireTemporal, wireText, 1, 4, wireTemporal}
	date := []byte{0xe8, 0x07, 2, 29}
	tests := []struct {
		name   string
		packet []byte
		forms  []wireForm
		want   [][]byte // nil: an error
	}{
		{"text", binaryPacket(text2, []byte("1"), []byte("abc")), text2, [][]byte{[]byte("1"), []byte("abc")}},
		{"null and empty", binaryPacket(text2, nil, []byte{}), text2, [][]byte{nil, {}}},
		{"long", binaryPacket(text2, long, []byte("z")), text2, [][]byte{long, []byte("z")}},
		{"mixed forms", binaryPacket(mixed, []byte("12345678"), date, []byte("é"), []byte{7}, nil, []byte{}), mixed,
			[][]byte{[]byte("12345678"), date, []byte("é"), {7}, nil, {}}},
		{"nine columns, bitmap of two bytes", binaryPacket(make([]wireForm, 9), nil, nil, nil, nil, nil, nil, nil, nil, []byte("z")),
			make([]wireForm, 9), [][]byte{nil, nil, nil, nil, nil, nil, nil, nil, []byte("z")}},
		{"fixed value cut short", binaryPacket([]wireForm{4}, []byte{1, 2, 3, 4})[:4], []wireForm{4}, nil},
		{"temporal length past the end", []byte{0, 0, 7, 1, 2}, []wireForm{wireTemporal}, nil},
		{"text length past the end", []byte{0, 0, 5, 'a', 'b'}, []wireForm{wireText}, nil},
		{"bytes left over", append(binaryPacket(text2, []byte("1"), []byte("2")), 'x'), text2, nil},
		{"not a row", []byte{0xfe, 0, 0, 2, 0}, []wireForm{wireText}, nil},
		{"no bitmap", []byte{0}, text2, nil},
		{"undefined length", []byte{0, 0, 0xff}, []wireForm{wireText}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cols := make([][]byte, len(tc.forms))
			err := splitBinaryRow(tc.packet, tc.forms, cols)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("no error; columns %q", cols)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range cols {
				if (c == nil) != (tc.want[i] == nil) || !bytes.Equal(c, tc.want[i]) {
					t.Fatalf("column %d: %q, want %q", i, c, tc.want[i])
				}
				if cap(c) != len(c) {
					t.Fatalf("column %d: capacity %d past its length %d", i, cap(c), len(c))
				}
			}
		})
	}
}

// TestExecutePacket checks COM_STMT_EXECUTE byte for byte, with and without query
// attributes (MySQL 8.0.23+).
func TestExecutePacket(t *testing.T) {
	st := stmt{id: 0x01020304, params: 4}
	args := []any{int64(-2), uint64(3), []byte{0xff}, "1.5"}
	head := []byte{0, 0, 0, 0, 0x17, 4, 3, 2, 1}
	values := []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 3, '1', '.', '5'}
	tests := []struct {
		name  string
		attrs bool
		want  []byte
	}{
		{"plain", false, slices.Concat(head, []byte{0, 1, 0, 0, 0, 0, 1, 8, 0, 8, 0x80, 0xfc, 0, 0xfe, 0}, values)},
		{"query attributes", true, slices.Concat(head, []byte{8, 1, 0, 0, 0, 4, 0, 1, 8, 0, 0, 8, 0x80, 0, 0xfc, 0, 0, 0xfe, 0, 0}, values)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := executePacket(st, args, tc.attrs)
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Fatalf("executePacket = % x, %v\nwant            % x", got, err, tc.want)
			}
		})
	}
	noParams, err := executePacket(stmt{id: 9}, nil, true)
	if want := []byte{0, 0, 0, 0, 0x17, 9, 0, 0, 0, 0, 1, 0, 0, 0}; err != nil || !bytes.Equal(noParams, want) {
		t.Fatalf("no parameters: % x, %v; want % x", noParams, err, want)
	}
	if _, err := executePacket(stmt{id: 1, params: 1}, []any{1.5}, false); err == nil {
		t.Fatal("a float parameter was accepted")
	}
}

func TestColumnType(t *testing.T) {
	def := []byte{3, 'd', 'e', 'f', 1, 'd', 1, 't', 1, 't', 2, 'i', 'd', 2, 'i', 'd', 0x0c, 0x3f, 0, 20, 0, 0, 0, mysql.MYSQL_TYPE_LONGLONG, 0x23, 0x50, 0, 0, 0}
	if typ, err := columnType(def); err != nil || typ != mysql.MYSQL_TYPE_LONGLONG {
		t.Fatalf("columnType = %d, %v; want %d", typ, err, mysql.MYSQL_TYPE_LONGLONG)
	}
	for _, bad := range [][]byte{def[:10], def[:20], append(slices.Clone(def[:16]), 0x0b, 0, 0, 0, 0, 0, 0, 8)} {
		if typ, err := columnType(bad); err == nil {
			t.Errorf("columnType(% x) = %d, want an error", bad, typ)
		}
	}
	if formOf(mysql.MYSQL_TYPE_LONGLONG) != 8 || formOf(mysql.MYSQL_TYPE_YEAR) != 2 || formOf(mysql.MYSQL_TYPE_DATETIME) != wireTemporal ||
		formOf(mysql.MYSQL_TYPE_NEWDECIMAL) != wireText || formOf(mysql.MYSQL_TYPE_BIT) != wireText {
		t.Fatal("formOf gives the wrong form")
	}
}

func TestParsePrepareOK(t *testing.T) {
	st, cols, err := parsePrepareOK([]byte{0, 7, 0, 0, 0, 3, 0, 2, 0, 0, 0, 0})
	if err != nil || st != (stmt{id: 7, params: 2}) || cols != 3 {
		t.Fatalf("parsePrepareOK = %+v, %d, %v", st, cols, err)
	}
	var e *mysql.MyError
	if _, _, err := parsePrepareOK(append([]byte{0xff, 0x1e, 0x04}, "#42S22Unknown column"...)); !errors.As(err, &e) || e.Code != 1054 {
		t.Fatalf("ERR packet: %v", err)
	}
	if _, _, err := parsePrepareOK([]byte{0, 7, 0}); !errors.Is(err, errMalformed) {
		t.Fatalf("short packet: %v", err)
	}
}

func TestParseError(t *testing.T) {
	pkt := append([]byte{0xff, 0x1e, 0x04, '#'}, "42S22Unknown column 'x' in 'SELECT'"...)
	var e *mysql.MyError
	if err := parseError(pkt); !errors.As(err, &e) || e.Code != 1054 || e.State != "42S22" || e.Message != "Unknown column 'x' in 'SELECT'" {
		t.Fatalf("parseError = %#v", err)
	}
	if !reshaped(parseError(pkt)) {
		t.Fatal("an unknown column from the row connection is not a shape change")
	}
	if err := parseError([]byte{0xff, 1}); !errors.Is(err, errMalformed) {
		t.Fatalf("short ERR packet: %v", err)
	}
}

// FuzzSplitBinaryRow checks that no packet makes splitBinaryRow panic or return columns
// outside it.
func FuzzSplitBinaryRow(f *testing.F) {
	forms := []wireForm{wireText, 8, wireTemporal, 1, 2, 4, wireText, wireTemporal, wireText, 8}
	f.Add(binaryPacket(forms[:3], []byte("1"), nil, []byte{0xe8, 7, 1, 1}), 3)
	f.Add([]byte{0, 0, 0xfe, 1, 0, 0, 0, 0, 0, 0, 0, 'a'}, 1)
	f.Fuzz(func(t *testing.T, packet []byte, n int) {
		if n < 0 || n > len(forms) {
			return
		}
		cols := make([][]byte, n)
		if err := splitBinaryRow(packet, forms[:n], cols); err != nil {
			return
		}
		total := 0
		for _, c := range cols {
			total += len(c)
		}
		if total > len(packet) {
			t.Fatalf("%d column bytes from a packet of %d", total, len(packet))
		}
	})
}

func TestIsEOF(t *testing.T) {
	for _, tc := range []struct {
		pkt  []byte
		want bool
	}{
		{nil, false}, {[]byte{0xfe, 0, 0, 2, 0}, true}, {[]byte{0xfe, 1, 2, 3, 4, 5, 6, 7, 8, 'x'}, false}, {[]byte{0}, false},
	} {
		if got := isEOF(tc.pkt); got != tc.want {
			t.Errorf("isEOF(%v) = %v, want %v", tc.pkt, got, tc.want)
		}
	}
}
