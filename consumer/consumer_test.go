package consumer

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ingestkit/ingest/change"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestFlinkTypeOf(t *testing.T) {
	micros, events := Format{TimeMicros: true}, Format{Events: true}
	tests := []struct {
		col  Column
		f    Format
		want string
	}{
		{Column{SQLType: "tinyint(1)", Kind: change.Bool}, Format{}, "BOOLEAN"},
		{Column{SQLType: "tinyint(1)", Kind: change.Int}, Format{}, "TINYINT"},
		{Column{SQLType: "tinyint(3) unsigned", Kind: change.Int, Unsigned: true}, Format{}, "SMALLINT"},
		{Column{SQLType: "smallint(5) unsigned", Kind: change.Int, Unsigned: true}, Format{}, "INT"},
		{Column{SQLType: "mediumint(8) unsigned", Kind: change.Int, Unsigned: true}, Format{}, "INT"},
		{Column{SQLType: "int(11)", Kind: change.Int}, Format{}, "INT"},
		{Column{SQLType: "int(10) unsigned", Kind: change.Int, Unsigned: true}, Format{}, "BIGINT"},
		{Column{SQLType: "bigint(20)", Kind: change.Int}, Format{}, "BIGINT"},
		{Column{SQLType: "bigint(20) unsigned", Kind: change.Int, Unsigned: true}, Format{}, "DECIMAL(20,0)"},
		{Column{SQLType: "year(4)", Kind: change.Int}, Format{}, "INT"},
		{Column{SQLType: "float", Kind: change.Float32}, Format{}, "FLOAT"},
		{Column{SQLType: "double", Kind: change.Float64}, Format{}, "DOUBLE"},
		{Column{SQLType: "decimal(30,10)", Kind: change.Decimal, Scale: 10}, Format{}, "DECIMAL(30,10)"},
		{Column{SQLType: "decimal(65,30)", Kind: change.Decimal, Scale: 30}, Format{}, "STRING"},
		{Column{SQLType: "date", Kind: change.Date}, Format{}, "DATE"},
		{Column{SQLType: "datetime(6)", Kind: change.DateTime, Scale: 6}, Format{}, "TIMESTAMP(6)"},
		{Column{SQLType: "timestamp(3)", Kind: change.Timestamp, Scale: 3}, Format{}, "TIMESTAMP_LTZ(3)"},
		{Column{SQLType: "time(3)", Kind: change.Time, Scale: 3}, Format{}, "STRING"},
		{Column{SQLType: "time(3)", Kind: change.Time, Scale: 3}, micros, "BIGINT"},
		{Column{SQLType: "time", Kind: change.Time}, events, "STRING"},
		{Column{SQLType: "bit(1)", Kind: change.Bytes, Length: 1}, Format{}, "BOOLEAN"},
		{Column{SQLType: "bit(12)", Kind: change.Bytes, Length: 12}, Format{}, "BYTES"},
		{Column{SQLType: "binary(4)", Kind: change.Bytes}, Format{}, "BYTES"},
		{Column{SQLType: "set('a','b')", Kind: change.String}, Format{}, "STRING"},
		{Column{SQLType: "enum('a','b')", Kind: change.String}, Format{}, "STRING"},
		{Column{SQLType: "json", Kind: change.JSON}, Format{}, "STRING"},
		{Column{SQLType: "point", Kind: change.Geometry}, Format{}, "STRING"},
		{Column{SQLType: "uuid", Kind: change.String}, Format{}, "STRING"},
	}
	for _, tc := range tests {
		if got := FlinkTypeOf(tc.col, tc.f).SQL; got != tc.want {
			t.Errorf("%s (%+v): %s, want %s", tc.col.SQLType, tc.f, got, tc.want)
		}
	}
}

// shards are two tables merged into one topic whose column types differ, and one column
// only one of them has.
var shards = Topic{Name: "orders", Tables: []Table{
	{Source: "shop_1.orders", Key: []string{"id"}, Columns: []Column{
		{Name: "id", SQLType: "bigint(20)", Kind: change.Int},
		{Name: "total", SQLType: "decimal(12,2)", Kind: change.Decimal, Scale: 2},
		{Name: "took", SQLType: "time", Kind: change.Time},
	}},
	{Source: "shop_2.orders", Key: []string{"id"}, Columns: []Column{
		{Name: "id", SQLType: "bigint(20)", Kind: change.Int},
		{Name: "total", SQLType: "double", Kind: change.Float64},
		{Name: "note", SQLType: "varchar(10)", Kind: change.String},
		{Name: "took", SQLType: "time", Kind: change.Time},
	}},
}}

func TestWriteGolden(t *testing.T) {
	secure := map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": "******"}
	tests := []struct {
		file string
		sink Sink
	}{
		{"merged_upsert.sql", Sink{Connector: "upsert-kafka", ValueFormat: "json", TimestampStandard: "SQL", KeyTimestampStandard: "SQL",
			Bootstrap: "b1:9092,b2:9092", Properties: secure, Pipeline: "shops", ReadCommitted: true}},
		{"merged_kafka_canal.sql", Sink{Format: Format{Events: true, TimeMicros: true}, Connector: "kafka", ValueFormat: "canal-json",
			TimestampStandard: "ISO-8601", KeyTimestampStandard: "SQL", Bootstrap: "b1:9092", Properties: map[string]string{}, Pipeline: "shops"}},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		if err := WriteFlinkSQL(&b, []Topic{shards}, tc.sink); err != nil {
			t.Fatal(err)
		}
		golden(t, tc.file, b.Bytes())
	}
	var b bytes.Buffer
	if err := WriteJSONSchema(&b, []Topic{shards}, Sink{Format: Format{Events: true}, ValueFormat: "debezium-json", TimestampStandard: "SQL"}); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b.Bytes()) {
		t.Fatalf("invalid JSON:\n%s", b.Bytes())
	}
	golden(t, "merged_debezium.schema.json", b.Bytes())
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n%s", path, got)
	}
}
