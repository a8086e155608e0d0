package snapshot

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"unicode"

	"github.com/ingestkit/ingest/change"
)

// intTable is a table keyed by one signed integer column, for tests without a server.
func intTable() *table {
	return &table{
		id:   change.TableID{DB: "d", Table: "t"},
		desc: &Table{Schema: &change.Schema{Columns: []change.Column{{Name: "id"}, {Name: "v"}}, Key: []int{0}}, Columns: []Decoder{testColumn{change.Int}, testColumn{change.Int}}},
		key:  chunkKey{{name: "id", index: 0, typ: keySigned, param: "?"}},
	}
}

func bound(s string) Bound {
	if s == "" {
		return nil
	}
	return Bound{[]byte(s)}
}

func mustSpan(t *testing.T, tbl *table, lo, hi string) span {
	t.Helper()
	s, err := newSpan(t.Context(), tbl, bound(lo), bound(hi))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCompareDecimal(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1", "2", -1}, {"10.5", "9.99", 1}, {"-1.5", "-1.25", -1}, {"-0.00", "0", 0},
		{"0.10", "0.1", 0}, {"-3", "2", -1}, {"007", "7.000", 0}, {"123456789012345678901234567890.1", "123456789012345678901234567890.09", 1},
	} {
		if got := compareDecimal([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("compareDecimal(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestKeyCompareText(t *testing.T) {
	bin := keyColumn{typ: keyText, coll: &collation{name: "utf8mb4_bin", padSpace: true}}
	if bin.compare(change.StringValue([]byte("a ")), change.StringValue([]byte("a"))) != 0 {
		t.Error("PAD SPACE: trailing spaces must not count")
	}
	if bin.compare(change.StringValue([]byte("Z")), change.StringValue([]byte("é"))) >= 0 {
		t.Error("code point order: Z < é")
	}
}

// TestCollationCompare checks the order of texts under each kind of collation the
// snapshot reproduces; general_ci's weights here are a stand-in table (upper case,
// ß as s), the real one is read from the server (TestCollationsMatchServer).
func TestCollationCompare(t *testing.T) {
	ci := &collation{name: "test_general_ci", padSpace: true, weights: make([]uint32, 0x10000), beyond: 0xfffd}
	for r := range ci.weights {
		ci.weights[r] = uint32(unicode.ToUpper(rune(r)))
	}
	ci.weights['ß'] = 'S'
	ciNoPad := *ci
	ciNoPad.padSpace = false
	bin := &collation{name: "utf8mb4_bin", padSpace: true}
	binNoPad := &collation{name: "utf8mb4_nopad_bin"}
	for _, c := range []struct {
		coll *collation
		a, b string
		want int
	}{
		{bin, "a", "b", -1},
		{bin, "a ", "a", 0},
		{bin, "a\t", "a", -1}, // padded: '\t' < ' '
		{bin, "a", "a\t", 1},
		{bin, "a!", "a", 1},
		{bin, "", "  ", 0},
		{bin, "é", "z", 1},
		{bin, "\U0001F600", "\uFFFD", 1},
		{binNoPad, "a ", "a", 1},
		{binNoPad, "a\t", "a", 1},
		{ci, "abc", "ABC", 0},
		{ci, "abc ", "ABC", 0},
		{ci, "ab\t", "AB", -1},
		{ci, "ß", "s", 0},
		{ci, "ßa", "sB", -1},
		{ci, "\U0001F600", "\U0001F603", 0}, // beyond U+FFFF: all alike
		{ci, "\U0001F600", "\uFFFD", 0},
		{ci, "a", "\U0001F600", -1},
		{&ciNoPad, "abc ", "ABC", 1},
		{&ciNoPad, "ABC", "abc ", -1},
	} {
		if got := c.coll.compare([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("%s: compare(%q, %q) = %d, want %d", c.coll.name, c.a, c.b, got, c.want)
		}
	}
}

// TestCompareWeights orders weight strings as the server orders their texts: byte by byte,
// and in a PAD SPACE collation with the shorter one padded with the weight of a space
// (0209 in UCA), so that a unit below it ('\t', 0201) sorts before the end.
func TestCompareWeights(t *testing.T) {
	pad := &collation{name: "utf8mb4_unicode_ci", padSpace: true, server: true, space: []byte{0x02, 0x09}}
	nopad := &collation{name: "utf8mb4_unicode_nopad_ci", server: true, space: []byte{0x02, 0x09}}
	a, tab, sp, bang := []byte{0x20, 0x75}, []byte{0x20, 0x75, 0x02, 0x01}, []byte{0x20, 0x75, 0x02, 0x09}, []byte{0x20, 0x75, 0x02, 0x60}
	for _, c := range []struct {
		coll *collation
		a, b []byte
		want int
	}{
		{pad, a, a, 0}, {pad, a, sp, 0}, {pad, sp, a, 0}, {pad, tab, a, -1}, {pad, a, tab, 1}, {pad, bang, a, 1},
		{pad, a, bang, -1}, {pad, nil, []byte{0x02, 0x09}, 0}, {pad, nil, sp, -1}, {pad, []byte{0x20, 0x76}, bang, 1}, {pad, append(sp, 0x02, 0x09), sp, 0},
		{nopad, a, sp, -1}, {nopad, tab, a, 1}, {nopad, a, a, 0}, {nopad, nil, a, -1},
	} {
		if got := c.coll.compareWeights(c.a, c.b); got != c.want {
			t.Errorf("%s: compareWeights(%X, %X) = %d, want %d", c.coll.name, c.a, c.b, got, c.want)
		}
	}
}

func TestSupportedCollation(t *testing.T) {
	for name, want := range map[string]bool{
		"utf8mb4_bin": true, "utf8mb4_nopad_bin": true, "ascii_bin": true, "utf8mb3_bin": true,
		"utf8mb4_general_ci": true, "utf8mb4_general_nopad_ci": true, "utf8_general_ci": true,
		"latin1_swedish_ci": true, "latin1_general_ci": true,
		"utf8mb4_unicode_ci": true, "utf8mb4_uca1400_ai_ci": true, "utf8mb4_0900_ai_ci": true, "utf8mb4_german2_ci": true,
		"ucs2_unicode_520_ci": true, "utf8mb4_general_mysql500_ci": true,
		"latin1_german2_ci": true, "latin1_bin": true, "cp1250_czech_cs": false, "koi8r_general_ci": false, "binary": true,
	} {
		if got := supportedCollation(name); got != want {
			t.Errorf("supportedCollation(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestRangeCond(t *testing.T) {
	k := chunkKey{{name: "a", param: "?"}, {name: "b", param: "CAST(? AS DECIMAL(5,2))"}}
	got, args := rangeCond(k, []any{1, "2.5"}, true)
	want := "((`a` > ?) OR (`a` = ? AND `b` > CAST(? AS DECIMAL(5,2))))"
	if got != want || fmt.Sprint(args) != "[1 1 2.5]" {
		t.Errorf("above: %s %v\nwant %s", got, args, want)
	}
	got, _ = rangeCond(k, []any{1, "2.5"}, false)
	if want := "((`a` < ?) OR (`a` = ? AND `b` <= CAST(? AS DECIMAL(5,2))))"; got != want {
		t.Errorf("below: %s\nwant %s", got, want)
	}
	got, _ = rangeCond(k[:1], []any{1}, false)
	if got != "`a` <= ?" {
		t.Errorf("single: %s", got)
	}
}

func TestEvenStep(t *testing.T) {
	for _, c := range []struct {
		width    uint64
		estimate int64
		step     uint64
		ok       bool
	}{
		{9999, 10000, 1000, true},  // dense
		{19999, 10000, 2000, true}, // every other id
		{999, 2000, 1000, true},    // estimate too high: never below size
		{9_999_999, 10000, 0, false},
		{100, 0, 0, false},
		{math.MaxUint64, 1 << 40, 0, false},
	} {
		step, ok := evenStep(c.width, c.estimate, 1000)
		if step != c.step || ok != c.ok {
			t.Errorf("evenStep(%d, %d) = %d, %v; want %d, %v", c.width, c.estimate, step, ok, c.step, c.ok)
		}
	}
}

func TestEmitEven(t *testing.T) {
	tbl := intTable()
	var his []string
	r := intRange{min: uint64(math.MaxInt64 - 2500), width: 2500, signed: true}
	err := emitEven(t.Context(), tbl, r, 1000, func(s span) error { his = append(his, s.hi.String()); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`("9223372036854774306")`, `("9223372036854775306")`, "∞"}
	if !slices.Equal(his, want) {
		t.Errorf("bounds %v, want %v", his, want)
	}
}

func TestGaps(t *testing.T) {
	tbl := intTable()
	str := func(ss []span) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.String())
		}
		return out
	}
	for _, c := range []struct {
		done [][2]string
		want []string
	}{
		{nil, []string{"d.t (-∞, +∞]"}},
		{[][2]string{{"", ""}}, nil},
		{[][2]string{{"10", "20"}, {"", "10"}}, []string{`d.t (("20"), +∞]`}},
		{[][2]string{{"10", "20"}, {"30", ""}}, []string{`d.t (-∞, ("10")]`, `d.t (("20"), ("30")]`}},
		{[][2]string{{"", "5"}, {"5", "9"}, {"9", ""}}, nil},
	} {
		var done []span
		for _, d := range c.done {
			done = append(done, mustSpan(t, tbl, d[0], d[1]))
		}
		if got := str(gaps(tbl, done)); !slices.Equal(got, c.want) {
			t.Errorf("gaps(%v) = %v, want %v", c.done, got, c.want)
		}
	}
}
