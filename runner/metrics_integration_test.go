//go:build integration

package runner

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/ingestkit/ingest/metrics"
)

// TestMetricsDuringRun reads the metrics endpoint while a pipeline streams and checks the
// documented series with sensible values.
func TestMetricsDuringRun(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c')")
	def := definition(t, name, "  scan.incremental.snapshot.chunk.size: 2", "")
	topic := name + ".t"
	t.Cleanup(func() { _, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), topic) })
	addr := freeAddr(t)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, def, Options{StateDir: t.TempDir(), MetricsAddr: addr}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run after SIGTERM-like cancel: %v", err)
		}
	}()

	// The snapshot writes 3 records; then a delete streams through as a tombstone.
	series := func(metric string) string {
		return fmt.Sprintf(`%s{pipeline="%s",table="%s.t",topic="%s"}`, metric, def.Pipeline.Name, name, topic)
	}
	waitMetric(t, addr, series("ingest_records_written_total"), 3)
	testenv.Exec(t, db, "DELETE FROM t WHERE id = 2")
	body := waitMetric(t, addr, series("ingest_tombstones_written_total"), 1)

	for _, want := range []string{
		series("ingest_records_written_total") + " 4",
		fmt.Sprintf(`ingest_snapshot_rows_done{pipeline="%s",table="%s.t"} 3`, def.Pipeline.Name, name),
		fmt.Sprintf(`ingest_snapshot_chunks_done{pipeline="%s",table="%s.t"}`, def.Pipeline.Name, name),
		"ingest_send_latency_seconds_count",
		"ingest_source_lag_seconds",
		"ingest_source_transactions_total",
		"ingest_position_stored_timestamp_seconds",
		"process_resident_memory_bytes",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if v := metricValue(body, "ingest_source_lag_seconds"); v < 0 || v > 60 {
		t.Errorf("source lag %v s, want between 0 and 60", v)
	}
	if v := metricValue(body, series("ingest_bytes_written_total")); v < 4*10 {
		t.Errorf("bytes written %v, want at least 40 for 4 records", v)
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitMetric polls the endpoint until series reaches at least want, and returns the body.
func waitMetric(t *testing.T, addr, series string, want float64) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var body string
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			if metricValue(body, series) >= want {
				return body
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s did not reach %v; metrics:\n%s", series, want, body)
	return ""
}

// metricValue returns the value of the first line starting with series, or -1.
func metricValue(body, series string) float64 {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + `(?:\{[^}]*\})? (\S+)$`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// TestTransactionsCountedPerSourceTransaction: ten one-row transactions raise
// ingest_source_transactions_total by ten, however many of them one acknowledgement (or,
// with exactly-once, one Kafka commit) covers.
func TestTransactionsCountedPerSourceTransaction(t *testing.T) {
	for _, guarantee := range []string{"at-least-once", "exactly-once"} {
		t.Run(guarantee, func(t *testing.T) {
			name, db := testenv.Database(t)
			testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)")
			def := definition(t, name, "", "  sink.delivery-guarantee: "+guarantee)
			t.Cleanup(func() { _, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), name+".t") })
			m := metrics.New(def.Pipeline.Name)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- Run(ctx, def, Options{StateDir: t.TempDir(), Metrics: m}) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Run: %v", err)
				}
			}()
			testenv.Exec(t, db, "INSERT INTO t VALUES (0)") // by the snapshot or the stream
			waitFor(t, func() bool { return records(m) >= 1 })
			before := counter(t, m.TransactionsCommitted)
			for i := range 10 {
				testenv.Exec(t, db, fmt.Sprintf("INSERT INTO t VALUES (%d)", i+1))
			}
			waitFor(t, func() bool { return records(m) >= 11 })
			waitFor(t, func() bool { return counter(t, m.TransactionsCommitted)-before >= 10 })
			time.Sleep(1500 * time.Millisecond) // nothing more may come
			if got := counter(t, m.TransactionsCommitted) - before; got != 10 {
				t.Fatalf("ingest_source_transactions_total rose by %v for 10 transactions", got)
			}
		})
	}
}

// records sums ingest_records_written_total.
func records(m *metrics.Metrics) float64 {
	ch := make(chan prometheus.Metric)
	go func() { m.RecordsWritten.Collect(ch); close(ch) }()
	var sum float64
	for c := range ch {
		var d dto.Metric
		if c.Write(&d) == nil {
			sum += d.GetCounter().GetValue()
		}
	}
	return sum
}

// waitFor polls cond for up to 60s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 60s")
}
