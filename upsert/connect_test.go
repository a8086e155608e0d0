package upsert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ingestkit/ingest/change"
)

// TestEventSchemaVector is testSerializeWithSchemaAllDataTypes of Flink CDC 3.6.0's
// DebeziumJsonSerializationSchemaTest.java (tag release-3.6.0,
// flink-cdc-connect/flink-cdc-pipeline-connectors/flink-cdc-pipeline-connector-kafka/src/test/java/org/apache/flink/cdc/connectors/kafka/json/debezium/):
// the table of lines 156-181, the row of lines 212-243 and, in
// testdata/dbz_include_schema_vector.json, the expected value of line 246, compared byte
// for byte. The columns are the MySQL types that map to the test's Flink CDC types
// (MySqlTypeUtils): TIMESTAMP() and TIMESTAMP_LTZ() have precision 6, BYTES is a BLOB.
// Every column of the test is nullable (its primary key pt included), and _boolean has the
// comment that the source passes on with include-comments.enabled.
func TestEventSchemaVector(t *testing.T) {
	want, err := os.ReadFile("testdata/dbz_include_schema_vector.json")
	if err != nil {
		t.Fatal(err)
	}
	cols := []change.Column{
		{Name: "_boolean", SQLType: "tinyint(1)", Comment: "_boolean comment"}, {Name: "_binary", SQLType: "binary(3)"},
		{Name: "_varbinary", SQLType: "varbinary(10)"}, {Name: "_bytes", SQLType: "longblob"},
		{Name: "_tinyint", SQLType: "tinyint(4)"}, {Name: "_smallint", SQLType: "smallint(6)"},
		{Name: "_int", SQLType: "int(11)"}, {Name: "_bigint", SQLType: "bigint(20)"},
		{Name: "_float", SQLType: "float"}, {Name: "_double", SQLType: "double"},
		{Name: "_decimal", SQLType: "decimal(6,3)"}, {Name: "_char", SQLType: "char(5)"},
		{Name: "_varchar", SQLType: "varchar(10)"}, {Name: "_string", SQLType: "text"},
		{Name: "_date", SQLType: "date"}, {Name: "_time", SQLType: "time"},
		{Name: "_time_6", SQLType: "time(6)"}, {Name: "_timestamp", SQLType: "datetime(6)"},
		{Name: "_timestamp_3", SQLType: "datetime(3)"}, {Name: "_timestamp_ltz", SQLType: "timestamp(6)"},
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
	enc := NewEventEncoder(EventOptions{IncludeSchema: true, Comments: true})
	msgs, err := enc.EncodeTo(nil, &change.Change{Schema: s, Op: change.Insert, After: row}, commitTime, flinkTarget1)
	if err != nil {
		t.Fatal(err)
	}
	if got := msgs[0].Value; !bytes.Equal(got, want) {
		t.Errorf("value\n got %s\nwant %s", got, want)
	}
}

// TestConnectTypes maps MySQL column types to their Kafka Connect schema as Flink CDC's
// MySqlTypeUtils and DebeziumJsonSerializationSchema do (testdata/events.md).
func TestConnectTypes(t *testing.T) {
	tests := []struct {
		sqlType string
		asNum   bool // treat-tinyint1-as-boolean.enabled: false
		want    connectType
	}{
		{"tinyint(1)", false, connectType{typ: "boolean"}},
		{"tinyint(1)", true, connectType{typ: "int16"}},
		{"tinyint(4)", false, connectType{typ: "int16"}},
		{"tinyint(3) unsigned", false, connectType{typ: "int16"}},
		{"smallint", false, connectType{typ: "int16"}},
		{"smallint unsigned", false, connectType{typ: "int32"}},
		{"mediumint(8) unsigned zerofill", false, connectType{typ: "int32"}},
		{"int", false, connectType{typ: "int32"}},
		{"int(10) unsigned", false, connectType{typ: "int64"}},
		{"bigint(20)", false, connectType{typ: "int64"}},
		{"bigint(20) unsigned", false, decimalType(20, 0)},
		{"year(4)", false, connectType{typ: "int32"}},
		{"float", false, connectType{typ: "float"}},
		{"float(7,3)", false, connectType{typ: "double"}},
		{"double", false, connectType{typ: "double"}},
		{"double(10,2) unsigned", false, connectType{typ: "double"}},
		{"decimal(20,6)", false, connectType{typ: "bytes", name: connectDecimal, params: `"scale":"6","connect.decimal.precision":"20"`}},
		{"decimal(65,30)", false, connectType{typ: "string"}},
		{"date", false, connectType{typ: "int32", name: debeziumDate}},
		{"time(3)", false, connectType{typ: "int64", name: debeziumMicroTime}},
		{"datetime", false, connectType{typ: "int64", name: debeziumTimestamp}},
		{"datetime(3)", false, connectType{typ: "int64", name: debeziumTimestamp}},
		{"datetime(4)", false, connectType{typ: "int64", name: debeziumMicroTS}},
		{"timestamp(3)", false, connectType{typ: "string", name: debeziumZonedTS}},
		{"bit(1)", false, connectType{typ: "boolean"}},
		{"bit(12)", false, connectType{typ: "bytes", name: debeziumBits, params: `"length":"2"`}},
		{"binary(4)", false, connectType{typ: "bytes", name: debeziumBits, params: `"length":"4"`}},
		{"varbinary(10)", false, connectType{typ: "bytes", name: debeziumBits, params: `"length":"10"`}},
		{"mediumblob", false, connectType{typ: "bytes", name: debeziumBits, params: `"length":"2147483647"`}},
		{"varchar(100)", false, connectType{typ: "string"}},
		{"enum('a','b')", false, connectType{typ: "string"}},
		{"set('a','b')", false, connectType{typ: "string"}},
		{"json", false, connectType{typ: "string"}},
		{"point", false, connectType{typ: "string"}},
		{"uuid", false, connectType{typ: "string"}},
	}
	for _, tc := range tests {
		if got := connectTypeOf(tc.sqlType, tc.asNum); got != tc.want {
			t.Errorf("connectTypeOf(%q, %v) = %+v, want %+v", tc.sqlType, tc.asNum, got, tc.want)
		}
	}
}

// TestEventSchemaGolden writes the change cases and the all-types rows with the schema
// part: NOT NULL columns are required, comments are docs, and ignore-null-fields leaves the
// schema whole.
func TestEventSchemaGolden(t *testing.T) {
	withFacts := func(cs []change.Change) []change.Change {
		s := *cs[0].Schema
		s.Columns = append([]change.Column(nil), s.Columns...)
		for _, k := range s.Key {
			s.Columns[k].NotNull = true
		}
		for i, c := range s.Columns { // the orders table of encode_test.go has no SQL types
			if c.SQLType == "" {
				s.Columns[i].SQLType = map[string]string{"note": "varchar(20)"}[c.Name]
				if s.Columns[i].SQLType == "" {
					s.Columns[i].SQLType = "int(11)"
				}
			}
		}
		s.Columns[len(s.Columns)-1].Comment = "a \"quoted\" comment, ünïcode\n"
		out := make([]change.Change, len(cs))
		for i, c := range cs {
			c.Schema = &s
			out[i] = c
		}
		return out
	}
	tests := []struct {
		file    string
		opts    EventOptions
		changes []change.Change
	}{
		{"events_debezium_schema", EventOptions{IncludeSchema: true, Comments: true}, withFacts(caseChanges())},
		{"alltypes_debezium_schema", EventOptions{IncludeSchema: true, Comments: true}, withFacts(allTypesChanges()[:2])},
		{"alltypes_debezium_schema_ignore_nulls_no_comments", EventOptions{IncludeSchema: true, TinyInt1AsNumber: true,
			ValueJSON: JSONFormat{IgnoreNulls: true}}, withFacts(allTypesChanges()[1:2])},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			enc := NewEventEncoder(tc.opts)
			var out bytes.Buffer
			for i := range tc.changes {
				c := &tc.changes[i]
				msgs, err := enc.EncodeTo(nil, c, commitTime, nil)
				if err != nil {
					fmt.Fprintf(&out, "== %s %s: error: %v\n", c.Op, c.Schema.Table, err)
					continue
				}
				fmt.Fprintf(&out, "== %s %s: %d record(s)\n", c.Op, c.Schema.Table, len(msgs))
				for _, m := range msgs {
					if !json.Valid(m.Value) {
						t.Errorf("invalid JSON: %s", m.Value)
					}
					writeMessage(&out, m)
				}
			}
			golden(t, tc.file, out.Bytes())
		})
	}
}
