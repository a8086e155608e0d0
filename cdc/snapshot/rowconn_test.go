package snapshot

import (
	"bytes"
	"errors"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

func TestInterpolate(t *testing.T) {
	tests := []struct {
		query string
		args  []any
		want  string
	}{
		{"`id` > ? AND `id` <= ?", []any{int64(-5), int64(10)}, "`id` > -5 AND `id` <= 10"},
		{"`a?b` > ?", []any{uint64(18446744073709551615)}, "`a?b` > 18446744073709551615"},
		{"`k` > ?", []any{[]byte{0, 'x', 0xff}}, "`k` > X'0078ff'"},
		{"`k` > ?", []any{[]byte{}}, "`k` > X''"},
		{"`n` > CAST(? AS DECIMAL(5,2))", []any{"-1.50"}, "`n` > CAST(_utf8mb4 X'2d312e3530' AS DECIMAL(5,2))"},
		{"`s` > ?", []any{"it's \\ é"}, "`s` > _utf8mb4 X'69742773205c20c3a9'"},
	}
	for _, tc := range tests {
		got, err := interpolate(tc.query, tc.args)
		if err != nil || got != tc.want {
			t.Errorf("interpolate(%q, %v) = %q, %v; want %q", tc.query, tc.args, got, err, tc.want)
		}
	}
	for _, bad := range []struct {
		query string
		args  []any
	}{
		{"`a` > ? AND `a` <= ?", []any{int64(1)}},
		{"`a` > ?", []any{int64(1), int64(2)}},
		{"`a` > ?", []any{1.5}},
	} {
		if got, err := interpolate(bad.query, bad.args); err == nil {
			t.Errorf("interpolate(%q, %v) = %q, want an error", bad.query, bad.args, got)
		}
	}
}

// textPacket builds a text protocol row packet; a nil value is NULL.
func textPacket(values ...[]byte) []byte {
	var p []byte
	for _, v := range values {
		if v == nil {
			p = append(p, 0xfb)
			continue
		}
		p = mysql.AppendLengthEncodedInteger(p, uint64(len(v)))
		p = append(p, v...)
	}
	return p
}

func TestSplitRow(t *testing.T) {
	long := bytes.Repeat([]byte{'x'}, 70000) // a 3-byte length
	tests := []struct {
		name   string
		packet []byte
		cols   int
		want   [][]byte // nil: an error
	}{
		{"values", textPacket([]byte("1"), []byte("abc")), 2, [][]byte{[]byte("1"), []byte("abc")}},
		{"null and empty", textPacket(nil, []byte{}), 2, [][]byte{nil, {}}},
		{"long", textPacket(long, []byte("z")), 2, [][]byte{long, []byte("z")}},
		{"254 bytes", textPacket(long[:254]), 1, [][]byte{long[:254]}},
		{"too few columns", textPacket([]byte("1")), 2, nil},
		{"too many columns", textPacket([]byte("1"), []byte("2")), 1, nil},
		{"length past the end", []byte{5, 'a', 'b'}, 1, nil},
		{"short length", []byte{0xfc, 1}, 1, nil},
		{"undefined length", []byte{0xff}, 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cols := make([][]byte, tc.cols)
			err := splitRow(tc.packet, cols)
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

// FuzzSplitRow checks that no packet makes splitRow panic or return columns outside it.
func FuzzSplitRow(f *testing.F) {
	f.Add(textPacket([]byte("1"), nil, []byte("abc")), 3)
	f.Add([]byte{0xfe, 1, 0, 0, 0, 0, 0, 0, 0, 'a'}, 1)
	f.Add([]byte{0xfd, 2, 0, 0, 'a', 'b'}, 1)
	f.Fuzz(func(t *testing.T, packet []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		cols := make([][]byte, n)
		if err := splitRow(packet, cols); err != nil {
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
