//go:build integration

package schema

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ingestkit/ingest/internal/testenv"
)

// unmapped marks a byte the server does not map, in a table read from it.
const unmapped rune = -1

// charmapsHeader is the comment charmaps.txt starts with.
const charmapsHeader = `# MariaDB's single-byte character sets: for each set, the code point of each byte 00..FF, 16
# per line, as the server converts it (CONVERT(CHAR(byte USING set) USING utf8mb4)); ---- is a
# byte the server does not map (it converts it to '?'), which decodes to U+FFFD.
# Written by TestCharmapsMatchServer -update (charset_integration_test.go); do not edit.
`

// mbmapsHeader is the comment mbmaps.txt starts with.
const mbmapsHeader = `# Where MariaDB maps a character of a multi-byte character set otherwise than
# golang.org/x/text: the set, the bytes (hex) and the code point the server converts them to,
# and a count when that many consecutive sequences map to consecutive code points.
# Written by TestMultiByteMatchesServer -update (charset_integration_test.go); do not edit.
`

// TestCharmapsMatchServer asks the server for every byte of every single-byte character set
// it has, converted to utf8mb4, and compares the answers with charmaps.txt (the tables the
// decoders use; -update rewrites it) and with what the decoder of the set gives.
func TestCharmapsMatchServer(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		_, db := srv.Database(t)
		rows, err := db.Query("SELECT CHARACTER_SET_NAME FROM information_schema.CHARACTER_SETS WHERE MAXLEN = 1 AND CHARACTER_SET_NAME <> 'binary' ORDER BY 1")
		if err != nil {
			t.Fatal(err)
		}
		var sets []string
		for rows.Next() {
			var cs string
			if err := rows.Scan(&cs); err != nil {
				t.Fatal(err)
			}
			sets = append(sets, cs)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		b.WriteString(charmapsHeader)
		for _, cs := range sets {
			var table [256]rune
			for i := range table {
				var text []byte
				if err := db.QueryRow("SELECT CONVERT(CHAR(? USING "+cs+") USING utf8mb4)", i).Scan(&text); err != nil {
					t.Fatalf("%s byte %#x: %v", cs, i, err)
				}
				r, n := utf8.DecodeRune(text)
				switch {
				case n != len(text) || r == utf8.RuneError && n < 3:
					t.Fatalf("%s byte %#x: the server gives %q", cs, i, text)
				case r == '?' && i != '?':
					r = unmapped
				}
				table[i] = r
			}
			b.WriteString(formatCharmap(cs, &table))
			if *update {
				continue
			}
			dec, err := decoderFor(cs)
			if err != nil {
				t.Errorf("%s: %v", cs, err)
			}
			for i, r := range table {
				if dec == nil {
					t.Errorf("%s: no decoder", cs)
					break
				}
				got, err := dec.decode([]byte{byte(i)})
				want := string(r)
				if r == unmapped {
					want = string(utf8.RuneError)
				}
				if err != nil || string(got) != want {
					t.Errorf("%s byte %#x: decoder gives %q (%v), the server %q", cs, i, got, err, want)
				}
			}
		}
		got := b.String()
		if *update {
			if err := os.WriteFile("charmaps.txt", []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		if got != charmapsText {
			t.Errorf("charmaps.txt differs from the server's tables (run with -update to accept):\n%s", got)
		}
	})
}

func formatCharmap(cs string, table *[256]rune) string {
	var b strings.Builder
	b.WriteString(cs + "\n")
	for i, r := range table {
		if r == unmapped {
			b.WriteString("----")
		} else {
			fmt.Fprintf(&b, "%04X", r)
		}
		if i%16 == 15 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// TestMultiByteMatchesServer asks the server for every sequence of one, two and (for the
// EUC-JP sets) three bytes of each multi-byte character set it has (but the Unicode ones),
// converted to utf8mb4. Where it gives one character, golang.org/x/text's other answers are
// the corrections of mbmaps.txt (-update rewrites it), and the set's decoder must give it.
func TestMultiByteMatchesServer(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		_, db := srv.Database(t)
		rows, err := db.Query(`SELECT CHARACTER_SET_NAME FROM information_schema.CHARACTER_SETS
WHERE MAXLEN > 1 AND CHARACTER_SET_NAME NOT IN ('utf8mb3', 'utf8mb4', 'ucs2', 'utf16', 'utf16le', 'utf32') ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		var sets []string
		for rows.Next() {
			var cs string
			if err := rows.Scan(&cs); err != nil {
				t.Fatal(err)
			}
			sets = append(sets, cs)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		var fixes mbRuns
		for _, cs := range sets {
			dec, err := decoderFor(cs)
			if err != nil {
				t.Fatalf("%s: %v", cs, err)
			}
			ranges := [][3]int{{0x80, 0xff, 2}, {0x8000, 0xffff, 4}}
			if cs == "ujis" || cs == "eucjpms" {
				ranges = append(ranges, [3]int{0x8f0000, 0x8fffff, 6})
			}
			mapped, fixed := 0, 0
			for _, r := range ranges {
				q := fmt.Sprintf("SELECT UNHEX(LPAD(HEX(seq), %d, '0')), CONVERT(CAST(UNHEX(LPAD(HEX(seq), %d, '0')) AS CHAR CHARACTER SET %s) USING utf8mb4) FROM seq_%d_to_%d",
					r[2], r[2], cs, r[0], r[1])
				rows, err := db.Query(q)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var in, out []byte
					if err := rows.Scan(&in, &out); err != nil {
						t.Fatal(err)
					}
					if ch, n := utf8.DecodeRune(out); n != len(out) || ch == '?' || ch == utf8.RuneError && n < 3 {
						continue // not one character of the set
					}
					mapped++
					plain, _ := xtextDecoder{enc: xtextEncodings[cs]}.decode(in)
					if string(plain) != string(out) {
						if len(in) == 1 {
							t.Errorf("%s byte %x: the server gives %q, x/text %q", cs, in, out, plain)
						}
						r, _ := utf8.DecodeRune(out)
						fixes.add(cs, in, r)
						fixed++
					}
					if got, err := dec.decode(in); !*update && (err != nil || string(got) != string(out)) {
						t.Errorf("%s %x: decoder gives %q (%v), the server %q", cs, in, got, err, out)
					}
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				rows.Close()
			}
			t.Logf("%s: %d characters, %d corrected", cs, mapped, fixed)
		}
		got := mbmapsHeader + fixes.String()
		if *update {
			if err := os.WriteFile("mbmaps.txt", []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		if got != mbmapsText {
			t.Errorf("mbmaps.txt differs from the server's mappings (run with -update to accept)")
		}
	})
}

// mbRuns collects corrections as runs of consecutive sequences mapped to consecutive code
// points.
type mbRuns struct {
	lines []string
	cs    string
	first []byte
	last  uint32 // the last sequence, as a number
	n     int    // sequences in the run
	r     rune   // the first code point
}

func (m *mbRuns) add(cs string, seq []byte, r rune) {
	var key uint32
	for _, c := range seq {
		key = key<<8 | uint32(c)
	}
	if m.n > 0 && cs == m.cs && len(seq) == len(m.first) && key == m.last+1 && r == m.r+rune(m.n) {
		m.last, m.n = key, m.n+1
		return
	}
	m.flush()
	m.cs, m.first, m.last, m.n, m.r = cs, seq, key, 1, r
}

func (m *mbRuns) flush() {
	if m.n == 0 {
		return
	}
	line := fmt.Sprintf("%s %X %04X", m.cs, m.first, m.r)
	if m.n > 1 {
		line += fmt.Sprintf(" %d", m.n)
	}
	m.lines = append(m.lines, line)
	m.n = 0
}

func (m *mbRuns) String() string {
	m.flush()
	return strings.Join(m.lines, "\n") + "\n"
}

// update rewrites charmaps.txt and mbmaps.txt from the server.
var update = flag.Bool("update", false, "rewrite charmaps.txt and mbmaps.txt from the server")
