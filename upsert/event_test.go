package upsert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/ingestkit/ingest/change"
)

// flinkTable1 is the table of Flink CDC's serializer tests: TableId
// default_namespace.default_schema.table1, columns col1 and col2 (STRING), key col1.
var flinkTable1 = &change.Schema{
	Table:   change.TableID{DB: "default_schema", Table: "table1"},
	Columns: []change.Column{{Name: "col1", SQLType: "varchar(10)"}, {Name: "col2", SQLType: "varchar(10)"}},
	Key:     []int{0},
	Version: 1,
}

var flinkTarget1 = &Target{Topic: "t", Table: SinkTable{Namespace: "default_namespace", Schema: "default_schema", Table: "table1"}}

func strRow(vs ...string) change.Row {
	r := make(change.Row, len(vs))
	for i, v := range vs {
		r[i] = change.StringValue([]byte(v))
	}
	return r
}

// TestEventVectors checks the encoder against the expected strings of Flink CDC 3.6.0's own
// serializer tests (tag release-3.6.0, files under
// flink-cdc-connect/flink-cdc-pipeline-connectors/flink-cdc-pipeline-connector-kafka/src/test/java/org/apache/flink/cdc/connectors/kafka/).
// Flink's tests compare parsed JSON; the field order is that of the serializers' row types,
// so the bytes are what they write.
func TestEventVectors(t *testing.T) {
	const (
		dbz   = "json/debezium/DebeziumJsonSerializationSchemaTest.java"
		canal = "json/canal/CanalJsonSerializationSchemaTest.java"
		jkey  = "serialization/JsonSerializationSchemaTest.java"
		ckey  = "serialization/CsvSerializationSchemaTest.java"
	)
	ins1 := change.Change{Schema: flinkTable1, Op: change.Insert, After: strRow("1", "1")}
	ins2 := change.Change{Schema: flinkTable1, Op: change.Insert, After: strRow("2", "2")}
	del2 := change.Change{Schema: flinkTable1, Op: change.Delete, Before: strRow("2", "2")}
	upd1 := change.Change{Schema: flinkTable1, Op: change.Update, Before: strRow("1", "1"), After: strRow("1", "x")}
	tests := []struct {
		source   string // file:line of the expected string
		opts     EventOptions
		c        change.Change
		key, val string // "" when the vector gives none
	}{
		{dbz + ":94", EventOptions{}, ins1, "", `{"before":null,"after":{"col1":"1","col2":"1"},"op":"c","source":{"db":"default_schema","table":"table1"}}`},
		{dbz + ":107", EventOptions{}, ins2, "", `{"before":null,"after":{"col1":"2","col2":"2"},"op":"c","source":{"db":"default_schema","table":"table1"}}`},
		{dbz + ":120", EventOptions{}, del2, "", `{"before":{"col1":"2","col2":"2"},"after":null,"op":"d","source":{"db":"default_schema","table":"table1"}}`},
		{dbz + ":138", EventOptions{}, upd1, "", `{"before":{"col1":"1","col2":"1"},"after":{"col1":"1","col2":"x"},"op":"u","source":{"db":"default_schema","table":"table1"}}`},
		{canal + ":86", EventOptions{Value: CanalJSON}, ins1, "", `{"old":null,"data":[{"col1":"1","col2":"1"}],"type":"INSERT","database":"default_schema","table":"table1","pkNames":["col1"]}`},
		{canal + ":100", EventOptions{Value: CanalJSON}, ins2, "", `{"old":null,"data":[{"col1":"2","col2":"2"}],"type":"INSERT","database":"default_schema","table":"table1","pkNames":["col1"]}`},
		{canal + ":114", EventOptions{Value: CanalJSON}, del2, "", `{"old":null,"data":[{"col1":"2","col2":"2"}],"type":"DELETE","database":"default_schema","table":"table1","pkNames":["col1"]}`},
		{canal + ":133", EventOptions{Value: CanalJSON}, upd1, "", `{"old":[{"col1":"1","col2":"1"}],"data":[{"col1":"1","col2":"x"}],"type":"UPDATE","database":"default_schema","table":"table1","pkNames":["col1"]}`},
		{jkey + ":84", EventOptions{}, ins1, `{"TableId":"default_namespace.default_schema.table1","col1":"1"}`, ""},
		{jkey + ":98", EventOptions{}, ins2, `{"TableId":"default_namespace.default_schema.table1","col1":"2"}`, ""},
		{jkey + ":112", EventOptions{}, del2, `{"TableId":"default_namespace.default_schema.table1","col1":"2"}`, ""},
		{jkey + ":131", EventOptions{}, upd1, `{"TableId":"default_namespace.default_schema.table1","col1":"1"}`, ""},
		{ckey + ":81", EventOptions{Key: KeyCSV}, ins1, `"default_namespace.default_schema.table1",1`, ""},
		{ckey + ":93", EventOptions{Key: KeyCSV}, ins2, `"default_namespace.default_schema.table1",2`, ""},
		{ckey + ":105", EventOptions{Key: KeyCSV}, del2, `"default_namespace.default_schema.table1",2`, ""},
		{ckey + ":122", EventOptions{Key: KeyCSV}, upd1, `"default_namespace.default_schema.table1",1`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.source, func(t *testing.T) {
			msgs, err := NewEventEncoder(tc.opts).EncodeTo(nil, &tc.c, commitTime, flinkTarget1)
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != 1 {
				t.Fatalf("%d messages, want 1", len(msgs))
			}
			if tc.key != "" && string(msgs[0].Key) != tc.key {
				t.Errorf("key\n got %s\nwant %s", msgs[0].Key, tc.key)
			}
			if tc.val != "" && string(msgs[0].Value) != tc.val {
				t.Errorf("value\n got %s\nwant %s", msgs[0].Value, tc.val)
			}
		})
	}
}

// TestEventAllTypesVector is testSerializeWithSchemaAllDataTypes of
// DebeziumJsonSerializationSchemaTest.java (release-3.6.0), lines 156-246: its payload
// part, with the MySQL columns that map to its Flink CDC types.
func TestEventAllTypesVector(t *testing.T) {
	cols := []change.Column{
		{Name: "_boolean", SQLType: "tinyint(1)"}, {Name: "_binary", SQLType: "binary(3)"},
		{Name: "_varbinary", SQLType: "varbinary(10)"}, {Name: "_bytes", SQLType: "blob"},
		{Name: "_tinyint", SQLType: "tinyint"}, {Name: "_smallint", SQLType: "smallint"},
		{Name: "_int", SQLType: "int"}, {Name: "_bigint", SQLType: "bigint"},
		{Name: "_float", SQLType: "float"}, {Name: "_double", SQLType: "double"},
		{Name: "_decimal", SQLType: "decimal(6,3)"}, {Name: "_char", SQLType: "char(5)"},
		{Name: "_varchar", SQLType: "varchar(10)"}, {Name: "_string", SQLType: "text"},
		{Name: "_date", SQLType: "date"}, {Name: "_time", SQLType: "time"},
		{Name: "_time_6", SQLType: "time(6)"}, {Name: "_timestamp", SQLType: "datetime"},
		{Name: "_timestamp_3", SQLType: "datetime(3)"}, {Name: "_timestamp_ltz", SQLType: "timestamp"},
		{Name: "_timestamp_ltz_3", SQLType: "timestamp(3)"}, {Name: "pt", SQLType: "text"},
	}
	s := &change.Schema{Table: change.TableID{DB: "default_schema", Table: "table1"}, Columns: cols, Key: []int{21}, Version: 1}
	ltz := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	row := change.Row{
		change.BoolValue(true), change.BytesValue([]byte{1, 2}), change.BytesValue([]byte{3, 4}), change.BytesValue([]byte{5, 6, 7}),
		change.IntValue(1), change.IntValue(2), change.IntValue(3), change.IntValue(4),
		change.Float32Value(5.1), change.Float64Value(6.2), change.DecimalValue([]byte("7.123")),
		change.StringValue([]byte("test1")), change.StringValue([]byte("test2")), change.StringValue([]byte("test3")),
		change.DateValue(1970, 4, 11), change.TimeValue(200_000), change.TimeValue(300_000),
		change.DateTimeValue(2023, 1, 1, 0, 0, 0, 0), change.DateTimeValue(2023, 1, 1, 0, 0, 0, 0),
		change.TimestampValue(ltz), change.TimestampValue(ltz), {},
	}
	const want = `{"before":null,"after":{"_boolean":true,"_binary":"AQI=","_varbinary":"AwQ=","_bytes":"BQYH","_tinyint":1,"_smallint":2,"_int":3,"_bigint":4,"_float":5.1,"_double":6.2,"_decimal":7.123,"_char":"test1","_varchar":"test2","_string":"test3","_date":"1970-04-11","_time":"00:00:00","_time_6":"00:00:00","_timestamp":"2023-01-01 00:00:00","_timestamp_3":"2023-01-01 00:00:00","_timestamp_ltz":"2023-01-01 00:00:00Z","_timestamp_ltz_3":"2023-01-01 00:00:00Z","pt":null},"op":"c","source":{"db":"default_schema","table":"table1"}}`
	msgs, err := NewEventEncoder(EventOptions{}).EncodeTo(nil, &change.Change{Schema: s, Op: change.Insert, After: row}, commitTime, flinkTarget1)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(msgs[0].Value); got != want {
		t.Errorf("value\n got %s\nwant %s", got, want)
	}
}

// TestEventGolden writes the change cases (insert, update, primary key change, delete,
// schema change) and the all-types rows in both value formats and both key formats. The
// all-types goldens are derived from Flink CDC's source, not from a test of it: see
// testdata/events.md.
func TestEventGolden(t *testing.T) {
	routed := &Target{Topic: "orders_all", Table: ParseSinkTable("ods.orders_all")}
	tests := []struct {
		file    string
		opts    EventOptions
		changes []change.Change
		to      *Target
	}{
		{"events_debezium", EventOptions{TableHeaders: true, CustomHeaders: []Header{{"env", "prod"}}}, caseChanges(), nil},
		{"events_canal", EventOptions{Value: CanalJSON}, caseChanges(), nil},
		{"events_canal_csv_routed", EventOptions{Value: CanalJSON, Key: KeyCSV, TableHeaders: true}, caseChanges(), routed},
		{"events_debezium_ignore_nulls", EventOptions{ValueJSON: JSONFormat{IgnoreNulls: true}}, allTypesChanges()[1:2], nil},
		{"events_canal_ignore_nulls_one_part_id", EventOptions{Value: CanalJSON, ValueJSON: JSONFormat{IgnoreNulls: true}, TableHeaders: true},
			allTypesChanges()[1:2], &Target{Topic: "t", Table: ParseSinkTable("alltypes_all")}},
		{"alltypes_debezium_sql", EventOptions{}, allTypesChanges(), nil},
		{"alltypes_canal_iso8601_plain", EventOptions{Value: CanalJSON,
			ValueJSON: JSONFormat{Timestamps: TimestampISO8601, DecimalPlain: true},
			KeyJSON:   JSONFormat{Timestamps: TimestampISO8601}}, allTypesChanges(), nil},
		{"kinds_debezium", EventOptions{}, kindChanges(), nil},
		{"kinds_debezium_time_micros", EventOptions{ValueJSON: JSONFormat{TimeMicros: true}, KeyJSON: JSONFormat{TimeMicros: true}}, kindChanges(), nil},
		{"alltypes_canal_time_micros", EventOptions{Value: CanalJSON, ValueJSON: JSONFormat{TimeMicros: true}}, allTypesChanges(), nil},
		{"kinds_csv_key", EventOptions{Key: KeyCSV}, kindChanges(), nil},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			enc := NewEventEncoder(tc.opts)
			var out bytes.Buffer
			for i := range tc.changes {
				c := &tc.changes[i]
				msgs, err := enc.EncodeTo(nil, c, commitTime, tc.to)
				if err != nil {
					fmt.Fprintf(&out, "== %s %s: error: %v\n", c.Op, c.Schema.Table, err)
					continue
				}
				fmt.Fprintf(&out, "== %s %s: %d record(s)\n", c.Op, c.Schema.Table, len(msgs))
				for _, m := range msgs {
					if !json.Valid(m.Value) || tc.opts.Key == KeyJSON && !json.Valid(m.Key) {
						t.Errorf("invalid JSON: key %s value %s", m.Key, m.Value)
					}
					writeMessage(&out, m)
				}
			}
			golden(t, tc.file, out.Bytes())
		})
	}
}

// allTypesSchema is internal/testenv's alltypes table as the source describes it.
var allTypesSchema = &change.Schema{
	Table: change.TableID{DB: "app", Table: "alltypes"},
	Columns: []change.Column{
		{Name: "id", SQLType: "int unsigned"}, {Name: "c_bool", SQLType: "tinyint(1)"},
		{Name: "c_tiny", SQLType: "tinyint"}, {Name: "c_tiny_u", SQLType: "tinyint unsigned"},
		{Name: "c_small", SQLType: "smallint"}, {Name: "c_small_u", SQLType: "smallint unsigned"},
		{Name: "c_med", SQLType: "mediumint"}, {Name: "c_med_u", SQLType: "mediumint unsigned"},
		{Name: "c_int", SQLType: "int"}, {Name: "c_int_u", SQLType: "int unsigned"},
		{Name: "c_big", SQLType: "bigint"}, {Name: "c_big_u", SQLType: "bigint unsigned"},
		{Name: "c_dec", SQLType: "decimal(20,6)"}, {Name: "c_dec0", SQLType: "decimal(10,0)"},
		{Name: "c_dec2", SQLType: "decimal(5,2)"}, {Name: "c_float", SQLType: "float"},
		{Name: "c_double", SQLType: "double"}, {Name: "c_date", SQLType: "date"},
		{Name: "c_dt", SQLType: "datetime"}, {Name: "c_dt6", SQLType: "datetime(6)"},
		{Name: "c_ts", SQLType: "timestamp"}, {Name: "c_ts3", SQLType: "timestamp(3)"},
		{Name: "c_time", SQLType: "time"}, {Name: "c_time3", SQLType: "time(3)"},
		{Name: "c_year", SQLType: "year"}, {Name: "c_char", SQLType: "char(10)"},
		{Name: "c_vc", SQLType: "varchar(100)"}, {Name: "c_latin", SQLType: "varchar(20)"},
		{Name: "c_gbk", SQLType: "varchar(20)"}, {Name: "c_text", SQLType: "text"},
		{Name: "c_medtext", SQLType: "mediumtext"}, {Name: "c_bin", SQLType: "binary(4)"},
		{Name: "c_varbin", SQLType: "varbinary(10)"}, {Name: "c_blob", SQLType: "blob"},
		{Name: "c_bit1", SQLType: "bit(1)"}, {Name: "c_bit5", SQLType: "bit(5)"},
		{Name: "c_bit12", SQLType: "bit(12)"}, {Name: "c_enum", SQLType: "enum('small','medium','large')"},
		{Name: "c_set", SQLType: "set('a','b','c','d')"}, {Name: "c_json", SQLType: "json"},
		{Name: "c_geo", SQLType: "geometry"}, {Name: "c_point", SQLType: "point"},
	},
	Key:     []int{0},
	Version: 1,
}

// allTypesChanges are the rows of runner/samebytes_integration_test.go as the source
// decodes them (runner/testdata/alltypes-sql.golden shows the same values as upsert rows),
// plus a decimal that Flink CDC writes in exponent notation.
func allTypesChanges() []change.Change {
	n := len(allTypesSchema.Columns)
	nulls := func(id uint64, set map[int]change.Value) change.Row {
		r := make(change.Row, n)
		r[0] = change.UintValue(id)
		for i, v := range set {
			r[i] = v
		}
		return r
	}
	s := func(v string) change.Value { return change.StringValue([]byte(v)) }
	d := func(v string) change.Value { return change.DecimalValue([]byte(v)) }
	ts := func(y, mo, day, h, mi, sec, us int) change.Value {
		return change.TimestampValue(time.Date(y, time.Month(mo), day, h, mi, sec, us*1000, time.UTC).UnixMicro())
	}
	row1 := change.Row{
		change.UintValue(1), change.BoolValue(true), change.IntValue(-128), change.UintValue(255),
		change.IntValue(-32768), change.UintValue(65535), change.IntValue(-8388608), change.UintValue(16777215),
		change.IntValue(math.MinInt32), change.UintValue(math.MaxUint32), change.IntValue(math.MinInt64), change.UintValue(math.MaxUint64),
		d("-12345678901234.123456"), d("42"), d("4.50"), change.Float32Value(3.14159), change.Float64Value(2.718281828459045),
		change.DateValue(2024, 2, 29), change.DateTimeValue(2024, 2, 29, 13, 14, 15, 0), change.DateTimeValue(2024, 2, 29, 13, 14, 15, 123456),
		ts(2024, 1, 1, 21, 34, 5, 0), ts(2024, 1, 1, 21, 34, 5, 678000),
		change.TimeValue(-(838*3600 + 59*60 + 59) * 1e6), change.TimeValue(100*3600*1e6 + 500000), change.IntValue(2024),
		s("abc"), s("héllo 🚀 世界"), s("café"), s("中文"), s("some text"), s("medium"),
		change.BytesValue([]byte{0xde, 0xad, 0xbe, 0x00}), change.BytesValue([]byte{0x00, 0xff}), change.BytesValue([]byte{0x00, 0xff, 0x10}),
		change.BoolValue(true), change.BytesValue([]byte{0x15}), change.BytesValue([]byte{0x0a, 0xbc}),
		s("large"), s("a,c,d"), change.JSONValue([]byte(`{"k":[1,2.5,"x"],"n":null,"s":"a  b \" c"}`)),
		change.GeometryValue([]byte(`{"type":"LineString","coordinates":[[0,0],[1e+21,1e-7]],"srid":0}`)),
		change.GeometryValue([]byte(`{"type":"Point","coordinates":[1.5,-2],"srid":4326}`)),
	}
	rows := []change.Row{
		row1,
		nulls(2, nil),
		nulls(3, map[int]change.Value{15: change.Float32Value(123.456789), 16: change.Float64Value(0.1)}),
		nulls(4, map[int]change.Value{15: change.Float32Value(3.4e38), 16: change.Float64Value(4.9e-324)}),
		nulls(5, map[int]change.Value{15: change.Float32Value(1.17549435e-38), 16: change.Float64Value(math.Copysign(0, -1))}),
		nulls(6, map[int]change.Value{15: change.Float32Value(16777217), 16: change.Float64Value(1e21)}),
		nulls(7, map[int]change.Value{1: change.BoolValue(true), 24: change.IntValue(0), 37: s("small"), 38: s("")}),
		nulls(8, map[int]change.Value{11: change.UintValue(10000000000000000000), 12: d("100.000000"), 13: d("0"),
			14: d("0.05"), 22: change.TimeValue(12*3600e6 + 34*60e6 + 56e6 + 789000), 23: change.TimeValue(0)}),
	}
	cs := make([]change.Change, len(rows))
	for i, r := range rows {
		cs[i] = change.Change{Schema: allTypesSchema, Op: change.Insert, After: r}
	}
	return cs
}

// TestJavaFloat checks Java's Float.toString and Double.toString (JDK 19+) forms.
func TestJavaFloat(t *testing.T) {
	tests := []struct {
		f    float64
		bits int
		want string
	}{
		{5.1, 32, "5.1"}, {1, 32, "1.0"}, {1e10, 32, "1.0E10"}, {1e-5, 32, "1.0E-5"}, {16777216, 32, "1.6777216E7"},
		{3.4e38, 32, "3.4E38"}, {123.456789, 32, "123.45679"}, {0.001, 64, "0.001"}, {9999999, 64, "9999999.0"},
		{1e7, 64, "1.0E7"}, {0.1, 64, "0.1"}, {4.9e-324, 64, "4.9E-324"}, {math.Copysign(0, -1), 64, "-0.0"},
		{0, 64, "0.0"}, {-2.5, 64, "-2.5"}, {6.2, 64, "6.2"}, {1e21, 64, "1.0E21"}, {0.00099, 64, "9.9E-4"},
	}
	for _, tc := range tests {
		f := tc.f
		if tc.bits == 32 {
			f = float64(float32(f))
		}
		if got := string(appendJavaFloat(nil, f, tc.bits)); got != tc.want {
			t.Errorf("appendJavaFloat(%v, %d) = %s, want %s", tc.f, tc.bits, got, tc.want)
		}
	}
}

// TestJavaDecimal checks Jackson's normalized BigDecimal output (toString of the value with
// its trailing zeros stripped) and toPlainString.
func TestJavaDecimal(t *testing.T) {
	tests := []struct{ in, want, plain string }{
		{"7.123", "7.123", "7.123"}, {"4.00", "4", "4"}, {"123.40", "123.4", "123.4"}, {"0.00", "0", "0"},
		{"100.00", "1E+2", "100"}, {"10000000000000000000", "1E+19", "10000000000000000000"},
		{"0.000000027", "2.7E-8", "0.000000027"}, {"-12345678901234.123456", "-12345678901234.123456", "-12345678901234.123456"},
		{"0.05", "0.05", "0.05"}, {"-0.000001", "-0.000001", "-0.000001"}, {"120", "1.2E+2", "120"}, {"42", "42", "42"},
		{"18446744073709551615", "18446744073709551615", "18446744073709551615"}, {"-0.0", "0", "0"},
	}
	for _, tc := range tests {
		if got := string(appendJavaDecimal(nil, []byte(tc.in), false)); got != tc.want {
			t.Errorf("appendJavaDecimal(%s) = %s, want %s", tc.in, got, tc.want)
		}
		if got := string(appendJavaDecimal(nil, []byte(tc.in), true)); got != tc.plain {
			t.Errorf("appendJavaDecimal(%s, plain) = %s, want %s", tc.in, got, tc.plain)
		}
	}
}

// TestCSVString checks Jackson's loose CSV quoting.
func TestCSVString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"1", "1"}, {"app.orders", "app.orders"}, {"default_namespace.default_schema.table1", `"default_namespace.default_schema.table1"`},
		{"a b", `"a b"`}, {`say "hi"`, `"say ""hi"""`}, {"", ""}, {"-1", "-1"}, {"1E+2", `"1E+2"`},
		{"exactly-24-characters-xx", "exactly-24-characters-xx"}, {"just-25-characters-long-x", `"just-25-characters-long-x"`},
	}
	for _, tc := range tests {
		if got := string(appendCSVString(nil, tc.in)); got != tc.want {
			t.Errorf("appendCSVString(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestEventUpdateWithoutBefore: a change event needs the before image.
func TestEventUpdateWithoutBefore(t *testing.T) {
	c := change.Change{Schema: flinkTable1, Op: change.Update, After: strRow("1", "x")}
	if _, err := NewEventEncoder(EventOptions{}).EncodeTo(nil, &c, commitTime, nil); err == nil {
		t.Fatal("no error for an update without a before image")
	}
}

// TestParseSinkTable splits routed names as Flink CDC's TableId.parse does.
func TestParseSinkTable(t *testing.T) {
	tests := []struct {
		in   string
		want SinkTable
	}{
		{"t", SinkTable{Table: "t"}}, {"db.t", SinkTable{Schema: "db", Table: "t"}},
		{"ns.db.t", SinkTable{Namespace: "ns", Schema: "db", Table: "t"}}, {"ns.db.t.x", SinkTable{Namespace: "ns", Schema: "db", Table: "t.x"}},
	}
	for _, tc := range tests {
		got := ParseSinkTable(tc.in)
		if got != tc.want {
			t.Errorf("ParseSinkTable(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
		if got.String() != tc.in {
			t.Errorf("%+v.String() = %q, want %q", got, got.String(), tc.in)
		}
	}
}
