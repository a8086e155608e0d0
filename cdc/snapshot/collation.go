package snapshot

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// collation orders key text as the server's collation does, so that binlog keys can be
// placed in the chunks the server's ranges made. There are three kinds:
//
//   - The binary-ordered collations (utf8*_bin, ascii_bin) weigh a character by its code
//     point.
//   - The *_general_ci family (Unicode and single-byte) and latin1_swedish_ci weigh each
//     character on its own, with one weight of a fixed width: their table is read from the
//     server (WEIGHT_STRING of every character up to U+FFFF), and texts are compared in Go.
//   - The other collations of the Unicode character sets and of latin1 (the UCA ones:
//     *_unicode_ci, *_unicode_520_ci, *_uca1400_*_ci, MySQL 8's *_0900_ai_ci and their
//     language tailorings; latin1_german2_ci, latin1_bin…) weigh sequences of characters
//     (contractions, expansions, ignorable characters) or bytes of a character set other
//     than Go's, which only the server knows: a key text is compared through its
//     WEIGHT_STRING, asked of the server ([weigher]). Only single-level collations are
//     used, whose weight strings order as the texts do, unit by unit (the accent- or
//     case-sensitive UCA ones append a level after another).
//
// A PAD SPACE collation compares as if the shorter text were padded with spaces
// ('a\t' < 'a' = 'a ' < 'a!'). Every collation is checked against the server's own
// comparisons before it is used ([loadCollation]).
type collation struct {
	name     string
	padSpace bool
	// weights holds the weight of each code point up to U+FFFF; nil means the code point
	// is the weight.
	weights []uint32
	// beyond is the weight of every character above U+FFFF (general_ci weighs them all
	// as U+FFFD).
	beyond uint32
	// server is set when only the server can weigh a text: key tuples then hold weight
	// strings, compared by [collation.compareWeights]. space is the weight of ' ', one
	// unit of the weight strings.
	server bool
	space  []byte
}

// weight returns the weight of r.
func (c *collation) weight(r rune) uint32 {
	switch {
	case c.weights == nil:
		return uint32(r)
	case r >= 0 && int(r) < len(c.weights):
		return c.weights[r]
	}
	return c.beyond
}

// compare orders two UTF-8 texts.
func (c *collation) compare(a, b []byte) int {
	if c.weights == nil {
		// Code point order is UTF-8 byte order; a common byte prefix ends on a
		// character boundary of the longer text.
		n := min(len(a), len(b))
		if r := bytes.Compare(a[:n], b[:n]); r != 0 {
			return r
		}
		a, b = a[n:], b[n:]
	} else {
		for len(a) > 0 && len(b) > 0 {
			ra, na := utf8.DecodeRune(a)
			rb, nb := utf8.DecodeRune(b)
			if r := cmp.Compare(c.weight(ra), c.weight(rb)); r != 0 {
				return r
			}
			a, b = a[na:], b[nb:]
		}
	}
	if !c.padSpace || len(a) == len(b) {
		return cmp.Compare(len(a), len(b))
	}
	// The rest of the longer text is compared with spaces.
	rest, sign := a, 1
	if len(b) > 0 {
		rest, sign = b, -1
	}
	space := c.weight(' ')
	for len(rest) > 0 {
		r, n := utf8.DecodeRune(rest)
		if w := c.weight(r); w != space {
			return sign * cmp.Compare(w, space)
		}
		rest = rest[n:]
	}
	return 0
}

// compareWeights orders two weight strings of a server-weighed collation: byte by byte, and
// for PAD SPACE with the rest of the longer one compared, unit by unit, with the weight of
// a space.
func (c *collation) compareWeights(a, b []byte) int {
	n := min(len(a), len(b))
	if r := bytes.Compare(a[:n], b[:n]); r != 0 {
		return r
	}
	if !c.padSpace || len(a) == len(b) {
		return cmp.Compare(len(a), len(b))
	}
	rest, sign := a[n:], 1
	if len(b) > n {
		rest, sign = b[n:], -1
	}
	for unit := len(c.space); len(rest) >= unit; rest = rest[unit:] {
		if r := bytes.Compare(rest[:unit], c.space); r != 0 {
			return sign * r
		}
	}
	return 0
}

// padSpaceCollation reports whether a collation ignores trailing spaces: all of
// MariaDB's but the *_nopad_* ones, and MySQL's but the UCA 9.0.0 (*_0900_*) ones.
func padSpaceCollation(name string) bool {
	return !strings.Contains(name, "nopad") && !strings.Contains(name, "0900")
}

// binaryOrdered reports whether a collation orders UTF-8 text by code point, which is the
// byte order of its UTF-8 form (the text a Decoder returns).
func binaryOrdered(collation string) bool {
	charset, _, _ := strings.Cut(collation, "_")
	switch charset {
	case "utf8", "utf8mb3", "utf8mb4", "ascii":
		return strings.HasSuffix(collation, "_bin")
	}
	return collation == "binary"
}

// weighedCollation matches the collations that weigh each character on its own.
var weighedCollation = regexp.MustCompile(`^(?:(?:utf8|utf8mb3|utf8mb4|ucs2|utf16|utf16le|utf32|latin1|ascii)_general(?:_nopad)?_ci|latin1_swedish(?:_nopad)?_ci)$`)

// serverWeighed reports whether a collation is one of the Unicode character sets' or
// latin1's whose texts only the server can weigh: all of theirs but the binary-ordered and
// general ones (latin1_bin too: MariaDB's latin1 is cp1252, whose bytes 0x80-0x9F are not
// in code point order).
func serverWeighed(name string) bool {
	charset, _, _ := strings.Cut(name, "_")
	switch charset {
	case "utf8", "utf8mb3", "utf8mb4", "ucs2", "utf16", "utf16le", "utf32", "latin1":
		return !binaryOrdered(name) && !weighedCollation.MatchString(name)
	}
	return false
}

// supportedCollation reports whether key text in the collation can be ordered by the
// snapshot (in Go, or through the server's weight strings).
func supportedCollation(name string) bool {
	return binaryOrdered(name) || weighedCollation.MatchString(name) || serverWeighed(name)
}

// collations caches the weight tables read from each server, by address and name.
var collations sync.Map

// loadCollation returns the collation of a key column: from its name for a binary
// order, else from the server's weights, read once per server and checked against the
// server's comparisons of texts chosen to catch a wrong weight, a wrong treatment of
// trailing spaces and of characters beyond U+FFFF.
func loadCollation(ctx context.Context, db *sql.DB, addr, name string) (*collation, error) {
	if binaryOrdered(name) {
		return &collation{name: name, padSpace: padSpaceCollation(name)}, nil
	}
	if !supportedCollation(name) {
		return nil, fmt.Errorf("collation %s is not supported", name)
	}
	key := addr + "\x00" + name
	if c, ok := collations.Load(key); ok {
		return c.(*collation), nil
	}
	read := readWeights
	if serverWeighed(name) {
		read = readSpaceWeight
	}
	c, err := read(ctx, db, name)
	if err != nil {
		return nil, fmt.Errorf("collation %s: %w", name, err)
	}
	if err := checkCollation(ctx, db, c); err != nil {
		return nil, fmt.Errorf("collation %s: %w", name, err)
	}
	collations.Store(key, c)
	return c, nil
}

// codePointsSQL selects n = 0…65535 but the surrogates, on MariaDB and MySQL alike.
const codePointsSQL = `(SELECT a.d * 4096 + b.d * 256 + c.d * 16 + e.d AS n FROM ` + hexDigitsSQL + ` a, ` + hexDigitsSQL + ` b, ` +
	hexDigitsSQL + ` c, ` + hexDigitsSQL + ` e) cp WHERE n < 55296 OR n > 57343`

const hexDigitsSQL = `(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9 UNION ALL SELECT 10 UNION ALL SELECT 11 UNION ALL SELECT 12 UNION ALL SELECT 13 UNION ALL SELECT 14 UNION ALL SELECT 15)`

// charText is the SQL text of the character with code point n in the collation.
func charText(n, name string) string {
	charset, _, _ := strings.Cut(name, "_")
	return "CONVERT(CHAR(" + n + " USING utf32) USING " + charset + ") COLLATE " + name
}

// readWeights reads the weight of every character up to U+FFFF and of three beyond it.
// Characters the column's character set cannot hold become '?' and never occur in keys.
func readWeights(ctx context.Context, db *sql.DB, name string) (*collation, error) {
	c := &collation{name: name, padSpace: padSpaceCollation(name), weights: make([]uint32, 0x10000)}
	rows, err := db.QueryContext(ctx, "SELECT n, WEIGHT_STRING("+charText("n", name)+") FROM "+codePointsSQL+
		" UNION ALL SELECT n, WEIGHT_STRING("+charText("n", name)+") FROM (SELECT 65536 n UNION ALL SELECT 128512 UNION ALL SELECT 1114111) hi")
	if err != nil {
		return nil, fmt.Errorf("read weights: %w", err)
	}
	defer rows.Close()
	width := -1
	var beyond []uint32
	for rows.Next() {
		var n int
		var w []byte
		if err := rows.Scan(&n, &w); err != nil {
			return nil, fmt.Errorf("read weights: %w", err)
		}
		if width < 0 {
			width = len(w)
		}
		if len(w) != width || width == 0 || width > 4 {
			return nil, fmt.Errorf("U+%04X weighs %d bytes, others %d: not one weight of a fixed width per character", n, len(w), width)
		}
		v := weightValue(w)
		if n < len(c.weights) {
			c.weights[n] = v
		} else {
			beyond = append(beyond, v)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read weights: %w", err)
	}
	if len(beyond) != 3 || beyond[1] != beyond[0] || beyond[2] != beyond[0] {
		return nil, fmt.Errorf("characters beyond U+FFFF are weighed one by one")
	}
	c.beyond = beyond[0]
	return c, nil
}

// readSpaceWeight sets up a server-weighed collation: it reads the weight of a space and
// refuses a collation that weighs at more than one level. The accent- or case-sensitive
// UCA collations append the weights of each level (' a' is the primary weights of ' ' and
// 'a', then their secondary weights…), so their weight strings do not order as the texts
// do with a PAD SPACE or as prefixes; a single level's weight string of ' a' is that of ' '
// followed by that of 'a'.
func readSpaceWeight(ctx context.Context, db *sql.DB, name string) (*collation, error) {
	p := "WEIGHT_STRING(" + paramText(name) + ")"
	var space, a, upper, spaceA, aA []byte
	err := db.QueryRowContext(ctx, "SELECT "+p+", "+p+", "+p+", "+p+", "+p, " ", "a", "A", " a", "aA").Scan(&space, &a, &upper, &spaceA, &aA)
	if err != nil {
		return nil, fmt.Errorf("read the weight of a space: %w", err)
	}
	if len(space) == 0 || !bytes.Equal(spaceA, append(slices.Clip(space), a...)) || !bytes.Equal(aA, append(slices.Clip(a), upper...)) {
		return nil, fmt.Errorf("weighs texts at more than one level (WEIGHT_STRING of 'aA' is %X): the snapshot cannot order "+
			"an accent- or case-sensitive UCA collation (an *_ai_ci or *_unicode_ci one it can)", aA)
	}
	return &collation{name: name, padSpace: padSpaceCollation(name), server: true, space: space}, nil
}

func weightValue(w []byte) uint32 {
	var v uint32
	for _, b := range w {
		v = v<<8 | uint32(b)
	}
	return v
}

// collationProbes are pairs of texts whose order tells a wrong collation table or rule.
var collationProbes = [][2]string{
	{"a", "A"}, {"a", "b"}, {"B", "a"}, {"a", "a "}, {"a\t", "a"}, {"a", "a!"}, {"", " "}, {"", "\t"},
	{"ab", "a b"}, {"é", "E"}, {"é", "f"}, {"Z", "é"}, {"ß", "s"}, {"ß", "ss"}, {"Æ", "ae"}, {"ÿ", "Y"},
	{"Straße", "STRASSE"}, {"ı", "I"}, {"ǅ", "Ǆ"}, {"ﬁ", "fi"}, {"Ω", "ω"}, {"Ω", "Ω"}, {"ä", "a\u0308"},
	{"日本", "本日"}, {"😀", "😃"}, {"😀", "\uFFFD"}, {"😀", "z"}, {"a😀", "a"}, {"\u00a0", " "}, {"\x00", ""},
}

// checkCollation compares the probes on the server and with c; any difference refuses c.
func checkCollation(ctx context.Context, db *sql.DB, c *collation) error {
	var sel strings.Builder
	args := make([]any, 0, 2*len(collationProbes))
	for i, p := range collationProbes {
		if i > 0 {
			sel.WriteString(", ")
		}
		fmt.Fprintf(&sel, "STRCMP(%s, %s)", paramText(c.name), paramText(c.name))
		args = append(args, p[0], p[1])
	}
	got := make([]int, len(collationProbes))
	weights := make([][2][]byte, len(collationProbes))
	dst := make([]any, 0, 3*len(got))
	for i := range got {
		dst = append(dst, &got[i])
	}
	if c.server {
		for i, p := range collationProbes {
			fmt.Fprintf(&sel, ", WEIGHT_STRING(%s), WEIGHT_STRING(%s)", paramText(c.name), paramText(c.name))
			args = append(args, p[0], p[1])
			dst = append(dst, &weights[i][0], &weights[i][1])
		}
	}
	if err := db.QueryRowContext(ctx, "SELECT "+sel.String(), args...).Scan(dst...); err != nil {
		return fmt.Errorf("compare probes: %w", err)
	}
	for i, p := range collationProbes {
		a, b := p[0], p[1]
		if !representable(c.name, a) || !representable(c.name, b) {
			continue
		}
		have := 0
		if c.server {
			have = c.compareWeights(weights[i][0], weights[i][1])
		} else {
			have = c.compare([]byte(a), []byte(b))
		}
		if want := got[i]; have != want {
			return fmt.Errorf("the server orders %q and %q as %d, the weights as %d", a, b, want, have)
		}
	}
	return nil
}

// paramText is a text parameter in the collation's character set and collation.
func paramText(name string) string {
	charset, _, _ := strings.Cut(name, "_")
	return "CONVERT(? USING " + charset + ") COLLATE " + name
}

// representable reports whether every character of s exists in the collation's
// character set (the probes of other sets are skipped: the server sees '?' instead).
func representable(name, s string) bool {
	switch charset, _, _ := strings.Cut(name, "_"); charset {
	case "latin1":
		for _, r := range s {
			if r > 0xff {
				return false
			}
		}
	case "ascii":
		for _, r := range s {
			if r > 0x7f {
				return false
			}
		}
	case "utf8", "utf8mb3", "ucs2":
		for _, r := range s {
			if r > 0xffff {
				return false
			}
		}
	}
	return true
}
