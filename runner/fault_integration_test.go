//go:build integration

package runner

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ingestkit/ingest/internal/fault"
	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/ingestkit/ingest/metrics"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/secrets"
)

// flUser creates a MySQL user of this test alone, with the grants of the CDC user, so that
// its connections in PROCESSLIST are the pipeline's; it is dropped when the test ends.
func flUser(t *testing.T, admin *sql.DB) (user, password string) {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	user, password = "fl_"+hex.EncodeToString(b), "fl-pass-"+hex.EncodeToString(b)
	testenv.Exec(t, admin, "CREATE USER '"+user+"'@'127.0.0.1' IDENTIFIED BY '"+password+"'",
		"GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO '"+user+"'@'127.0.0.1'")
	t.Cleanup(func() { _, _ = admin.Exec("DROP USER IF EXISTS '" + user + "'@'127.0.0.1'") })
	return user, password
}

// flDefinition is definition's pipeline for database db, read as user with password.
func flDefinition(t *testing.T, db, user, password, extraSource string) *pipeline.Definition {
	t.Helper()
	host, port, _ := strings.Cut(testenv.MySQLAddr(), ":")
	yaml := fmt.Sprintf(`source:
  type: mysql
  hostname: %s
  port: %s
  username: %s
  password: ${secret_values.pw}
  tables: %s.\.*
  heartbeat.interval: 1s
%s
sink:
  type: upsert-kafka
  properties.bootstrap.servers: %s
pipeline:
  name: %s
`, host, port, user, db, extraSource, testenv.KafkaAddr(), db)
	res := secrets.NewResolver([]secrets.Provider{&secrets.Map{Values: map[string]string{"pw": password}}}, nil)
	def, err := pipeline.Parse("test.yaml", []byte(yaml), pipeline.LoadOptions{Resolver: res})
	if err != nil {
		t.Fatalf("pipeline:\n%s\n%v", yaml, err)
	}
	return def
}

// metricValue1 is the value of one counter or gauge.
func metricValue1(m prometheus.Metric) float64 {
	var d dto.Metric
	if m.Write(&d) != nil {
		return -1
	}
	if d.Counter != nil {
		return d.Counter.GetValue()
	}
	return d.Gauge.GetValue()
}

// killReaders kills, from the server side, the connections of user that are reading a chunk
// of table (the snapshot's readers, in a SELECT of it), polling PROCESSLIST for up to two
// seconds; when none is caught in a SELECT, it kills every connection of user: all of
// them are the snapshot's at that point. It returns what it killed.
func killReaders(t *testing.T, admin *sql.DB, user, table string) []string {
	t.Helper()
	var killed []string
	kill := func(query string, args ...any) {
		rows, err := admin.Query(query, args...)
		if err != nil {
			t.Errorf("PROCESSLIST: %v", err)
			return
		}
		type thread struct {
			id            int64
			command, info string
		}
		var threads []thread
		for rows.Next() {
			var th thread
			var info sql.NullString
			if err := rows.Scan(&th.id, &th.command, &info); err != nil {
				t.Errorf("PROCESSLIST: %v", err)
			}
			th.info = info.String
			threads = append(threads, th)
		}
		rows.Close()
		for _, th := range threads {
			if _, err := admin.Exec(fmt.Sprintf("KILL CONNECTION %d", th.id)); err != nil {
				var me *mysql.MySQLError
				if !errors.As(err, &me) || me.Number != 1094 { // 1094: gone already
					t.Errorf("KILL %d: %v", th.id, err)
				}
				continue
			}
			info := th.info
			if len(info) > 80 {
				info = info[:80] + "…"
			}
			killed = append(killed, fmt.Sprintf("%d (%s: %s)", th.id, th.command, info))
		}
	}
	for deadline := time.Now().Add(2 * time.Second); len(killed) == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		kill("SELECT ID, COMMAND, INFO FROM information_schema.PROCESSLIST WHERE USER = ? AND ID <> CONNECTION_ID() "+
			"AND COMMAND IN ('Query', 'Execute') AND INFO LIKE ?", user, "SELECT % FROM "+table+"%")
	}
	if len(killed) == 0 {
		kill("SELECT ID, COMMAND, INFO FROM information_schema.PROCESSLIST WHERE USER = ? AND ID <> CONNECTION_ID()", user)
	}
	return killed
}

// TestFlSnapshotConnectionKilled kills the snapshot readers' MySQL connections from the
// server side in the middle of a table: the same Run restarts once, in-process, and resumes
// the snapshot from its stored chunk progress (the chunks done are not read again), and the
// topic ends equal to the table.
func TestFlSnapshotConnectionKilled(t *testing.T) {
	name := "fl_" + testenv.Name(t)
	db := namedDatabase(t, name)
	user, password := flUser(t, db)
	testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(12))")
	const rows, chunkSize = 200_000, 1000
	for i := 0; i < rows; i += 10_000 {
		var values []string
		for j := i + 1; j <= i+10_000; j++ {
			values = append(values, fmt.Sprintf("(%d,'v%d')", j, j))
		}
		testenv.Exec(t, db, "INSERT INTO t VALUES "+strings.Join(values, ","))
	}
	def := flDefinition(t, name, user, password, fmt.Sprintf("  scan.incremental.snapshot.chunk.size: %d", chunkSize))
	def.Pipeline.Parallelism = 2
	topic := name + ".t"
	deleteTopicsAtEnd(t, topic)
	log, logs := bufferLogger()
	m := metrics.New(def.Pipeline.Name)
	chunks := m.SnapshotChunksDone.WithLabelValues(name + ".t")

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	began := time.Now()
	go func() {
		done <- Run(ctx, def, Options{StateDir: t.TempDir(), UntilCaughtUp: true, Logger: log, Metrics: m})
	}()

	// A third of the way through the table, kill the readers.
	const killAt = rows / chunkSize / 3
	for metricValue1(chunks) < killAt {
		select {
		case err := <-done:
			t.Fatalf("Run returned before %d chunks were done: %v\n%s", killAt, err, logs.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	killedAt := metricValue1(chunks)
	killed := killReaders(t, db, user, "`"+name+"`.`t`")
	t.Logf("killed at %v of %d chunks: %s", killedAt, rows/chunkSize, strings.Join(killed, "; "))

	if err := <-done; err != nil {
		t.Fatalf("Run: %v\n%s", err, logs.String())
	}
	t.Logf("snapshot of %d rows with one kill: %s", rows, time.Since(began).Round(time.Millisecond))
	out := logs.String()
	if n := metricValue1(m.Errors.WithLabelValues("retry")); n != 1 {
		t.Errorf("%v restarts, want 1\n%s", n, out)
	}
	if !strings.Contains(out, "restarting: the snapshot resumes from its stored chunk progress") {
		t.Errorf("no restart log line naming the snapshot's chunk progress:\n%s", out)
	}
	resumed := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "restarting:") {
			t.Logf("%s", line)
		}
		if strings.Contains(line, "initial snapshot resumed from its stored chunk progress") {
			resumed = line
		}
	}
	if resumed == "" || strings.Contains(resumed, " chunks=0") {
		t.Errorf("the restart did not resume from stored chunks: %q\n%s", resumed, out)
	}
	t.Logf("%s", resumed)

	recs := consumeAll(t, topic)
	t.Logf("%d records for %d rows: %d written again", len(recs), rows, len(recs)-rows)
	// A restart that read the table again would write the chunks done before the kill twice.
	if len(recs) >= rows+int(killedAt)*chunkSize || len(recs) >= 2*rows {
		t.Errorf("%d records for %d rows: the chunks done before the kill were read again", len(recs), rows)
	}
	if got, want := materialize(recs), tableState(t, db, "t"); !maps.Equal(got, want) {
		t.Fatalf("the topic holds %d keys, the table %d rows", len(got), len(want))
	}
}

// TestFlWrongPasswordExitsAtOnce: a password the server refuses is terminal: Run returns it
// at once (exit 1), with no restart.
func TestFlWrongPasswordExitsAtOnce(t *testing.T) {
	name := "fl_" + testenv.Name(t)
	db := namedDatabase(t, name)
	user, _ := flUser(t, db)
	testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(12))", "INSERT INTO t VALUES (1,'a')")
	def := flDefinition(t, name, user, "fl-wrong-password", "")
	deleteTopicsAtEnd(t, name+".t")
	log, logs := bufferLogger()
	m := metrics.New(def.Pipeline.Name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	began := time.Now()
	err := Run(ctx, def, Options{StateDir: t.TempDir(), UntilCaughtUp: true, Logger: log, Metrics: m})
	took := time.Since(began)
	var me *mysql.MySQLError
	if err == nil || !fault.IsTerminal(err) || !fault.IsMarked(err) || !errors.As(err, &me) || me.Number != 1045 {
		t.Fatalf("Run: %v (terminal %v); want access denied (1045), marked terminal", err, fault.IsTerminal(err))
	}
	if n := metricValue1(m.Errors.WithLabelValues("retry")); n != 0 || strings.Contains(logs.String(), "restarting") {
		t.Errorf("%v restarts:\n%s", n, logs.String())
	}
	if took > 15*time.Second {
		t.Errorf("Run took %s to refuse the password, want at once", took)
	}
	if strings.Contains(err.Error(), "fl-wrong-password") || strings.Contains(logs.String(), "fl-wrong-password") {
		t.Error("the password is in the error or the logs")
	}
	t.Logf("refused in %s: %v", took.Round(time.Millisecond), err)
}
