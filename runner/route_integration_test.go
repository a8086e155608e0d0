//go:build integration

package runner

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/secrets"
)

// routedDefinition loads a pipeline named name over the source.tables pattern tables, with
// extra sink options (indented by two spaces), a route block (its list items) and extra
// pipeline options. The secrets are pw, the CDC user's password, and extraSecrets.
func routedDefinition(t *testing.T, name, tables, extraSink, routes, extraPipeline string, extraSecrets map[string]string) *pipeline.Definition {
	t.Helper()
	u, p := testenv.CDCUser()
	host, port, _ := strings.Cut(testenv.MySQLAddr(), ":")
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
  tables: %s
  heartbeat.interval: 1s
sink:
  type: upsert-kafka
  properties.bootstrap.servers: %s
  sink.add-tableId-to-header-enabled: true
%s
%s
pipeline:
  name: %s
%s`, host, port, u, tables, testenv.KafkaAddr(), extraSink, routeBlock, name, extraPipeline)
	vals := map[string]string{"pw": p}
	maps.Copy(vals, extraSecrets)
	res := secrets.NewResolver([]secrets.Provider{&secrets.Map{Values: vals}}, nil)
	def, err := pipeline.Parse("test.yaml", []byte(yaml), pipeline.LoadOptions{Resolver: res})
	if err != nil {
		t.Fatalf("pipeline:\n%s\n%v", yaml, err)
	}
	return def
}

// namedDatabase creates the database name (dropped when the test ends) and returns an admin
// connection using it; testenv.Database picks the name itself, and a sharded layout needs
// names that share a prefix and differ by a shard number.
func namedDatabase(t *testing.T, name string) *sql.DB {
	t.Helper()
	root, err := sql.Open("mysql", testenv.AdminDSN(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	testenv.Exec(t, root, "CREATE DATABASE `"+name+"`")
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS `" + name + "`") })
	db, err := sql.Open("mysql", testenv.AdminDSN(name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// deleteTopicsAtEnd deletes the topics when the test ends.
func deleteTopicsAtEnd(t *testing.T, topics ...string) {
	t.Helper()
	adm := kadm.NewClient(testenv.Kafka(t))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = adm.DeleteTopics(ctx, topics...)
	})
}

// recordHeaders maps the key of every record of recs to the headers of its last record.
func recordHeaders(recs []record) map[string]string {
	m := map[string]string{}
	for _, r := range recs {
		m[r.key] = r.headers
	}
	return m
}

// headers is what sink.add-tableId-to-header-enabled writes for db.table.
func headers(db, table string) string { return "namespace=,schemaName=" + db + ",tableName=" + table }

// TestRouteShardedMerge merges the orders tables of two shards, shop_1 and shop_2, of
// different shapes, into one topic with the route `<prefix>_shop_[0-9]+.orders`, through a
// snapshot and then the binlog.
func TestRouteShardedMerge(t *testing.T) {
	prefix := testenv.Name(t)
	shop1, shop2 := prefix+"_shop_1", prefix+"_shop_2"
	db1, db2 := namedDatabase(t, shop1), namedDatabase(t, shop2)
	testenv.Exec(t, db1, "CREATE TABLE orders (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO orders VALUES (1,'a'),(2,'b')",
		"CREATE TABLE other (id INT PRIMARY KEY)", "INSERT INTO other VALUES (1)")
	// The second shard's table has another shape: each record carries its own row.
	testenv.Exec(t, db2, "CREATE TABLE orders (id INT PRIMARY KEY, v VARCHAR(20), note VARCHAR(20))",
		"INSERT INTO orders VALUES (3,'c','n3'),(4,'d',NULL)")
	topic := prefix + "_orders"
	deleteTopicsAtEnd(t, topic, shop1+".other")
	def := routedDefinition(t, prefix, prefix+`_shop_[0-9]+.\.*`, "", fmt.Sprintf(`  - source-table: %s_shop_[0-9]+.orders
    sink-table: %s
    description: every shard's orders into one topic
`, prefix, topic), "", nil)

	// plan warns that the shards' keys can collide in the merged topic.
	rep, err := Plan(context.Background(), def, Options{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var warned bool
	for _, w := range rep.Warnings {
		warned = warned || strings.Contains(w, "topic "+topic+" receives "+shop1+".orders, "+shop2+".orders")
	}
	if !warned {
		t.Errorf("plan does not warn about the merged shards: %q", rep.Warnings)
	}
	for _, pt := range rep.Tables {
		want := []string{topic}
		if pt.Table == shop1+".other" {
			want = []string{shop1 + ".other"} // no route: the default topic <db>.<table>
		}
		if !slices.Equal(pt.Topics, want) {
			t.Errorf("plan: %s -> %v, want %v", pt.Table, pt.Topics, want)
		}
	}

	stateDir := t.TempDir()
	applyUntilCaughtUp(t, def, stateDir)
	want := map[string]string{
		`{"id":1}`: `{"id":1,"v":"a"}`,
		`{"id":2}`: `{"id":2,"v":"b"}`,
		`{"id":3}`: `{"id":3,"v":"c","note":"n3"}`,
		`{"id":4}`: `{"id":4,"v":"d","note":null}`,
	}
	recs := consumeAll(t, topic)
	if got := materialize(recs); !maps.Equal(got, want) {
		t.Fatalf("after the snapshot:\n got %v\nwant %v", got, want)
	}
	wantHeaders := map[string]string{
		`{"id":1}`: headers(shop1, "orders"), `{"id":2}`: headers(shop1, "orders"),
		`{"id":3}`: headers(shop2, "orders"), `{"id":4}`: headers(shop2, "orders"),
	}
	if got := recordHeaders(recs); !maps.Equal(got, wantHeaders) {
		t.Errorf("headers:\n got %v\nwant %v", got, wantHeaders)
	}
	if other := materialize(consumeAll(t, shop1+".other")); len(other) != 1 {
		t.Errorf("unrouted table: %v", other)
	}

	// The binlog of both shards goes to the same topic.
	testenv.Exec(t, db1, "DELETE FROM orders WHERE id=2", "INSERT INTO orders VALUES (5,'e')")
	testenv.Exec(t, db2, "UPDATE orders SET note='changed' WHERE id=4")
	applyUntilCaughtUp(t, def, stateDir)
	delete(want, `{"id":2}`)
	want[`{"id":5}`] = `{"id":5,"v":"e"}`
	want[`{"id":4}`] = `{"id":4,"v":"d","note":"changed"}`
	recs = consumeAll(t, topic)
	if got := materialize(recs); !maps.Equal(got, want) {
		t.Fatalf("after streaming:\n got %v\nwant %v", got, want)
	}
	hs := recordHeaders(recs)
	if hs[`{"id":5}`] != headers(shop1, "orders") || hs[`{"id":4}`] != headers(shop2, "orders") || hs[`{"id":2}`] != headers(shop1, "orders") {
		t.Errorf("streamed headers: %v", hs)
	}
}

// TestRouteModes runs ALL_MATCH with a fan-out of one table to two topics, a $1 capture
// group and replace-symbol, then FIRST_MATCH with overlapping routes, on one database.
func TestRouteModes(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db,
		"CREATE TABLE orders (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO orders VALUES (1,'o1'),(2,'o2')",
		"CREATE TABLE customers (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO customers VALUES (10,'c10')",
		"CREATE TABLE log_1 (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO log_1 VALUES (100,'l1')",
		"CREATE TABLE log_2 (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO log_2 VALUES (200,'l2')")
	row := func(id int, v string) (string, string) {
		return fmt.Sprintf(`{"id":%d}`, id), fmt.Sprintf(`{"id":%d,"v":%q}`, id, v)
	}
	state := func(rows ...any) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(rows); i += 2 {
			k, v := row(rows[i].(int), rows[i+1].(string))
			m[k] = v
		}
		return m
	}
	check := func(topic, table string, want map[string]string) {
		t.Helper()
		recs := consumeAll(t, topic)
		if got := materialize(recs); !maps.Equal(got, want) {
			t.Errorf("topic %s:\n got %v\nwant %v", topic, got, want)
		}
		for _, r := range recs {
			if table != "" && r.headers != headers(name, table) {
				t.Errorf("topic %s: record %s has headers %q, want table %s", topic, r.key, r.headers, table)
			}
		}
	}

	t.Run("ALL_MATCH", func(t *testing.T) {
		topics := []string{name + ".orders_a", name + ".orders_b", name + ".log-1", name + ".log-2", name + ".r_customers"}
		deleteTopicsAtEnd(t, topics...)
		def := routedDefinition(t, name+"_all", name+`.\.*`, "", fmt.Sprintf(`  - source-table: %[1]s.orders
    sink-table: %[1]s.orders_a
  - source-table: %[1]s.orders
    sink-table: %[1]s.orders_b
    description: fan-out, the same table to a second topic
  - source-table: %[1]s.log_([0-9]+)
    sink-table: %[1]s.log-$1
    description: a capture group
  - source-table: %[1]s.cust\.*
    sink-table: %[1]s.r_<>
    replace-symbol: <>
`, name), "  route-mode: ALL_MATCH\n", nil)
		applyUntilCaughtUp(t, def, t.TempDir())
		check(name+".orders_a", "orders", state(1, "o1", 2, "o2"))
		check(name+".orders_b", "orders", state(1, "o1", 2, "o2"))
		check(name+".log-1", "log_1", state(100, "l1"))
		check(name+".log-2", "log_2", state(200, "l2"))
		check(name+".r_customers", "customers", state(10, "c10"))
	})

	t.Run("FIRST_MATCH", func(t *testing.T) {
		first, rest := name+".first_orders", name+".first_rest"
		deleteTopicsAtEnd(t, first, rest)
		def := routedDefinition(t, name+"_first", name+`.\.*`, "", fmt.Sprintf(`  - source-table: %[1]s.orders
    sink-table: %[2]s
  - source-table: %[1]s.\.*
    sink-table: %[3]s
    description: every other table; orders stop at the first route
`, name, first, rest), "  route-mode: FIRST_MATCH\n", nil)
		applyUntilCaughtUp(t, def, t.TempDir())
		check(first, "orders", state(1, "o1", 2, "o2"))
		check(rest, "", state(10, "c10", 100, "l1", 200, "l2"))
		hs := recordHeaders(consumeAll(t, rest))
		for key, table := range map[string]string{`{"id":10}`: "customers", `{"id":100}`: "log_1", `{"id":200}`: "log_2"} {
			if hs[key] != headers(name, table) {
				t.Errorf("%s: record %s has headers %q, want table %s", rest, key, hs[key], table)
			}
		}
	})
}
