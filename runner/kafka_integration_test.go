//go:build integration

package runner

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/secrets"
	"github.com/ingestkit/ingest/upsert"
)

// kafkaDefinition loads a type kafka pipeline named name over db's tables, with extra sink
// options and a route block (its list items).
func kafkaDefinition(t *testing.T, name, db, extraSink, routes string) *pipeline.Definition {
	t.Helper()
	return kafkaDefinitionOn(t, testenv.Primary(), name, db, extraSink, routes)
}

// kafkaDefinitionOn is kafkaDefinition for database db of srv.
func kafkaDefinitionOn(t *testing.T, srv testenv.Server, name, db, extraSink, routes string) *pipeline.Definition {
	t.Helper()
	u, p := testenv.CDCUser()
	host, port := srv.Host()
	routeBlock := ""
	if routes != "" {
		routeBlock = "route:\n" + routes
	}
	yaml := fmt.Sprintf(`source:
  type: mysql
  hostname: %s
  port: %s
  username: %s
  password: ${secret_values.pw}
  tables: %s.\.*
  heartbeat.interval: 1s
sink:
  type: kafka
  properties.bootstrap.servers: %s
%s
%s
pipeline:
  name: %s
`, host, port, u, db, testenv.KafkaAddr(), extraSink, routeBlock, name)
	res := secrets.NewResolver([]secrets.Provider{&secrets.Map{Values: map[string]string{"pw": p}}}, nil)
	def, err := pipeline.Parse("test.yaml", []byte(yaml), pipeline.LoadOptions{Resolver: res})
	if err != nil {
		t.Fatalf("pipeline:\n%s\n%v", yaml, err)
	}
	return def
}

// partRecord is a consumed record with its partition.
type partRecord struct {
	key, value string
	partition  int32
}

// consumeCommittedPartitions reads the committed records of topic up to the end offsets it
// has now (control records count towards them; an idle wait would cut the read short on a
// loaded machine), or for at most 30 s.
func consumeCommittedPartitions(t *testing.T, topic string) []partRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listed, err := kadm.NewClient(testenv.Kafka(t)).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	behind := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			behind[o.Partition] = o.Offset
		}
	})
	cl := testenv.Kafka(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	var out []partRecord
	for len(behind) > 0 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if end, ok := behind[r.Partition]; ok && r.Offset+1 >= end {
				delete(behind, r.Partition)
			}
			if !r.Attrs.IsControl() {
				out = append(out, partRecord{key: string(r.Key), value: string(r.Value), partition: r.Partition})
			}
		})
	}
	return out
}

// TestKafkaSinkCanalHashByKey runs a type kafka pipeline with value.format canal-json,
// partition.strategy hash-by-key, a route and sink.tableId-to-topic.mapping through a
// snapshot and then the binlog (an update, a primary key change, a delete, an insert), with
// exactly-once and with at-least-once. A read_committed consumer must see every change
// event in order per key: once with exactly-once, at least once (nothing missing) with
// at-least-once. Each record is in the partition murmur2 of its key picks, and the created
// topics are not compacted.
func TestKafkaSinkCanalHashByKey(t *testing.T) {
	for _, guarantee := range []string{"exactly-once", "at-least-once"} {
		t.Run(guarantee, func(t *testing.T) {
			name, db := testenv.Database(t)
			testenv.Exec(t, db, "CREATE TABLE orders (id INT PRIMARY KEY, v VARCHAR(20))",
				"INSERT INTO orders VALUES (1,'a'),(2,'b')",
				"CREATE TABLE items (id INT PRIMARY KEY, n VARCHAR(20))", "INSERT INTO items VALUES (10,'x')")
			ods := name + "_ods"
			ordersTopic, itemsTopic := name+"_orders_t", name+"_items_t"
			deleteTopicsAtEnd(t, ordersTopic, itemsTopic)
			sink := fmt.Sprintf(`  value.format: canal-json
  partition.strategy: hash-by-key
  sink.delivery-guarantee: %s
  sink.topic.partitions: 3
  sink.tableId-to-topic.mapping: %s.orders:%s;%s.items:%s`, guarantee, ods, ordersTopic, name, itemsTopic)
			routes := fmt.Sprintf("  - source-table: %s.orders\n    sink-table: %s.orders\n", name, ods)
			def := kafkaDefinition(t, name, name, sink, routes)
			state := t.TempDir()
			applyUntilCaughtUp(t, def, state)
			testenv.Exec(t, db, "UPDATE orders SET v='a2' WHERE id=1", "UPDATE orders SET id=3 WHERE id=2",
				"DELETE FROM orders WHERE id=1", "INSERT INTO items VALUES (11,'y')")
			applyUntilCaughtUp(t, def, state)

			key := func(table string, id int) string {
				return fmt.Sprintf(`{"TableId":"%s","id":%d}`, table, id)
			}
			ev := func(old, data, typ, database, table string) string {
				if old != "null" {
					old = "[" + old + "]"
				}
				return fmt.Sprintf(`{"old":%s,"data":[%s],"type":"%s","database":"%s","table":"%s","pkNames":["id"]}`, old, data, typ, database, table)
			}
			o := ods + ".orders"
			want := map[string]map[string][]string{
				ordersTopic: {
					key(o, 1): {ev("null", `{"id":1,"v":"a"}`, "INSERT", ods, "orders"),
						ev(`{"id":1,"v":"a"}`, `{"id":1,"v":"a2"}`, "UPDATE", ods, "orders"),
						ev("null", `{"id":1,"v":"a2"}`, "DELETE", ods, "orders")},
					key(o, 2): {ev("null", `{"id":2,"v":"b"}`, "INSERT", ods, "orders"),
						ev("null", `{"id":2,"v":"b"}`, "DELETE", ods, "orders")},
					key(o, 3): {ev("null", `{"id":3,"v":"b"}`, "INSERT", ods, "orders")},
				},
				itemsTopic: {
					key(name+".items", 10): {ev("null", `{"id":10,"n":"x"}`, "INSERT", name, "items")},
					key(name+".items", 11): {ev("null", `{"id":11,"n":"y"}`, "INSERT", name, "items")},
				},
			}
			for topic, keys := range want {
				got := map[string][]string{}
				for _, r := range consumeCommittedPartitions(t, topic) {
					if p := int32(upsert.PartitionFor([]byte(r.key), 3)); r.partition != p {
						t.Errorf("%s: key %s in partition %d, murmur2 picks %d", topic, r.key, r.partition, p)
					}
					got[r.key] = append(got[r.key], r.value)
				}
				for k, events := range keys {
					checkEvents(t, guarantee == "exactly-once", topic+" "+k, got[k], events)
				}
				if len(got) != len(keys) {
					t.Errorf("%s: %d keys, want %d: %v", topic, len(got), len(keys), got)
				}
			}
			checkNotCompacted(t, ordersTopic, itemsTopic)
		})
	}
}

// checkEvents compares the events of one key: equal with exactly-once; with at-least-once
// each wanted event in order, a replayed run of them allowed.
func checkEvents(t *testing.T, exact bool, what string, got, want []string) {
	t.Helper()
	if exact {
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", what, got, want)
		}
		return
	}
	i := 0
	for _, g := range got {
		switch {
		case i < len(want) && g == want[i]:
			i++
		case !contains(want[:i], g):
			t.Errorf("%s: unexpected event %s", what, g)
		}
	}
	if i < len(want) {
		t.Errorf("%s: missing events from %q (got %q)", what, want[i], got)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// checkNotCompacted checks that the sink created the topics with cleanup.policy=delete.
func checkNotCompacted(t *testing.T, topics ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rcs, err := kadm.NewClient(testenv.Kafka(t)).DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" && c.MaybeValue() != "delete" {
				t.Errorf("topic %s: cleanup.policy %s, want delete", rc.Name, c.MaybeValue())
			}
		}
	}
}

// TestKafkaFlinkQuickstart runs Flink CDC's quickstart pipeline file
// (examples/flinkcdc-kafka/quickstart.yaml) with its placeholders filled and its database,
// user, port and topic replaced by the test's, over the quickstart's orders table: the
// records are debezium-json events in partition 0 of the one topic.
func TestKafkaFlinkQuickstart(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE orders (id INT NOT NULL, price DECIMAL(10,2) NOT NULL, PRIMARY KEY (id))",
		"INSERT INTO orders VALUES (1, 4.00), (2, 100.00)")
	topic := name + "_yaml_mysql_kafka"
	deleteTopicsAtEnd(t, topic)
	data, err := os.ReadFile("../examples/flinkcdc-kafka/quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	u, p := testenv.CDCUser()
	host, port, _ := strings.Cut(testenv.MySQLAddr(), ":")
	// The file's own pipeline name stays; its server ids are made the test's own, so that no
	// other test's replica shares them.
	h := fnv.New32a()
	h.Write([]byte(name))
	first := 100000 + h.Sum32()%(1<<20)
	yaml := strings.NewReplacer("app_db", name, "username: root", "username: "+u, "port: 3306", "port: "+port,
		"yaml-mysql-kafka", topic, "server-id: 5400-5404", fmt.Sprintf("server-id: %d-%d", first, first+4)).Replace(string(data))
	res := secrets.NewResolver([]secrets.Provider{&secrets.Map{Values: map[string]string{"mysql-password": p}}},
		[]secrets.Provider{&secrets.Map{Values: map[string]string{"mysql.hostname": host, "kafka.bootstrap": testenv.KafkaAddr()}}})
	def, err := pipeline.Parse("quickstart.yaml", []byte(yaml), pipeline.LoadOptions{Resolver: res})
	if err != nil {
		t.Fatalf("pipeline:\n%s\n%v", yaml, err)
	}
	// The file's name ("Sync MySQL Database to Kafka") would share its state in Kafka with
	// every earlier run of this test on the same broker: a name of its own.
	def.Pipeline.Name = def.Pipeline.Name + " " + name
	applyUntilCaughtUp(t, def, t.TempDir())
	got := consumeCommittedPartitions(t, topic)
	want := []partRecord{
		{key: `{"TableId":"` + name + `.orders","id":1}`, value: `{"before":null,"after":{"id":1,"price":4},"op":"c","source":{"db":"` + name + `","table":"orders"}}`},
		{key: `{"TableId":"` + name + `.orders","id":2}`, value: `{"before":null,"after":{"id":2,"price":1E+2},"op":"c","source":{"db":"` + name + `","table":"orders"}}`},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("records\n got %v\nwant %v", got, want)
	}
}

// TestAllTypesKafkaSameBytes is TestAllTypesSameBytes for type kafka: the all-types rows read
// through the snapshot and through the binlog give the same debezium-json and canal-json
// events, equal to the golden files (the values as Flink CDC's serializers write them,
// upsert/testdata/events.md).
func TestAllTypesKafkaSameBytes(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		start := gtidPos(t, db)
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, stmt := range []string{
			testenv.AllTypesTable,
			// A comment for the schema part (include-comments.enabled), from the DDL history in
			// the binlog run and from information_schema in the snapshot.
			"ALTER TABLE alltypes MODIFY c_med MEDIUMINT COMMENT 'it''s a “comment” \\ \\t'",
			"SET SESSION time_zone = '+05:30'",
			testenv.AllTypesRow1,
			"INSERT INTO alltypes (id) VALUES (2)",
			"INSERT INTO alltypes (id, c_float, c_double) VALUES (3, 123.456789, 0.1), (4, 3.4e38, 4.9e-324), (5, 1.17549435e-38, -0.0), (6, 16777217, 1e21)",
			"INSERT INTO alltypes (id, c_big_u, c_dec, c_dec0, c_dec2, c_time, c_time3) VALUES (8, 10000000000000000000, 100, 0, 0.05, '12:34:56', '00:00:00.789')",
		} {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		for _, variant := range []struct{ format, option, golden string }{
			{"debezium-json", "", "debezium-json"},
			{"canal-json", "", "canal-json"},
			{"debezium-json", "  debezium-json.include-schema.enabled: true\n", "debezium-json-schema"},
			{"debezium-json", "  json.encode.time-as: micros\n", "debezium-json-time-micros"},
		} {
			t.Run(variant.golden, func(t *testing.T) {
				snapTopic, binlogTopic := testenv.Name(t)+"_snap", testenv.Name(t)+"_binlog"
				deleteTopicsAtEnd(t, snapTopic, binlogTopic)
				sink := variant.option + "  value.format: " + variant.format + "\n  topic: %s"
				// Two pipelines, each named for its run: a pipeline's state in Kafka is keyed by
				// its name, and a fresh state directory resumes from it.
				snapDef := kafkaDefinitionOn(t, srv, name, name, fmt.Sprintf(sink, snapTopic), "")
				snapDef.Pipeline.Name = snapTopic
				snapDef.Source.IncludeComments = true
				applyUntilCaughtUp(t, snapDef, t.TempDir())
				binlog := kafkaDefinitionOn(t, srv, name, name, fmt.Sprintf(sink, binlogTopic), "")
				binlog.Pipeline.Name = binlogTopic
				binlog.Source.IncludeComments = true
				binlog.Source.StartupMode = pipeline.StartupSpecificOffset
				binlog.Source.SpecificOffsetGTIDSet = start
				applyUntilCaughtUp(t, binlog, t.TempDir())
				snap, bin := consumeCommittedPartitions(t, snapTopic), consumeCommittedPartitions(t, binlogTopic)
				if len(snap) != 7 || len(bin) != 7 {
					t.Fatalf("snapshot wrote %d records, the binlog %d; want 7", len(snap), len(bin))
				}
				var lines []string
				for i := range snap {
					if snap[i] != bin[i] {
						t.Errorf("record %d:\n snapshot %v\n binlog   %v", i, snap[i], bin[i])
					}
					lines = append(lines, strings.ReplaceAll(snap[i].key+" "+snap[i].value, name, "DB"))
				}
				goldenFile(t, filepath.Join("testdata", "alltypes-"+variant.golden+".golden"), strings.Join(lines, "\n")+"\n")
			})
		}
	})
}

// TestAllTypesKafkaChanges runs the all-types rows through a snapshot and then changes
// them in the binlog (an update of row 1, whose images hold every type, a primary key
// change, a delete), in both envelopes: the events, equal to the golden files, are an insert
// per snapshot row, one update event with both images, a delete and an insert for the key
// change, and a delete event (upsert/testdata/events.md gives the derivation of the values).
func TestAllTypesKafkaChanges(t *testing.T) {
	for _, format := range []string{"debezium-json", "canal-json"} {
		t.Run(format, func(t *testing.T) {
			name, db := testenv.Database(t)
			ctx := context.Background()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			exec := func(stmts ...string) {
				t.Helper()
				for _, stmt := range stmts {
					if _, err := conn.ExecContext(ctx, stmt); err != nil {
						t.Fatalf("%s: %v", stmt, err)
					}
				}
			}
			exec(testenv.AllTypesTable, "SET SESSION time_zone = '+05:30'", testenv.AllTypesRow1, "INSERT INTO alltypes (id) VALUES (2)")
			topic := name + "_events"
			deleteTopicsAtEnd(t, topic)
			def := kafkaDefinition(t, name, name, "  value.format: "+format+"\n  topic: "+topic, "")
			state := t.TempDir()
			applyUntilCaughtUp(t, def, state)
			exec("UPDATE alltypes SET c_vc = 'changed', c_dec2 = 1.10, c_ts = '2025-06-30 23:59:59.5' WHERE id = 1",
				"UPDATE alltypes SET id = 9 WHERE id = 2", "DELETE FROM alltypes WHERE id = 1")
			applyUntilCaughtUp(t, def, state)
			var lines []string
			for _, r := range consumeCommittedPartitions(t, topic) {
				lines = append(lines, strings.ReplaceAll(r.key+" "+r.value, name, "DB"))
			}
			goldenFile(t, filepath.Join("testdata", "alltypes-changes-"+format+".golden"), strings.Join(lines, "\n")+"\n")
		})
	}
}
