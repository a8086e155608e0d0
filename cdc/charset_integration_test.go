//go:build integration

package cdc

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ingestkit/ingest/internal/testenv"
)

// TestCharmapsMatchServer asks the server for every byte of every single-byte character set
// it has, converted to utf8mb4, and compares the answers with charmaps.txt (the tables the
// decoders use; -update rewrites it) and with what the decoder of the set gives.
func TestCharmapsMatchServer(t *testing.T) {
	_, db := testenv.Database(t)
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
