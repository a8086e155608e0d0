package snapshot

import (
	"fmt"
	"math"
	"slices"
	"testing"

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
	s, err := newSpan(tbl, bound(lo), bound(hi))
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
	pad := keyColumn{typ: keyText, padSpace: true}
	if pad.compare(change.StringValue([]byte("a ")), change.StringValue([]byte("a"))) != 0 {
		t.Error("PAD SPACE: trailing spaces must not count")
	}
	noPad := keyColumn{typ: keyText}
	if noPad.compare(change.StringValue([]byte("a ")), change.StringValue([]byte("a"))) <= 0 {
		t.Error("NO PAD: 'a ' > 'a'")
	}
	if noPad.compare(change.StringValue([]byte("Z")), change.StringValue([]byte("é"))) >= 0 {
		t.Error("code point order: Z < é")
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
	err := emitEven(tbl, r, 1000, func(s span) error { his = append(his, s.hi.String()); return nil })
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
