//go:build integration

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ingestkit/ingest/internal/testenv"
)

// TestKafkaSinkSurvivesSIGKILL runs `ingest apply` with a type kafka sink (canal-json,
// hash-by-key, a route and sink.tableId-to-topic.mapping, at-least-once), kills it with
// SIGKILL while the binlog streams updates, and runs it again until caught up: every change
// event is in the topic, in order per key, with only replays of earlier events in between.
func TestKafkaSinkSurvivesSIGKILL(t *testing.T) {
	name, db := testenv.Database(t)
	const rows, rounds = 50, 30
	testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)")
	var values []string
	for i := range rows {
		values = append(values, fmt.Sprintf("(%d,0)", i))
	}
	testenv.Exec(t, db, "INSERT INTO t VALUES "+strings.Join(values, ","))
	topic := name + "_events"
	adm := kadm.NewClient(testenv.Kafka(t))
	t.Cleanup(func() { _, _ = adm.DeleteTopics(context.Background(), topic) })
	u, _ := testenv.CDCUser()
	host, port, _ := strings.Cut(testenv.MySQLAddr(), ":")
	pipeline := writeFile(t, "pipeline.yaml", fmt.Sprintf(`source:
  type: mysql
  hostname: %s
  port: %s
  username: %s
  password: ${secret_values.mysql-password}
  tables: %s.t
  heartbeat.interval: 1s
sink:
  type: kafka
  properties.bootstrap.servers: %s
  value.format: canal-json
  partition.strategy: hash-by-key
  sink.topic.partitions: 3
  sink.tableId-to-topic.mapping: ods.\.*:%s
route:
  - source-table: %s.t
    sink-table: ods.t
pipeline:
  name: %s
`, host, port, u, name, testenv.KafkaAddr(), topic, name, name), 0o644)
	bin := buildCLI(t)
	state := t.TempDir()
	env := append(os.Environ(), "INGEST_SECRET_MYSQL_PASSWORD="+cdcPassword())

	// Run until the snapshot is in the topic, then stream updates and kill the run midway.
	cmd := exec.Command(bin, "apply", pipeline, "--state", state)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitRecords(t, topic, rows)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for r := 1; r <= rounds; r++ {
			testenv.Exec(t, db, fmt.Sprintf("UPDATE t SET v=%d", r))
			time.Sleep(20 * time.Millisecond)
		}
	}()
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	wg.Wait()

	again := exec.Command(bin, "apply", pipeline, "--state", state, "--until-caught-up")
	again.Env = env
	if out, err := again.CombinedOutput(); err != nil {
		t.Fatalf("apply after SIGKILL: %v\n%s", err, out)
	}

	got := map[string][]string{}
	recs := readAll(t, topic)
	t.Logf("%d records for %d changes: %d written again after the SIGKILL", len(recs), rows*(rounds+1), len(recs)-rows*(rounds+1))
	for _, r := range recs {
		got[string(r.Key)] = append(got[string(r.Key)], string(r.Value))
	}
	row := func(id, v int) string { return fmt.Sprintf(`{"id":%d,"v":%d}`, id, v) }
	ev := func(old, data, typ string) string {
		return fmt.Sprintf(`{"old":%s,"data":[%s],"type":"%s","database":"ods","table":"t","pkNames":["id"]}`, old, data, typ)
	}
	for id := range rows {
		want := []string{ev("null", row(id, 0), "INSERT")}
		for r := 1; r <= rounds; r++ {
			want = append(want, ev("["+row(id, r-1)+"]", row(id, r), "UPDATE"))
		}
		checkReplayed(t, fmt.Sprintf(`{"TableId":"ods.t","id":%d}`, id), got, want)
	}
}

// checkReplayed checks that the events of key hold want in order, with only repeats of
// events already seen in between.
func checkReplayed(t *testing.T, key string, got map[string][]string, want []string) {
	t.Helper()
	seen := map[string]bool{}
	i := 0
	for _, g := range got[key] {
		switch {
		case i < len(want) && g == want[i]:
			seen[g] = true
			i++
		case !seen[g]:
			t.Errorf("%s: event out of order or unknown: %s", key, g)
			return
		}
	}
	if i < len(want) {
		t.Errorf("%s: missing %d events from %s", key, len(want)-i, want[i])
	}
}

// waitRecords waits until topic holds at least n records.
func waitRecords(t *testing.T, topic string, n int) {
	t.Helper()
	adm := kadm.NewClient(testenv.Kafka(t))
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ends, err := adm.ListEndOffsets(context.Background(), topic)
		total := int64(0)
		if err == nil {
			ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
		}
		if total >= int64(n) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("topic %s did not reach %d records", topic, n)
}

// readAll reads every record of topic until two seconds pass without one.
func readAll(t *testing.T, topic string) []*kgo.Record {
	t.Helper()
	cl := testenv.Kafka(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var out []*kgo.Record
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		n := len(out)
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
		if len(out) == n && ctx.Err() != nil {
			return out
		}
	}
}
