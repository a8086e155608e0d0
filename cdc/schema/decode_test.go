package schema

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/ingestkit/ingest/change"
)

// infoCol builds a Column the way the snapshot would, from information_schema facts.
func infoCol(t *testing.T, dataType, columnType, charset string, scale, length int) *Column {
	t.Helper()
	c, err := columnFromInfo(InfoColumn{Name: "c", DataType: dataType, ColumnType: columnType, Charset: charset,
		Scale: scale, Length: length}, Options{TinyInt1AsBool: true})
	if err != nil {
		t.Fatal(err)
	}
	return &c
}

func TestFromBinlog(t *testing.T) {
	kolkata := time.FixedZone("IST", 5*3600+1800)
	tests := []struct {
		name string
		col  *Column
		in   any
		want string
	}{
		{"null", infoCol(t, "int", "int(11)", "", 0, 0), nil, "null:"},
		{"int", infoCol(t, "int", "int(11)", "", 0, 0), int32(-5), "int:-5"},
		{"int unsigned max", infoCol(t, "int", "int(10) unsigned", "", 0, 0), int32(-1), "uint:4294967295"},
		{"bigint unsigned max", infoCol(t, "bigint", "bigint(20) unsigned", "", 0, 0), int64(-1), "uint:18446744073709551615"},
		{"bigint min", infoCol(t, "bigint", "bigint(20)", "", 0, 0), int64(math.MinInt64), "int:-9223372036854775808"},
		{"tinyint unsigned", infoCol(t, "tinyint", "tinyint(3) unsigned", "", 0, 0), int8(-1), "uint:255"},
		{"smallint unsigned", infoCol(t, "smallint", "smallint(5) unsigned", "", 0, 0), int16(-1), "uint:65535"},
		{"mediumint unsigned", infoCol(t, "mediumint", "mediumint(8) unsigned", "", 0, 0), int32(-1), "uint:16777215"},
		{"mediumint signed", infoCol(t, "mediumint", "mediumint(8)", "", 0, 0), int32(-8388608), "int:-8388608"},
		{"tinyint(1)", infoCol(t, "tinyint", "tinyint(1)", "", 0, 0), int8(1), "bool:true"},
		{"tinyint(1) other", infoCol(t, "tinyint", "tinyint(1)", "", 0, 0), int8(-7), "bool:true"},
		{"tinyint(1) zero", infoCol(t, "tinyint", "tinyint(1)", "", 0, 0), int8(0), "bool:false"},
		{"year", infoCol(t, "year", "year(4)", "", 0, 0), 2024, "int:2024"},
		{"year zero", infoCol(t, "year", "year(4)", "", 0, 0), 0, "int:0"},
		{"float", infoCol(t, "float", "float", "", 0, 0), float32(3.14159), "float32:3.14159"},
		{"double", infoCol(t, "double", "double", "", 0, 0), 2.718281828459045, "float64:2.718281828459045"},
		{"decimal", infoCol(t, "decimal", "decimal(20,6)", "", 6, 0), "-12345678901234.123456", `decimal:"-12345678901234.123456"`},
		{"decimal scale 2", infoCol(t, "decimal", "decimal(5,2)", "", 2, 0), "4.50", `decimal:"4.50"`},
		{"decimal scale 0", infoCol(t, "decimal", "decimal(5,0)", "", 0, 0), "-7", `decimal:"-7"`},
		{"date", infoCol(t, "date", "date", "", 0, 0), "2024-02-29", "date:2024-02-29"},
		{"date zero", infoCol(t, "date", "date", "", 0, 0), "0000-00-00", "null:"},
		{"date zero month", infoCol(t, "date", "date", "", 0, 0), "2024-00-15", "null:"},
		{"datetime parsed", infoCol(t, "datetime", "datetime(6)", "", 6, 0),
			time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC), "datetime:2024-02-29 13:14:15.123456"},
		{"datetime before 1970 text", infoCol(t, "datetime", "datetime(6)", "", 6, 0), "1000-01-01 00:00:00.000001",
			"datetime:1000-01-01 00:00:00.000001"},
		{"datetime zero", infoCol(t, "datetime", "datetime", "", 0, 0), "0000-00-00 00:00:00", "null:"},
		{"timestamp any zone", infoCol(t, "timestamp", "timestamp(3)", "", 3, 0),
			time.Date(2024, 1, 2, 3, 4, 5, 678000000, kolkata), "timestamp:2024-01-01 21:34:05.678000Z"},
		{"timestamp zero", infoCol(t, "timestamp", "timestamp(3)", "", 3, 0), "0000-00-00 00:00:00.000", "null:"},
		{"time negative max", infoCol(t, "time", "time", "", 0, 0), "-838:59:59", "time:-838:59:59.000000"},
		{"time fraction", infoCol(t, "time", "time(6)", "", 6, 0), "100:00:00.500000", "time:100:00:00.500000"},
		{"time short fraction", infoCol(t, "time", "time(2)", "", 2, 0), "-00:00:01.25", "time:-00:00:01.250000"},
		{"utf8mb4", infoCol(t, "varchar", "varchar(100)", "utf8mb4", 0, 0), "héllo 🚀 世界", `string:"héllo 🚀 世界"`},
		{"latin1 is cp1252", infoCol(t, "varchar", "varchar(10)", "latin1", 0, 0), "caf\xe9 \x80\x81", `string:"café €\u0081"`},
		{"gbk", infoCol(t, "varchar", "varchar(10)", "gbk", 0, 0), "\xd6\xd0\xce\xc4", `string:"中文"`},
		{"text bytes", infoCol(t, "text", "text", "utf8mb4", 0, 0), []byte("some text"), `string:"some text"`},
		{"binary padded", infoCol(t, "binary", "binary(4)", "", 0, 4), "\xde\xad\xbe", "bytes:deadbe00"},
		{"blob", infoCol(t, "blob", "blob", "", 0, 0), []byte{0, 0xff, 0x10}, "bytes:00ff10"},
		{"bit1", infoCol(t, "bit", "bit(1)", "", 0, 1), int64(1), "bool:true"},
		{"bit5", infoCol(t, "bit", "bit(5)", "", 0, 5), int64(21), "bytes:15"},
		{"bit12", infoCol(t, "bit", "bit(12)", "", 0, 12), int64(0xabc), "bytes:0abc"},
		{"bit64", infoCol(t, "bit", "bit(64)", "", 0, 64), int64(-1), "bytes:ffffffffffffffff"},
		{"enum", infoCol(t, "enum", "enum('small','medium','large')", "utf8mb4", 0, 0), int64(3), `string:"large"`},
		{"enum invalid", infoCol(t, "enum", "enum('small')", "utf8mb4", 0, 0), int64(0), `string:""`},
		{"set", infoCol(t, "set", "set('a','b','c','d')", "utf8mb4", 0, 0), int64(13), `string:"a,c,d"`},
		{"set empty", infoCol(t, "set", "set('a','b')", "utf8mb4", 0, 0), int64(0), `string:""`},
		{"json mariadb", infoCol(t, "json", "longtext", "utf8mb4", 0, 0), []byte(`{"k": [1, 2.5, "x"], "n": null}`),
			`json:"{\"k\":[1,2.5,\"x\"],\"n\":null}"`},
		{"geometry", infoCol(t, "point", "point", "", 0, 0), string(wkbPoint(4326, 1.5, -2)),
			`geometry:"{\"type\":\"Point\",\"coordinates\":[1.5,-2],\"srid\":4326}"`},
		{"uuid", infoCol(t, "uuid", "uuid", "", 0, 0), "\x12\x3e\x45\x67\xe8\x9b\x12\xd3\xa4\x56\x42\x66\x55\x44",
			`string:"123e4567-e89b-12d3-a456-426655440000"`},
		{"uuid zero", infoCol(t, "uuid", "uuid", "", 0, 0), "", `string:"00000000-0000-0000-0000-000000000000"`},
		{"inet4", infoCol(t, "inet4", "inet4", "", 0, 0), "\xc0\xa8\x00\x01", `string:"192.168.0.1"`},
		{"inet4 zero", infoCol(t, "inet4", "inet4", "", 0, 0), "", `string:"0.0.0.0"`},
		{"inet6", infoCol(t, "inet6", "inet6", "", 0, 0), "\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01",
			`string:"2001:db8::1"`},
		{"inet6 mapped", infoCol(t, "inet6", "inet6", "", 0, 0), "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x01\x02\x03\x04",
			`string:"::ffff:1.2.3.4"`},
		{"decimal zerofill", infoCol(t, "decimal", "decimal(8,4) unsigned zerofill", "", 4, 0), "123.4569", `decimal:"123.4569"`},
		{"macce", infoCol(t, "varchar", "varchar(10)", "macce", 0, 0), "\x80\x8a\xe8", `string:"ÄäŤ"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.col.FromBinlog(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := DescribeValue(v); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestFromText(t *testing.T) {
	tests := []struct {
		name string
		col  *Column
		in   string
		want string
	}{
		{"int unsigned", infoCol(t, "bigint", "bigint(20) unsigned", "", 0, 0), "18446744073709551615", "uint:18446744073709551615"},
		{"int", infoCol(t, "int", "int(11)", "", 0, 0), "-3", "int:-3"},
		{"bool", infoCol(t, "tinyint", "tinyint(1)", "", 0, 0), "2", "bool:true"},
		{"decimal", infoCol(t, "decimal", "decimal(20,6)", "", 6, 0), "-1.500000", `decimal:"-1.500000"`},
		{"datetime", infoCol(t, "datetime", "datetime(6)", "", 6, 0), "2024-02-29 13:14:15.120000", "datetime:2024-02-29 13:14:15.120000"},
		{"timestamp utc", infoCol(t, "timestamp", "timestamp", "", 0, 0), "2024-01-01 21:34:05", "timestamp:2024-01-01 21:34:05.000000Z"},
		{"time", infoCol(t, "time", "time", "", 0, 0), "-838:59:59", "time:-838:59:59.000000"},
		{"binary", infoCol(t, "binary", "binary(4)", "", 0, 4), "\xde\xad\xbe\x00", "bytes:deadbe00"},
		{"bit1", infoCol(t, "bit", "bit(1)", "", 0, 1), "\x01", "bool:true"},
		{"bit5", infoCol(t, "bit", "bit(5)", "", 0, 5), "\x15", "bytes:15"},
		{"enum latin1", infoCol(t, "enum", "enum('café')", "latin1", 0, 0), "caf\xe9", `string:"café"`},
		{"set", infoCol(t, "set", "set('a','b','c','d')", "utf8mb4", 0, 0), "a,c,d", `string:"a,c,d"`},
		{"json", infoCol(t, "longtext", "longtext", "utf8mb4", 0, 0), "{\"a\" :\t\"x  y\\\" z\" }", `string:"{\"a\" :\t\"x  y\\\" z\" }"`},
		{"year", infoCol(t, "year", "year(4)", "", 0, 0), "0", "int:0"},
		{"decimal zerofill", infoCol(t, "decimal", "decimal(8,4) unsigned zerofill", "", 4, 0), "0123.4569", `decimal:"123.4569"`},
		{"decimal zerofill zero", infoCol(t, "decimal", "decimal(8,4) unsigned zerofill", "", 4, 0), "0000.0000", `decimal:"0.0000"`},
		{"decimal zerofill scale 0", infoCol(t, "decimal", "decimal(8,0) unsigned zerofill", "", 0, 0), "00000000", `decimal:"0"`},
		{"decimal zerofill scale 0 value", infoCol(t, "decimal", "decimal(8,0) unsigned zerofill", "", 0, 0), "00012345", `decimal:"12345"`},
		{"uuid", infoCol(t, "uuid", "uuid", "", 0, 0), "123e4567-e89b-12d3-a456-426655440000", `string:"123e4567-e89b-12d3-a456-426655440000"`},
		{"inet4", infoCol(t, "inet4", "inet4", "", 0, 0), "10.0.0.255", `string:"10.0.0.255"`},
		{"inet6 compatible", infoCol(t, "inet6", "inet6", "", 0, 0), "::1.2.3.4", `string:"::1.2.3.4"`},
		{"inet6 single zero group", infoCol(t, "inet6", "inet6", "", 0, 0), "1::2:3:4:5:6:7", `string:"1::2:3:4:5:6:7"`},
		{"swe7", infoCol(t, "char", "char(3)", "swe7", 0, 0), "[]@", `string:"ÄÅÉ"`},
		{"ascii high byte", infoCol(t, "char", "char(3)", "ascii", 0, 0), "a\x80", "string:\"a\uFFFD\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.col.FromText([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := DescribeValue(v); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestFromTextErrors(t *testing.T) {
	tests := []struct {
		col *Column
		in  string
	}{
		{infoCol(t, "decimal", "decimal(5,2)", "", 2, 0), "4.5"},
		{infoCol(t, "decimal", "decimal(5,2)", "", 2, 0), "1e5"},
		{infoCol(t, "date", "date", "", 0, 0), "2024-2-1"},
		{infoCol(t, "time", "time", "", 0, 0), "839:00:00"},
		{infoCol(t, "datetime", "datetime", "", 0, 0), "2024-01-01 24:00:00"},
		{infoCol(t, "int", "int(11)", "", 0, 0), "x"},
		{infoCol(t, "bit", "bit(5)", "", 0, 5), "\x01\x02"},
		{infoCol(t, "uuid", "uuid", "", 0, 0), "123e4567-e89b-12d3-a456-42665544000"},
		{infoCol(t, "uuid", "uuid", "", 0, 0), "123e4567+e89b-12d3-a456-426655440000"},
		{infoCol(t, "inet4", "inet4", "", 0, 0), "::1"},
		{infoCol(t, "inet6", "inet6", "", 0, 0), "1.2.3.4"},
		{infoCol(t, "inet6", "inet6", "", 0, 0), "fe80::1%eth0"},
	}
	for _, tc := range tests {
		if v, err := tc.col.FromText([]byte(tc.in)); err == nil {
			t.Errorf("%s %q: got %s, want an error", tc.col.SQLType, tc.in, DescribeValue(v))
		}
	}
	enum := infoCol(t, "enum", "enum('a')", "utf8mb4", 0, 0)
	if _, err := enum.FromBinlog(int64(2)); err == nil {
		t.Error("enum index beyond the labels: want an error")
	}
}

func TestCompactJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"k": [1, 2.5, "x"], "n": null}`, `{"k":[1,2.5,"x"],"n":null}`},
		{"{\n\t\"a b\" : \"c \\\" d\",\r\n \"e\\\\\": \" f \" }", `{"a b":"c \" d","e\\":" f "}`},
		{`[1.0E+2, -0, "\u00e9 "]`, `[1.0E+2,-0,"\u00e9 "]`},
		{`"plain"`, `"plain"`},
		{`{"a": "x\\", "b" :"\"" }`, `{"a":"x\\","b":"\""}`},
		{` [ ] `, `[]`},
	}
	for _, tc := range tests {
		if got := string(compactJSON([]byte(tc.in))); got != tc.want {
			t.Errorf("compactJSON(%q) = %q, want %q", tc.in, got, tc.want)
		}
		var want bytes.Buffer // encoding/json agrees on valid documents
		if err := json.Compact(&want, []byte(tc.in)); err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if got := string(compactJSON([]byte(tc.in))); got != want.String() {
			t.Errorf("compactJSON(%q) = %q, json.Compact %q", tc.in, got, want.String())
		}
		buf := []byte(tc.in + "tail") // bytes after the document stay as they are
		if got := compactJSONInPlace(buf[:len(tc.in)]); string(got) != tc.want {
			t.Errorf("compactJSONInPlace(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if tail := string(buf[len(tc.in):]); tail != "tail" {
			t.Errorf("compactJSONInPlace(%q) wrote past the document: %q", tc.in, tail)
		}
	}
}

// FuzzCompactJSON checks that compacting in place gives what compacting into a copy gives,
// and that the copy leaves the input alone.
func FuzzCompactJSON(f *testing.F) {
	f.Add([]byte(`{"k": [1, "a \" b"], "n" : null}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		orig := string(doc)
		want := string(compactJSON(doc))
		if string(doc) != orig {
			t.Fatalf("compactJSON changed its input %q to %q", orig, doc)
		}
		if got := string(compactJSONInPlace(doc)); got != want {
			t.Fatalf("in place %q, copy %q (input %q)", got, want, orig)
		}
	})
}

func TestAppendESNumber(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-2.5, "-2.5"}, {1e-7, "1e-7"}, {1e21, "1e+21"},
		{1e20, "100000000000000000000"}, {0.000001, "0.000001"}, {1.5e-10, "1.5e-10"}, {123456789.125, "123456789.125"},
		{float64(float32(3.14159)), "3.141590118408203"}, {math.NaN(), "null"},
	}
	for _, tc := range tests {
		if got := string(appendESNumber(nil, tc.f)); got != tc.want {
			t.Errorf("appendESNumber(%v) = %s, want %s", tc.f, got, tc.want)
		}
	}
}

func wkbPoint(srid uint32, x, y float64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, srid)
	return append(b, wkbPointBody(x, y)...)
}

func wkbPointBody(x, y float64) []byte {
	b := []byte{1}
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(y))
}

func TestGeometryJSON(t *testing.T) {
	be := func(b []byte, vals ...any) []byte {
		for _, v := range vals {
			switch x := v.(type) {
			case uint32:
				b = binary.BigEndian.AppendUint32(b, x)
			case float64:
				b = binary.BigEndian.AppendUint64(b, math.Float64bits(x))
			}
		}
		return b
	}
	line := be([]byte{0}, uint32(2), uint32(2), 0.0, 0.0, 1e21, 1e-7)
	poly := be([]byte{0}, uint32(3), uint32(1), uint32(4), 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0)
	multi := append(be([]byte{0}, uint32(4), uint32(2)), append(wkbPointBody(1, 2), wkbPointBody(3, 4)...)...)
	coll := append(be([]byte{0}, uint32(7), uint32(2)), append(wkbPointBody(1, 2), line...)...)
	tests := []struct {
		name string
		wkb  []byte
		want string
	}{
		{"point", wkbPoint(0, 1, 2), `{"type":"Point","coordinates":[1,2],"srid":0}`},
		{"linestring big endian", append([]byte{0, 0, 0, 0}, line...), `{"type":"LineString","coordinates":[[0,0],[1e+21,1e-7]],"srid":0}`},
		{"polygon", append([]byte{0xe6, 0x10, 0, 0}, poly...), `{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]],"srid":4326}`},
		{"multipoint", append([]byte{0, 0, 0, 0}, multi...), `{"type":"MultiPoint","coordinates":[[1,2],[3,4]],"srid":0}`},
		{"collection", append([]byte{0, 0, 0, 0}, coll...),
			`{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,2]},{"type":"LineString","coordinates":[[0,0],[1e+21,1e-7]]}],"srid":0}`},
	}
	for _, tc := range tests {
		got, err := geometryJSON(tc.wkb)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	for _, bad := range [][]byte{nil, {0, 0, 0, 0}, {0, 0, 0, 0, 1, 1, 0, 0, 0}, {0, 0, 0, 0, 1, 9, 0, 0, 0}} {
		if _, err := geometryJSON(bad); err == nil {
			t.Errorf("geometryJSON(%x): want an error", bad)
		}
	}
}

func FuzzGeometryJSON(f *testing.F) {
	f.Add(wkbPoint(4326, 1, 2))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = geometryJSON(b) })
}

func TestDescribeValueKinds(t *testing.T) {
	if got := DescribeValue(change.TimeValue(-(838*3600 + 59*60 + 59) * 1_000_000)); got != "time:-838:59:59.000000" {
		t.Fatal(got)
	}
}

// TestCompactJSONInPlaceAllocates nothing: the snapshot compacts every JSON value in its
// row buffer.
func TestCompactJSONInPlaceAllocates(t *testing.T) {
	doc := []byte(`{"color": "red", "size": 3, "tags": ["a", "t3"]}`)
	buf := make([]byte, len(doc))
	if n := testing.AllocsPerRun(100, func() { copy(buf, doc); compactJSONInPlace(buf) }); n != 0 {
		t.Fatalf("%v allocations per in-place compaction, want 0", n)
	}
}
