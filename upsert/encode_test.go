package upsert

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ingestkit/ingest/change"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var commitTime = time.Date(2024, 2, 29, 13, 14, 15, 0, time.UTC)

// kindsSchema has a column of every kind; its key is (id, code).
var kindsSchema = &change.Schema{
	Table: change.TableID{DB: "shop", Table: "kinds"},
	Columns: []change.Column{
		{Name: "id", SQLType: "bigint unsigned"}, {Name: "flag", SQLType: "tinyint(1)"},
		{Name: "i", SQLType: "bigint"}, {Name: "u", SQLType: "bigint unsigned"},
		{Name: "f", SQLType: "float"}, {Name: "d", SQLType: "double"},
		{Name: "price", SQLType: "decimal(20,6)"}, {Name: "name", SQLType: "varchar(64)"},
		{Name: "blob", SQLType: "varbinary(16)"}, {Name: "doc", SQLType: "json"},
		{Name: "day", SQLType: "date"}, {Name: "at", SQLType: "datetime(6)"},
		{Name: "ts", SQLType: "timestamp(3)"}, {Name: "dur", SQLType: "time(1)"},
		{Name: "geo", SQLType: "point"}, {Name: "code", SQLType: "char(2)"},
	},
	Key:     []int{0, 15},
	Version: 1,
}

// kindsRows are rows of kindsSchema, named.
var kindsRows = []struct {
	name string
	row  change.Row
}{
	{"typical", change.Row{
		change.UintValue(42), change.BoolValue(true), change.IntValue(-128), change.UintValue(7),
		change.Float32Value(3.14159), change.Float64Value(2.718281828459045),
		change.DecimalValue([]byte("4.50")), change.StringValue([]byte("héllo 🚀")),
		change.BytesValue([]byte{0xde, 0xad, 0xbe, 0x00}), change.JSONValue([]byte(`{"k":[1,2.5,"x"]}`)),
		change.DateValue(2024, 2, 29), change.DateTimeValue(2024, 2, 29, 13, 14, 15, 120000),
		change.TimestampValue(1704145245678000), change.TimeValue(-(12*3600 + 34*60 + 56) * 1e6),
		change.GeometryValue([]byte(`{"type":"Point","coordinates":[1,2],"srid":0}`)),
		change.StringValue([]byte("ab")),
	}},
	{"edges", change.Row{
		change.UintValue(math.MaxUint64), change.BoolValue(false), change.IntValue(math.MinInt64),
		change.UintValue(math.MaxUint64), change.Float32Value(1e-7), change.Float64Value(1e21),
		change.DecimalValue([]byte("-12345678901234.123456")),
		change.StringValue([]byte("q\"b\\s/\b\t\n\f\r\x00\x1f\x7f<>&\u2028\u2029 end")),
		change.BytesValue([]byte{}), change.JSONValue([]byte(`"\u00e9\n"`)),
		change.DateValue(1, 1, 1), change.DateTimeValue(9999, 12, 31, 23, 59, 59, 999999),
		change.TimestampValue(1), change.TimeValue(-(838*3600 + 59*60 + 59) * 1e6),
		change.GeometryValue([]byte(`{"type":"LineString","coordinates":[[1.5,2],[3,4e-7]],"srid":4326}`)),
		change.StringValue([]byte("")),
	}},
	{"more edges", change.Row{
		change.UintValue(0), change.BoolValue(true), change.IntValue(math.MaxInt64), change.UintValue(0),
		change.Float32Value(16777216), change.Float64Value(-0.000001),
		change.DecimalValue([]byte("0.000001")), change.StringValue([]byte("\xff invalid \xc3")),
		change.BytesValue([]byte{0xff}), change.JSONValue([]byte(`[]`)),
		change.DateValue(2024, 12, 1), change.DateTimeValue(2024, 1, 2, 3, 4, 5, 0),
		change.TimestampValue(-1), change.TimeValue(100*3600*1e6 + 500000),
		change.GeometryValue([]byte(`{}`)), change.StringValue([]byte("日本")),
	}},
	{"nulls", change.Row{
		change.UintValue(1), {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
		change.StringValue([]byte("zz")),
	}},
}

// orders is a table with a composite key for the change cases.
var orders = &change.Schema{
	Table:   change.TableID{DB: "shop_1", Table: "orders"},
	Columns: []change.Column{{Name: "line_no"}, {Name: "note"}, {Name: "order_id"}},
	Key:     []int{2, 0},
	Version: 3,
}

func orderRow(order, line int64, note string) change.Row {
	return change.Row{change.IntValue(line), change.StringValue([]byte(note)), change.IntValue(order)}
}

var changeCases = []struct {
	name string
	c    change.Change
}{
	{"insert", change.Change{Schema: orders, Op: change.Insert, After: orderRow(7, 2, "new")}},
	{"update same key", change.Change{Schema: orders, Op: change.Update,
		Before: orderRow(7, 2, "new"), After: orderRow(7, 2, "paid")}},
	{"update key change", change.Change{Schema: orders, Op: change.Update,
		Before: orderRow(7, 2, "paid"), After: orderRow(8, 1, "moved")}},
	{"update without before image", change.Change{Schema: orders, Op: change.Update, After: orderRow(8, 1, "again")}},
	{"delete", change.Change{Schema: orders, Op: change.Delete, Before: orderRow(8, 1, "moved")}},
	{"schema change", change.Change{Schema: orders, Op: change.SchemaChange}},
}

func TestEncodeGolden(t *testing.T) {
	headers := []Header{{"env", "prod"}, {"team", "data"}}
	tests := []struct {
		file    string
		opts    EncodeOptions
		changes []change.Change
	}{
		{"kinds_sql", EncodeOptions{}, kindChanges()},
		{"kinds_iso8601", EncodeOptions{Timestamps: TimestampISO8601}, kindChanges()},
		{"kinds_decimal_string_json_object", EncodeOptions{DecimalAsString: true, JSONAsObject: true}, kindChanges()},
		{"kinds_time_micros", EncodeOptions{TimeAsMicros: true}, kindChanges()},
		{"changes", EncodeOptions{}, caseChanges()},
		{"changes_headers", EncodeOptions{TableHeaders: true, CustomHeaders: headers}, caseChanges()},
		{"changes_custom_headers_only", EncodeOptions{CustomHeaders: headers[:1]}, caseChanges()[:1]},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			enc := NewEncoder(tc.opts)
			var out bytes.Buffer
			for i := range tc.changes {
				c := &tc.changes[i]
				msgs, err := enc.Encode(nil, c, commitTime)
				if err != nil {
					t.Fatalf("change %d: %v", i, err)
				}
				fmt.Fprintf(&out, "== %s %s: %d record(s)\n", c.Op, c.Schema.Table, len(msgs))
				for _, m := range msgs {
					checkMessage(t, m)
					writeMessage(&out, m)
				}
			}
			golden(t, tc.file, out.Bytes())
		})
	}
}

func kindChanges() []change.Change {
	var cs []change.Change
	for _, r := range kindsRows {
		cs = append(cs, change.Change{Schema: kindsSchema, Op: change.Insert, After: r.row})
	}
	return cs
}

func caseChanges() []change.Change {
	var cs []change.Change
	for _, c := range changeCases {
		cs = append(cs, c.c)
	}
	return cs
}

// checkMessage checks what holds for every message: valid JSON key and value, the commit
// time, non-nil header values.
func checkMessage(t *testing.T, m Message) {
	t.Helper()
	if !json.Valid(m.Key) {
		t.Errorf("key is not valid JSON: %s", m.Key)
	}
	if m.Value != nil && !json.Valid(m.Value) {
		t.Errorf("value is not valid JSON: %s", m.Value)
	}
	if !m.Timestamp.Equal(commitTime) {
		t.Errorf("timestamp %v, want %v", m.Timestamp, commitTime)
	}
	for _, h := range m.Headers {
		if h.Value == nil {
			t.Errorf("header %s has a null value", h.Key)
		}
	}
}

func writeMessage(out *bytes.Buffer, m Message) {
	fmt.Fprintf(out, "key:   %s\n", m.Key)
	if m.Value == nil {
		out.WriteString("value: <tombstone>\n")
	} else {
		fmt.Fprintf(out, "value: %s\n", m.Value)
	}
	if len(m.Headers) > 0 {
		var hs []string
		for _, h := range m.Headers {
			hs = append(hs, fmt.Sprintf("%s=%q", h.Key, h.Value))
		}
		fmt.Fprintf(out, "headers: %s\n", strings.Join(hs, " "))
	}
	fmt.Fprintf(out, "timestamp: %d\n", m.Timestamp.UnixMilli())
}

// golden compares got with testdata/<name>.golden, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestAppendString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`"\`, `"\"\\"`},
		{"\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"\x00\x01\x0b\x1a\x1f", `"\u0000\u0001\u000B\u001A\u001F"`},
		{"\x7f", "\"\x7f\""},
		{"<>&/", `"<>&/"`},
		{"\u2028\u2029", "\"\u2028\u2029\""},
		{"é🚀日本", `"é🚀日本"`},
		{"a\xffb", "\"a\uFFFDb\""},
		{"\xe2\x82", "\"\uFFFD\uFFFD\""},
		{"\xed\xa0\x80", "\"\uFFFD\uFFFD\uFFFD\""}, // a UTF-16 surrogate is not UTF-8
	}
	for _, tc := range tests {
		if got := string(appendString(nil, []byte(tc.in))); got != tc.want {
			t.Errorf("appendString(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestPlain8 checks the 8-bytes-at-once test against the byte-by-byte rule, for every byte
// value at every position of a plain word and for random words.
func TestPlain8(t *testing.T) {
	naive := func(b []byte) bool {
		for _, c := range b {
			if c >= utf8.RuneSelf || escape[c] != 0 {
				return false
			}
		}
		return true
	}
	check := func(b []byte) {
		t.Helper()
		if got, want := plain8(binary.LittleEndian.Uint64(b)), naive(b); got != want {
			t.Fatalf("plain8(%q) = %v, want %v", b, got, want)
		}
	}
	for pos := range 8 {
		for c := range 256 {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			check(b)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 8)
	for range 200_000 {
		for i := range b {
			b[i] = byte(r.IntN(0x90)) // mostly ASCII, so that plain words occur
		}
		check(b)
	}
}

func TestEncodeErrors(t *testing.T) {
	bad := []struct {
		name string
		c    change.Change
		opts EncodeOptions
		want string
	}{
		{"no schema", change.Change{Op: change.Insert}, EncodeOptions{}, "without a schema"},
		{"no key", change.Change{Schema: &change.Schema{Columns: []change.Column{{Name: "a"}}}, Op: change.Insert,
			After: change.Row{{}}}, EncodeOptions{}, "without a schema or a key"},
		{"short row", change.Change{Schema: orders, Op: change.Insert, After: change.Row{{}}}, EncodeOptions{},
			"shop_1.orders: row has 1 values, schema has 3 columns"},
		{"delete without before", change.Change{Schema: orders, Op: change.Delete}, EncodeOptions{},
			"without the row image"},
		{"bad decimal", change.Change{Schema: orders, Op: change.Insert, After: change.Row{
			change.DecimalValue([]byte("1e5")), {}, change.IntValue(1)}}, EncodeOptions{},
			`shop_1.orders column line_no: invalid decimal text "1e5"`},
		{"bad json object", change.Change{Schema: orders, Op: change.Insert, After: change.Row{
			change.IntValue(1), change.JSONValue([]byte("{")), change.IntValue(1)}}, EncodeOptions{JSONAsObject: true},
			"column note: invalid JSON document"},
		{"bad kind", change.Change{Schema: orders, Op: change.Insert, After: change.Row{
			change.IntValue(1), {Kind: 99}, change.IntValue(1)}}, EncodeOptions{}, "unknown value kind kind(99)"},
		{"bad op", change.Change{Schema: orders, Op: 9, After: orderRow(1, 1, "")}, EncodeOptions{}, "unknown op"},
		{"bad key index", change.Change{Schema: &change.Schema{Columns: []change.Column{{Name: "a"}}, Key: []int{1}},
			Op: change.Insert, After: change.Row{{}}}, EncodeOptions{}, "key column index 1 out of range"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewEncoder(tc.opts).Encode(nil, &tc.c, commitTime)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestValidDecimal(t *testing.T) {
	for _, s := range []string{"0", "-0", "4.50", "-12345678901234.123456", "0.000001", "18446744073709551615"} {
		if !validDecimal([]byte(s)) {
			t.Errorf("validDecimal(%q) = false", s)
		}
	}
	for _, s := range []string{"", "-", ".5", "5.", "01", "1e5", "+1", "1.2.3", "NaN", " 1"} {
		if validDecimal([]byte(s)) {
			t.Errorf("validDecimal(%q) = true", s)
		}
	}
}

// TestEncoderSchemaChange checks that a new schema of a table (another pointer or version)
// is picked up, and that earlier messages keep their bytes.
func TestEncoderSchemaChange(t *testing.T) {
	enc := NewEncoder(EncodeOptions{})
	v1 := &change.Schema{Table: orders.Table, Columns: []change.Column{{Name: "id"}}, Key: []int{0}, Version: 1}
	v2 := &change.Schema{Table: orders.Table, Columns: []change.Column{{Name: "id"}, {Name: "x"}}, Key: []int{0}, Version: 2}
	m1, err := enc.Encode(nil, &change.Change{Schema: v1, Op: change.Insert, After: change.Row{change.IntValue(1)}}, commitTime)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := enc.Encode(nil, &change.Change{Schema: v2, Op: change.Insert,
		After: change.Row{change.IntValue(1), change.IntValue(2)}}, commitTime)
	if err != nil {
		t.Fatal(err)
	}
	// Many more records, enough to replace the slab several times.
	for i := range 10000 {
		if _, err := enc.Encode(nil, &change.Change{Schema: v2, Op: change.Insert,
			After: change.Row{change.IntValue(int64(i)), change.IntValue(2)}}, commitTime); err != nil {
			t.Fatal(err)
		}
	}
	if got := string(m1[0].Value); got != `{"id":1}` {
		t.Errorf("v1 value %s", got)
	}
	if got := string(m2[0].Value); got != `{"id":1,"x":2}` {
		t.Errorf("v2 value %s", got)
	}
	if len(enc.tables) != 1 {
		t.Errorf("cache holds %d tables, want 1", len(enc.tables))
	}
}

func TestParseCustomHeaders(t *testing.T) {
	got, err := ParseCustomHeaders(" k1 : v1 ;k2:v:2;; ")
	if err != nil {
		t.Fatal(err)
	}
	want := []Header{{"k1", "v1"}, {"k2", "v:2"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if hs, err := ParseCustomHeaders(""); err != nil || hs != nil {
		t.Errorf("empty: got %v, %v", hs, err)
	}
	for _, bad := range []string{"novalue", ":v", "a:1;a:2", "tableName:x", "k1:v1;oops"} {
		if _, err := ParseCustomHeaders(bad); err == nil {
			t.Errorf("ParseCustomHeaders(%q): no error", bad)
		}
	}
}
