package pipeline

import (
	"testing"
)

// TestKafkaSinkOptions loads a type kafka sink with every option of Flink CDC 3.6's Kafka
// pipeline sink and checks the model.
func TestKafkaSinkOptions(t *testing.T) {
	const file = `
source:
  type: mysql
  hostname: db
  username: cdc
  password: pw
  tables: app.\.*
sink:
  type: KAFKA
  properties.bootstrap.servers: 127.0.0.1:9092
  value.format: canal-json
  key.format: json
  partition.strategy: hash-by-key
  sink.tableId-to-topic.mapping: app.orders:orders_t;app.item\.*:items_t
  sink.add-tableId-to-header-enabled: true
  sink.custom-header: a:b
  sink.delivery-guarantee: exactly-once
  json.timestamp-format.standard: ISO-8601
  json.encode.decimal-as-plain-number: true
  canal-json.timestamp-format.standard: ISO-8601
  canal-json.encode.ignore-null-fields: true
  canal-json.map-null-key.mode: DROP
route:
  - source-table: app.orders
    sink-table: app.orders
`
	def, err := Parse("kafka.yaml", []byte(file), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	s := def.Sink
	k := s.Kafka
	switch {
	case !s.IsKafka() || s.Type != SinkKafka:
		t.Errorf("type %q, want kafka", s.Type)
	case k.ValueFormat != ValueCanalJSON || k.KeyFormat != KeyJSON || k.PartitionStrategy != PartitionHashByKey:
		t.Errorf("formats %+v", k)
	case !k.KeyJSON.DecimalPlain || s.JSON.TimestampFormat != TimestampISO8601:
		t.Errorf("key json options %+v %v", k.KeyJSON, s.JSON.TimestampFormat)
	case !k.Canal.IgnoreNullFields || k.Canal.TimestampFormat != TimestampISO8601 || k.Canal.MapNullKeyMode != MapNullDrop:
		t.Errorf("canal options %+v", k.Canal)
	case k.Debezium.TimestampFormat != TimestampSQL:
		t.Errorf("debezium default timestamp %v", k.Debezium.TimestampFormat)
	}
	for _, tc := range []struct{ db, table, topic string }{
		{"app", "orders", "orders_t"}, {"app", "items", "items_t"}, {"app", "users", ""},
	} {
		got, ok := k.MappedTopic(tc.db, tc.table)
		if got != tc.topic || ok != (tc.topic != "") {
			t.Errorf("MappedTopic(%s.%s) = %q, %v; want %q", tc.db, tc.table, got, ok, tc.topic)
		}
	}
}

// TestKafkaDefaults: a bare type kafka sink gets Flink CDC's defaults.
func TestKafkaDefaults(t *testing.T) {
	const file = "source:\n  type: mysql\n  hostname: db\n  username: cdc\n  password: pw\n  tables: app.t\n" +
		"sink:\n  type: kafka\n  properties.bootstrap.servers: k:9092\n"
	def, err := Parse("kafka.yaml", []byte(file), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	k := def.Sink.Kafka
	if k.ValueFormat != ValueDebeziumJSON || k.KeyFormat != KeyJSON || k.PartitionStrategy != PartitionAllToZero || k.IncludeSchema {
		t.Errorf("defaults %+v", k)
	}
	if def.Sink.DeliveryGuarantee != DeliveryAtLeastOnce {
		t.Errorf("delivery %v", def.Sink.DeliveryGuarantee)
	}
}
