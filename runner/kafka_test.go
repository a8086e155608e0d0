package runner

import (
	"testing"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/upsert"
)

// TestKafkaTargets checks how type kafka picks each table's table id and topic: the route's
// sink-table names the id, then sink.topic, the first matching mapping entry or the id
// itself names the topic.
func TestKafkaTargets(t *testing.T) {
	const base = "source:\n  type: mysql\n  hostname: db\n  username: u\n  password: p\n  tables: app.\\.*\n" +
		"sink:\n  type: kafka\n  properties.bootstrap.servers: k:9092\n"
	tests := []struct {
		name, sink, routes string
		table              change.TableID
		want               []upsert.Target
	}{
		{"default", "", "", change.TableID{DB: "app", Table: "orders"},
			[]upsert.Target{{Topic: "app.orders", Table: upsert.SinkTable{Schema: "app", Table: "orders"}}}},
		{"dot in the table name", "", "", change.TableID{DB: "app", Table: "a.b"},
			[]upsert.Target{{Topic: "app.a.b", Table: upsert.SinkTable{Schema: "app", Table: "a.b"}}}},
		{"route", "", "route:\n  - source-table: app.orders\n    sink-table: ods.orders_r\n", change.TableID{DB: "app", Table: "orders"},
			[]upsert.Target{{Topic: "ods.orders_r", Table: upsert.SinkTable{Schema: "ods", Table: "orders_r"}}}},
		{"one-part route", "", "route:\n  - source-table: app.orders\n    sink-table: orders\n", change.TableID{DB: "app", Table: "orders"},
			[]upsert.Target{{Topic: "orders", Table: upsert.SinkTable{Table: "orders"}}}},
		{"mapping of the routed id", "  sink.tableId-to-topic.mapping: ods.\\.*:t_ods;app.\\.*:t_app\n",
			"route:\n  - source-table: app.orders\n    sink-table: ods.orders\n", change.TableID{DB: "app", Table: "orders"},
			[]upsert.Target{{Topic: "t_ods", Table: upsert.SinkTable{Schema: "ods", Table: "orders"}}}},
		{"mapping, no route", "  sink.tableId-to-topic.mapping: ods.\\.*:t_ods;app.\\.*:t_app\n", "", change.TableID{DB: "app", Table: "items"},
			[]upsert.Target{{Topic: "t_app", Table: upsert.SinkTable{Schema: "app", Table: "items"}}}},
		{"topic with a route", "  topic: all\n", "route:\n  - source-table: app.orders\n    sink-table: ods.orders\n", change.TableID{DB: "app", Table: "orders"},
			[]upsert.Target{{Topic: "all", Table: upsert.SinkTable{Schema: "ods", Table: "orders"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			def, err := pipeline.Parse("p.yaml", []byte(base+tc.sink+tc.routes), pipeline.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r, err := newRouting(def)
			if err != nil {
				t.Fatal(err)
			}
			got := r.targets(tc.table)
			if len(got) != len(tc.want) {
				t.Fatalf("targets %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("target %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
			if topics := r.topics(tc.table); topics[0] != tc.want[0].Topic {
				t.Errorf("topics %v", topics)
			}
		})
	}
}
