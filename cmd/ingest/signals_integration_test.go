//go:build integration

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ingestkit/ingest/chaos"
	"github.com/ingestkit/ingest/internal/testenv"
)

// applyProc is a running `ingest apply` of the built binary.
type applyProc struct {
	t       *testing.T
	cmd     *exec.Cmd
	began   time.Time
	mu      sync.Mutex
	stderr  bytes.Buffer
	done    chan struct{}
	code    int
	elapsed time.Duration // from start to exit
}

// lockedWriter appends to the process's stderr buffer under its lock.
type lockedWriter struct{ p *applyProc }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.stderr.Write(b)
}

// startApply starts bin with args (killed after 90s at the latest).
func startApply(t *testing.T, bin string, args ...string) *applyProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	p := &applyProc{t: t, done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, bin, args...)
	p.cmd.Env = append(os.Environ(), "INGEST_SECRET_MYSQL_PASSWORD="+cdcPassword())
	p.cmd.Stdout, p.cmd.Stderr = lockedWriter{p}, lockedWriter{p}
	p.began = time.Now()
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		defer cancel()
		defer close(p.done)
		err := p.cmd.Wait()
		p.elapsed = time.Since(p.began)
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			p.code = ee.ExitCode()
		default:
			p.code = -1
		}
	}()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	return p
}

func (p *applyProc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// signal sends sig and returns the exit code and how long the exit took from the signal.
func (p *applyProc) signal(sig os.Signal) (code int, took time.Duration) {
	p.t.Helper()
	sent := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		p.t.Fatalf("no exit 60s after %v:\n%s", sig, p.output())
	}
	return p.code, time.Since(sent)
}

// waitOutput waits until the output contains want.
func (p *applyProc) waitOutput(want string, within time.Duration) {
	p.t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if strings.Contains(p.output(), want) {
			return
		}
	}
	p.t.Fatalf("output lacks %q after %v:\n%s", want, within, p.output())
}

// scrape returns the value of the first series of metric on /metrics at addr, or -1.
func scrape(addr, metric string) float64 {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(metric) + `(?:\{[^}]*\})? (\S+)$`).FindSubmatch(b)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// waitMetric waits until metric on addr is at least want.
func waitMetric(t *testing.T, p *applyProc, addr, metric string, want float64) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if scrape(addr, metric) >= want {
			return
		}
	}
	t.Fatalf("%s did not reach %v:\n%s", metric, want, p.output())
}

// signalPipeline writes a pipeline of the test database's tables into bootstrap.
func signalPipeline(t *testing.T, db, bootstrap, extraSource string) string {
	u, _ := testenv.CDCUser()
	host, port, _ := strings.Cut(testenv.MySQLAddr(), ":")
	return writeFile(t, "pipeline.yaml", fmt.Sprintf(`source:
  type: mysql
  hostname: %s
  port: %s
  username: %s
  password: ${secret_values.mysql-password}
  tables: %s.\.*
  heartbeat.interval: 1s
%ssink:
  type: upsert-kafka
  properties.bootstrap.servers: %s
pipeline:
  name: %s
`, host, port, u, db, extraSource, bootstrap, db), 0o644)
}

// TestSIGHUPStoresPosition: SIGHUP (a closed terminal) stops apply like SIGTERM: exit 0,
// the position of what was written stored, and the end-of-run summary.
func TestSIGHUPStoresPosition(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
	bin, state, addr := buildCLI(t), t.TempDir(), freeAddr(t)
	p := startApply(t, bin, "apply", signalPipeline(t, name, testenv.KafkaAddr(), ""), "--state", state, "--metrics-addr", addr)
	waitMetric(t, p, addr, "ingest_records_written_total", 1)
	testenv.Exec(t, db, "INSERT INTO t VALUES (2)")
	waitMetric(t, p, addr, "ingest_records_written_total", 2)
	var want string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&want); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // let the acknowledged position be seen by the store
	code, took := p.signal(syscall.SIGHUP)
	out := p.output()
	if code != 0 {
		t.Fatalf("exit %d after SIGHUP, want 0:\n%s", code, out)
	}
	cp, err := os.ReadFile(filepath.Join(state, "checkpoint.json"))
	if err != nil {
		t.Fatalf("no stored position after SIGHUP: %v\n%s", err, out)
	}
	// The stored position is at least the insert's GTID (other tests' transactions may follow).
	if !strings.Contains(string(cp), "0-1-") {
		t.Errorf("checkpoint %s has no GTID position (the insert was at %s)", cp, want)
	}
	for _, s := range []string{"stopped; position stored", "run summary", "records=2"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	t.Logf("SIGHUP to exit: %v", took)
}

// TestWrongBootstrapFailsFirstStart: a first start whose brokers do not answer exits 1
// within connect.timeout (and a little), before the snapshot starts.
func TestWrongBootstrapFailsFirstStart(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
	nobody := freeAddr(t) // nothing listens there
	p := startApply(t, buildCLI(t), "apply", signalPipeline(t, name, nobody, "  connect.timeout: 3s\n"), "--state", t.TempDir())
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30s after the start:\n%s", p.output())
	}
	out := p.output()
	if p.code != exitFailure {
		t.Fatalf("exit %d, want %d:\n%s", p.code, exitFailure, out)
	}
	if p.elapsed > 3*time.Second+5*time.Second {
		t.Errorf("exit after %v, want within connect.timeout 3s and a few seconds", p.elapsed)
	}
	for _, s := range []string{"no Kafka broker of properties.bootstrap.servers", nobody} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	for _, s := range []string{"snapshot started", "restarting"} {
		if strings.Contains(out, s) {
			t.Errorf("output has %q: the first start must fail before the snapshot, and not restart:\n%s", s, out)
		}
	}
}

// TestStopWhileBrokerDown stops a private broker under a streaming apply: the lag metric
// rises every second, a WARN says Kafka acknowledges nothing, and SIGTERM still exits 0
// within --stop-timeout (one deadline: no layer adds its own; the default, 20s, is under
// Kubernetes' 30s grace period).
func TestStopWhileBrokerDown(t *testing.T) {
	ctx := context.Background()
	svc, err := chaos.NewPrivate(ctx, "../..", chaos.PrivateConfig{Cache: t.TempDir(), MySQLPort: 9439, KafkaPort: 9430,
		ControllerPort: 9431, SharedLibs: os.Getenv("INGEST_TEST_KAFKA_LIBS")})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := svc.Up(ctx, "kafka"); err != nil {
		t.Fatal(err)
	}
	t.Logf("private broker up in %v", time.Since(began))
	t.Cleanup(func() { _ = svc.Down(context.Background(), "kafka") })

	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
	addr := freeAddr(t)
	p := startApply(t, buildCLI(t), "apply", signalPipeline(t, name, svc.KafkaAddr, "  connect.timeout: 5s\n"),
		"--state", t.TempDir(), "--metrics-addr", addr, "--stop-timeout", "10s")
	waitMetric(t, p, addr, "ingest_records_written_total", 1)
	began = time.Now()
	if err := svc.Down(ctx, "kafka"); err != nil {
		t.Fatal(err)
	}
	t.Logf("private broker down in %v", time.Since(began))
	testenv.Exec(t, db, "INSERT INTO t VALUES (2)")
	time.Sleep(1500 * time.Millisecond)
	var lags []float64
	for range 4 {
		lags = append(lags, scrape(addr, "ingest_source_lag_seconds"))
		time.Sleep(time.Second)
	}
	for i := 1; i < len(lags); i++ {
		if lags[i] < lags[i-1]+0.5 {
			t.Errorf("lag %v: it must rise every second while the broker is down", lags)
			break
		}
	}
	p.waitOutput("Kafka has acknowledged nothing", 20*time.Second)
	if v := scrape(addr, "ingest_errors_total"); v < 1 {
		t.Errorf("ingest_errors_total %v with the broker down, want >= 1", v)
	}
	code, took := p.signal(syscall.SIGTERM)
	if code != 0 || took > 13*time.Second {
		t.Fatalf("SIGTERM with the broker down: exit %d after %v, want 0 within --stop-timeout 10s:\n%s", code, took, p.output())
	}
	t.Logf("lag %v; SIGTERM to exit %v", lags, took)
}
