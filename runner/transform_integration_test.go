//go:build integration

package runner

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/secrets"
)

// transformDefinition loads a pipeline named name over the tables pattern, with extra source
// options, and the route and transform blocks as YAML (top-level keys and their items).
func transformDefinition(t *testing.T, name, tables, extraSource, blocks string) *pipeline.Definition {
	t.Helper()
	u, p := testenv.CDCUser()
	host, port, _ := strings.Cut(testenv.MySQLAddr(), ":")
	yaml := fmt.Sprintf(`source:
  type: mysql
  hostname: %s
  port: %s
  username: %s
  password: ${secret_values.pw}
  tables: %s
  heartbeat.interval: 1s
%s
sink:
  type: upsert-kafka
  properties.bootstrap.servers: %s
  sink.add-tableId-to-header-enabled: true
%s
pipeline:
  name: %s
`, host, port, u, tables, extraSource, testenv.KafkaAddr(), blocks, name)
	res := secrets.NewResolver([]secrets.Provider{&secrets.Map{Values: map[string]string{"pw": p}}}, nil)
	def, err := pipeline.Parse("test.yaml", []byte(yaml), pipeline.LoadOptions{Resolver: res})
	if err != nil {
		t.Fatalf("pipeline:\n%s\n%v", yaml, err)
	}
	return def
}

// jsonText renders v as the sink renders a string or a NULL: a JSON string (UTF-8 as it
// is, no HTML escapes) or null.
func jsonText(v sql.NullString) string {
	if !v.Valid {
		return "null"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v.String)
	return strings.TrimSuffix(b.String(), "\n")
}

// The transform of TestTransformShardedProjectionFilter, and the same in SQL for MariaDB:
// the metadata column __table_name__ is the shard's name as a literal there.
const (
	tfProjection = "id, name, UPPER(name) AS name_u, __table_name__ AS src"
	tfFilter     = "id > 10 AND status <> 'x'"
)

// shardsState is what the materialised topic must hold: SELECT <projection> FROM each shard
// WHERE <filter>, computed by MariaDB (UPPER too) and rendered as the sink renders the row;
// the keys are {"id":n} (the shards' ids are distinct, as a merged topic needs:
// examples/sharded/pipeline.yaml). Also the headers each key's last record must carry.
func shardsState(t *testing.T, db *sql.DB, dbName string, shards ...string) (rows, hdrs map[string]string) {
	t.Helper()
	rows, hdrs = map[string]string{}, map[string]string{}
	for _, shard := range shards {
		q := fmt.Sprintf("SELECT id, name, UPPER(name) AS name_u, '%s' AS src FROM %s WHERE %s", shard, shard, tfFilter)
		rs, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rs.Next() {
			var id int
			var name, upper, src sql.NullString
			if err := rs.Scan(&id, &name, &upper, &src); err != nil {
				t.Fatal(err)
			}
			key := fmt.Sprintf(`{"id":%d}`, id)
			if _, dup := rows[key]; dup {
				t.Fatalf("test data: id %d is in two shards", id)
			}
			rows[key] = fmt.Sprintf(`{"id":%d,"name":%s,"name_u":%s,"src":%s}`, id, jsonText(name), jsonText(upper), jsonText(src))
			hdrs[key] = headers(dbName, shard)
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		rs.Close()
	}
	return rows, hdrs
}

// TestTransformShardedProjectionFilter: a route merges two shards, orders_1 and orders_2 (ids
// disjoint), into one topic, through a transform that drops the column secret, adds
// UPPER(name) AS name_u and __table_name__ AS src, and keeps the rows of
// id > 10 AND status <> 'x'. The materialised topic equals the same SELECT … WHERE computed
// by MariaDB, after the snapshot and after inserts, updates that move rows into and out of
// the filter, deletes and key changes within and across the filter; a second pipeline that
// reads everything from the binlog (no snapshot) writes the same bytes.
func TestTransformShardedProjectionFilter(t *testing.T) {
	name := "tf_" + testenv.Name(t)
	db := namedDatabase(t, name)
	shards := []string{"orders_1", "orders_2"}
	for _, s := range shards {
		testenv.Exec(t, db, "CREATE TABLE "+s+" (id INT PRIMARY KEY, name VARCHAR(40), status VARCHAR(4) NOT NULL, secret VARCHAR(40))")
	}
	start := gtidPos(t, db)
	testenv.Exec(t, db,
		// orders_1 has ids below 100, orders_2 ids from 100.
		"INSERT INTO orders_1 VALUES (1,'low','a','s1'),(11,'ann','a','s11'),(12,'bob','x','s12'),(13,'café','b','s13'),"+
			"(14,NULL,'a','s14'),(15,'eve','a','s15'),(16,'fay','x','s16'),(17,'gus','a','s17'),(18,'hal','a','s18'),(5,'five','a','s5')",
		"INSERT INTO orders_2 VALUES (101,'ivy','a','t101'),(102,'jon','x','t102'),(103,'kim','a','t103'),(104,'lou','a','t104')")
	topic := name + "_orders"
	binlogTopic := name + "_orders_binlog"
	deleteTopicsAtEnd(t, topic, binlogTopic)
	blocks := func(topic string) string {
		return fmt.Sprintf(`route:
  - source-table: %[1]s.orders_[0-9]+
    sink-table: %[2]s
    description: merge the shards
transform:
  - source-table: %[1]s.orders_[0-9]+
    projection: %[3]s
    filter: %[4]s
    description: no secret; the source shard and the upper-cased name
`, name, topic, tfProjection, tfFilter)
	}
	def := transformDefinition(t, name, name+".orders_[0-9]+", "", blocks(topic))

	// absent are keys outside the filter then (rows of the table), which the topic must not hold.
	check := func(when, topic string, absent ...int) {
		t.Helper()
		recs := consumeAll(t, topic)
		want, wantHeaders := shardsState(t, db, name, shards...)
		got := materialize(recs)
		if !maps.Equal(got, want) {
			t.Fatalf("%s, topic %s:\n got %v\nwant %v", when, topic, got, want)
		}
		if gotHeaders := recordHeaders(recs); !maps.Equal(filterKeys(gotHeaders, want), wantHeaders) {
			t.Errorf("%s: headers:\n got %v\nwant %v", when, gotHeaders, wantHeaders)
		}
		// What the transform does, said once more on its own: no row outside the filter, no
		// secret column.
		for _, id := range absent {
			out := fmt.Sprintf(`{"id":%d}`, id)
			if v, ok := got[out]; ok {
				t.Errorf("%s: %s is outside the filter but the topic holds %s", when, out, v)
			}
		}
		for _, r := range recs {
			if strings.Contains(r.value, "secret") {
				t.Errorf("%s: record %s carries the dropped column: %s", when, r.key, r.value)
			}
		}
	}

	stateDir := t.TempDir()
	applyUntilCaughtUp(t, def, stateDir)
	check("after the snapshot", topic, 1, 5, 12, 16, 102)
	if v := materialize(consumeAll(t, topic))[`{"id":13}`]; v != `{"id":13,"name":"café","name_u":"CAFÉ","src":"orders_1"}` {
		t.Errorf("id 13 after the snapshot: %s", v)
	}

	testenv.Exec(t, db,
		// Inserts: one in the filter, two out of it.
		"INSERT INTO orders_1 VALUES (19,'ina','a','s19'),(20,'out','x','s20'),(2,'two','a','s2')",
		"UPDATE orders_1 SET name='ANN2' WHERE id=11",           // stays in
		"UPDATE orders_1 SET status='x' WHERE id=15",            // leaves the filter: a tombstone
		"UPDATE orders_1 SET status='a', name='bo' WHERE id=12", // enters it: an upsert
		"UPDATE orders_1 SET name='lower' WHERE id=1",           // stays out
		"UPDATE orders_1 SET secret='changed' WHERE id=14",      // a dropped column only
		"DELETE FROM orders_1 WHERE id=18",                      // in: a tombstone
		"DELETE FROM orders_1 WHERE id=16",                      // out: nothing
		"UPDATE orders_1 SET id=40 WHERE id=17",                 // key change within the filter
		"UPDATE orders_1 SET id=3 WHERE id=13",                  // key change out of it
		"UPDATE orders_1 SET id=50 WHERE id=5",                  // key change into it
		"UPDATE orders_1 SET id=4 WHERE id=1",                   // key change outside it
		"UPDATE orders_1 SET id=60, status='x' WHERE id=19",     // key and status: out
		"UPDATE orders_2 SET id=200, status='a' WHERE id=102",   // key and status: in
		"UPDATE orders_2 SET name='kim2' WHERE id=103",
		"DELETE FROM orders_2 WHERE id=104",
		"INSERT INTO orders_2 VALUES (105,'max','a','t105')")
	applyUntilCaughtUp(t, def, stateDir)
	after := []int{2, 3, 4, 15, 20, 60}
	check("after the binlog", topic, after...)

	// Everything again from the binlog alone, into a topic of its own: the same bytes.
	binlogDef := transformDefinition(t, name+"_binlog", name+".orders_[0-9]+",
		"  scan.startup.mode: specific-offset\n  scan.startup.specific-offset.gtid-set: "+start, blocks(binlogTopic))
	applyUntilCaughtUp(t, binlogDef, t.TempDir())
	check("read from the binlog only", binlogTopic, after...)
	if a, b := materialize(consumeAll(t, topic)), materialize(consumeAll(t, binlogTopic)); !maps.Equal(a, b) {
		t.Errorf("snapshot-then-binlog and binlog-only differ:\n%v\n%v", a, b)
	}
}

// filterKeys returns the entries of m whose key is in keep.
func filterKeys(m, keep map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if _, ok := keep[k]; ok {
			out[k] = v
		}
	}
	return out
}

// TestTransformSoftDelete: with converter-after-transform: SOFT_DELETE a delete writes the
// deleted row, its __data_event_type__ -D, as an upsert of its key instead of a tombstone
// (docs/output.md, "Transform filters and key changes"); an update that leaves the filter
// writes the old row with -U. A key change is an update, not a delete: its old key still gets
// a tombstone, as without the converter.
func TestTransformSoftDelete(t *testing.T) {
	name := "tf_" + testenv.Name(t)
	db := namedDatabase(t, name)
	testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), status VARCHAR(4) NOT NULL)",
		"INSERT INTO t VALUES (1,'a','a'),(2,'b','a'),(3,'c','a')")
	topic := name + ".t"
	deleteTopicsAtEnd(t, topic)
	def := transformDefinition(t, name, name+".t", "", fmt.Sprintf(`transform:
  - source-table: %s.t
    projection: id, name, __data_event_type__ AS op
    filter: status <> 'x'
    converter-after-transform: SOFT_DELETE
`, name))
	stateDir := t.TempDir()
	applyUntilCaughtUp(t, def, stateDir)
	testenv.Exec(t, db, "DELETE FROM t WHERE id=1", "UPDATE t SET name='b2' WHERE id=2", "UPDATE t SET status='x' WHERE id=3",
		"INSERT INTO t VALUES (4,'d','a')", "DELETE FROM t WHERE id=4",
		"UPDATE t SET id=20 WHERE id=2") // a key change is an update: the old key's tombstone stays

	applyUntilCaughtUp(t, def, stateDir)

	recs := consumeAll(t, topic)
	var got []string
	for _, r := range recs {
		if r.tombstone {
			got = append(got, r.key+" tombstone")
			continue
		}
		got = append(got, r.key+" "+r.value)
	}
	want := []string{
		`{"id":1} {"id":1,"name":"a","op":"+I"}`, // the snapshot
		`{"id":2} {"id":2,"name":"b","op":"+I"}`,
		`{"id":3} {"id":3,"name":"c","op":"+I"}`,
		`{"id":1} {"id":1,"name":"a","op":"-D"}`, // the delete, soft
		`{"id":2} {"id":2,"name":"b2","op":"+U"}`,
		`{"id":3} {"id":3,"name":"c","op":"-U"}`, // left the filter: the old row, soft
		`{"id":4} {"id":4,"name":"d","op":"+I"}`,
		`{"id":4} {"id":4,"name":"d","op":"-D"}`,
		`{"id":2} tombstone`, // the key change: SOFT_DELETE converts deletes, not updates
		`{"id":20} {"id":20,"name":"b2","op":"+U"}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("records:\n got %q\nwant %q", got, want)
	}
}

// TestTransformSoftDeleteExample runs the published soft-delete job of
// examples/flinkcdc-transform/soft-delete.yaml (Flink CDC's MysqlE2eITCase.testSoftDelete)
// with its placeholders filled, its port and server ids the test's, on a products table:
// after a snapshot and a binlog of an update, deletes and an insert, every row the table
// ever had is in the topic, the deleted ones with op_type -D, and no record is a tombstone.
func TestTransformSoftDeleteExample(t *testing.T) {
	name := "tf_" + testenv.Name(t)
	db := namedDatabase(t, name)
	testenv.Exec(t, db, "CREATE TABLE products (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(255) NOT NULL DEFAULT 'flink', description VARCHAR(512))",
		"INSERT INTO products VALUES (101,'scooter','Small 2-wheel scooter'),(102,'car battery','12V car battery'),(103,'hammer',NULL)")
	topic := name + ".products"
	deleteTopicsAtEnd(t, topic)
	data, err := os.ReadFile("../examples/flinkcdc-transform/soft-delete.yaml")
	if err != nil {
		t.Fatal(err)
	}
	u, p := testenv.CDCUser()
	host, port, _ := strings.Cut(testenv.MySQLAddr(), ":")
	h := fnv.New32a()
	h.Write([]byte(name))
	first := 100000 + h.Sum32()%(1<<20)
	yaml := strings.NewReplacer("port: 3306", "port: "+port,
		"server-id: 5400-5404", fmt.Sprintf("server-id: %d-%d", first, first+4)).Replace(string(data))
	res := secrets.NewResolver([]secrets.Provider{&secrets.Map{Values: map[string]string{"mysql-password": p}}},
		[]secrets.Provider{&secrets.Map{Values: map[string]string{"mysql.hostname": host, "mysql.username": u,
			"mysql.database": name, "kafka.bootstrap": testenv.KafkaAddr()}}})
	def, err := pipeline.Parse("soft-delete.yaml", []byte(yaml), pipeline.LoadOptions{Resolver: res})
	if err != nil {
		t.Fatalf("pipeline:\n%s\n%v", yaml, err)
	}
	def.Pipeline.Name = name // the file's name would share its state in Kafka with earlier runs
	stateDir := t.TempDir()
	applyUntilCaughtUp(t, def, stateDir)
	testenv.Exec(t, db, "UPDATE products SET description='18V car battery' WHERE id=102", "DELETE FROM products WHERE id=101",
		"INSERT INTO products (name, description) VALUES ('jacket','water resistent white wind breaker')",
		"DELETE FROM products WHERE id=103")
	applyUntilCaughtUp(t, def, stateDir)

	recs := consumeAll(t, topic)
	for _, r := range recs {
		if r.tombstone {
			t.Errorf("record %s is a tombstone", r.key)
		}
	}
	want := map[string]string{
		`{"id":101}`: `{"id":101,"name":"scooter","description":"Small 2-wheel scooter","op_type":"-D"}`,
		`{"id":102}`: `{"id":102,"name":"car battery","description":"18V car battery","op_type":"+U"}`,
		`{"id":103}`: `{"id":103,"name":"hammer","description":null,"op_type":"-D"}`,
		`{"id":104}`: `{"id":104,"name":"jacket","description":"water resistent white wind breaker","op_type":"+I"}`,
	}
	if got := materialize(recs); !maps.Equal(got, want) {
		t.Fatalf("topic:\n got %v\nwant %v", got, want)
	}
}

// TestTransformSchemaChange: a column added while streaming appears where the projection's
// * puts it, in the records after the ALTER TABLE; dropping a column the projection needs
// stops the run with an error that names the rule and the column, before anything of the
// new shape is written.
func TestTransformSchemaChange(t *testing.T) {
	name := "tf_" + testenv.Name(t)
	db := namedDatabase(t, name)
	testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), status VARCHAR(4) NOT NULL)",
		"INSERT INTO t VALUES (1,'a','a'),(2,'b','x')")
	topic := name + ".t"
	deleteTopicsAtEnd(t, topic)
	def := transformDefinition(t, name, name+".t", "", fmt.Sprintf(`transform:
  - source-table: %s.t
    projection: \*, UPPER(name) AS name_u
    filter: status <> 'x'
`, name))
	stateDir := t.TempDir()
	applyUntilCaughtUp(t, def, stateDir)
	testenv.Exec(t, db, "ALTER TABLE t ADD COLUMN extra INT", "INSERT INTO t VALUES (3,'c','a',7)", "UPDATE t SET extra=8 WHERE id=1")
	applyUntilCaughtUp(t, def, stateDir)
	want := map[string]string{
		`{"id":1}`: `{"id":1,"name":"a","status":"a","extra":8,"name_u":"A"}`,
		`{"id":3}`: `{"id":3,"name":"c","status":"a","extra":7,"name_u":"C"}`,
	}
	recs := consumeAll(t, topic)
	if got := materialize(recs); !maps.Equal(got, want) {
		t.Fatalf("after ADD COLUMN:\n got %v\nwant %v", got, want)
	}

	testenv.Exec(t, db, "ALTER TABLE t DROP COLUMN name", "INSERT INTO t VALUES (4,'a',9)")
	err := runUntilCaughtUp(t, def, stateDir)
	if err == nil || !strings.Contains(err.Error(), "transform[0].projection") || !strings.Contains(err.Error(), "name") {
		t.Fatalf("Run after DROP COLUMN name: %v, want the projection's error naming the column", err)
	}
	t.Logf("the run stopped: %v", err)
	if again := consumeAll(t, topic); len(again) != len(recs) {
		t.Errorf("the run that stopped wrote %d records", len(again)-len(recs))
	}
}
