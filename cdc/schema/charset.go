package schema

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
)

// binaryCollation is the id of the "binary" collation: BINARY, VARBINARY and BLOB columns.
const binaryCollation = 63

// knownCollations maps the collation ids that are the same on MySQL and MariaDB to their
// character set. The source completes it from information_schema.COLLATIONS on connect.
var knownCollations = map[uint64]string{
	1: "big5", 3: "dec8", 4: "cp850", 5: "latin1", 6: "hp8", 7: "koi8r", 8: "latin1", 9: "latin2",
	10: "swe7", 11: "ascii", 12: "ujis", 13: "sjis", 14: "cp1251", 15: "latin1", 16: "hebrew",
	18: "tis620", 19: "euckr", 20: "latin7", 21: "latin2", 22: "koi8u", 23: "cp1251", 24: "gb2312",
	25: "greek", 26: "cp1250", 27: "latin2", 28: "gbk", 29: "cp1257", 30: "latin5", 31: "latin1",
	32: "armscii8", 33: "utf8mb3", 34: "cp1250", 35: "ucs2", 36: "cp866", 37: "keybcs2",
	38: "macce", 39: "macroman", 40: "cp852", 41: "latin7", 42: "latin7", 43: "macce",
	44: "cp1250", 45: "utf8mb4", 46: "utf8mb4", 47: "latin1", 48: "latin1", 49: "latin1",
	50: "cp1251", 51: "cp1251", 52: "cp1251", 53: "macroman", 54: "utf16", 55: "utf16",
	56: "utf16le", 57: "cp1256", 58: "cp1257", 59: "cp1257", 60: "utf32", 61: "utf32",
	62: "utf16le", 63: "binary", 64: "armscii8", 65: "ascii", 66: "cp1250", 67: "cp1256",
	68: "cp866", 69: "dec8", 70: "greek", 71: "hebrew", 72: "hp8", 73: "keybcs2", 74: "koi8r",
	75: "koi8u", 77: "latin2", 78: "latin5", 79: "latin7", 80: "cp850", 81: "cp852", 82: "swe7",
	83: "utf8mb3", 84: "big5", 85: "euckr", 86: "gb2312", 87: "gbk", 88: "sjis", 89: "tis620",
	90: "ucs2", 91: "ujis", 92: "geostd8", 93: "geostd8", 94: "latin1", 95: "cp932", 96: "cp932",
	97: "eucjpms", 98: "eucjpms", 99: "cp1250", 248: "gb18030", 249: "gb18030", 250: "gb18030",
}

// charsetFor returns the character set of a collation id, or "" when unknown.
func charsetFor(collations map[uint64]string, id uint64) string {
	if cs, ok := collations[id]; ok {
		return cs
	}
	if id >= 192 && id < 248 || id >= 576 && id < 672 {
		// MySQL and MariaDB number their UCA and MariaDB-specific utf8 collations in these ranges.
		if id < 224 {
			return "utf8mb3"
		}
		return "utf8mb4"
	}
	return knownCollations[id]
}

// decoder turns the bytes of a column's character set into UTF-8.
type decoder interface {
	decode(b []byte) ([]byte, error)
}

// decoderFor returns the decoder of a character set, or nil when the bytes are already
// UTF-8 (utf8mb3, utf8mb4) or binary. The single-byte sets decode with the server's own
// tables (charmaps.txt); the multi-byte ones with golang.org/x/text and the server's
// corrections (charset_multibyte.go).
func decoderFor(charset string) (decoder, error) {
	cs := strings.ToLower(charset)
	switch cs {
	case "", "utf8", "utf8mb3", "utf8mb4", "binary":
		return nil, nil
	}
	if t := charmaps[cs]; t != nil {
		return t, nil
	}
	enc := xtextEncodings[cs]
	switch {
	case enc == nil:
		return nil, fmt.Errorf("character set %s is not supported", charset)
	case mbmaps[cs] != nil:
		return mbDecoder{enc: enc, fixes: mbmaps[cs], seqLen: seqLens[cs]}, nil
	}
	return xtextDecoder{enc}, nil
}

type xtextDecoder struct{ enc encoding.Encoding }

func (d xtextDecoder) decode(b []byte) ([]byte, error) {
	return d.enc.NewDecoder().Bytes(b)
}

// charmapsText holds the server's table of every single-byte character set (see its header);
// TestCharmapsMatchServer (charset_integration_test.go) writes it from the server.
//
//go:embed charmaps.txt
var charmapsText string

// charmaps are the decoders of the single-byte character sets, by name.
var charmaps = func() map[string]*charmap256 {
	m, err := parseCharmaps(charmapsText)
	if err != nil {
		panic("cdc: charmaps.txt: " + err.Error())
	}
	return m
}()

// charmap256 maps each byte of a single-byte character set to its character.
type charmap256 struct {
	runes [256]rune
	ascii bool // bytes below 0x80 are ASCII
}

// parseCharmaps reads charmaps.txt: a set's name on a line, then 16 lines of 16 code points.
func parseCharmaps(text string) (map[string]*charmap256, error) {
	m := map[string]*charmap256{}
	var cur *charmap256
	n := 0
	for i, line := range strings.Split(text, "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case !strings.ContainsRune(line, ' '):
			if cur != nil && n != 256 {
				return nil, fmt.Errorf("line %d: %d bytes in the previous set", i+1, n)
			}
			cur, n = &charmap256{}, 0
			m[line] = cur
			continue
		case cur == nil:
			return nil, fmt.Errorf("line %d: code points before a set name", i+1)
		}
		for _, f := range strings.Fields(line) {
			if n == 256 {
				return nil, fmt.Errorf("line %d: more than 256 bytes", i+1)
			}
			r := utf8.RuneError
			if f != "----" {
				v, err := strconv.ParseUint(f, 16, 32)
				if err != nil || !utf8.ValidRune(rune(v)) {
					return nil, fmt.Errorf("line %d: bad code point %q", i+1, f)
				}
				r = rune(v)
			}
			cur.runes[n] = r
			n++
		}
	}
	if cur != nil && n != 256 {
		return nil, fmt.Errorf("%d bytes in the last set", n)
	}
	for _, t := range m {
		t.ascii = true
		for i := range 0x80 {
			t.ascii = t.ascii && t.runes[i] == rune(i)
		}
	}
	return m, nil
}

func (t *charmap256) decode(b []byte) ([]byte, error) {
	if t.ascii && isASCII(b) {
		return b, nil
	}
	out := make([]byte, 0, len(b)+len(b)/2)
	for _, c := range b {
		out = utf8.AppendRune(out, t.runes[c])
	}
	return out, nil
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
