//go:build integration

package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ingestkit/ingest/state"
	"github.com/ingestkit/ingest/upsert"
)

const (
	atLeastOnce = "at-least-once"
	exactlyOnce = "exactly-once"
)

// subjectConfig describes a subject.
type subjectConfig struct {
	guarantee string
	// rows are the initial rows of t0, t1, t2.
	rows []int
	// chunkSize is the snapshot chunk size (0: the default).
	chunkSize int
	// rate is the workload's transactions per second.
	rate float64
	// bigRows and bigEvery: a large transaction of bigRows rows every bigEvery.
	bigRows  int
	bigEvery time.Duration
	// ddlEvery: one ADD or DROP COLUMN this often.
	ddlEvery time.Duration
	// stateDir, when set, is --state (a small file system, say).
	stateDir string
	// sourceExtra and sinkExtra are more source and sink options.
	sourceExtra, sinkExtra []string
}

// defaults fills the zero fields with the usual small workload.
func (c subjectConfig) defaults() subjectConfig {
	if c.rows == nil {
		c.rows = []int{2000, 500, 100}
	}
	if c.rate == 0 {
		c.rate = 40
	}
	if c.bigRows == 0 {
		c.bigRows = count(5000, 2000)
		c.bigEvery = 7 * time.Second
	}
	if c.ddlEvery == 0 {
		c.ddlEvery = 4 * time.Second
	}
	return c
}

// subject is one pipeline under test: a database with the workload's tables, their topics,
// the ingest processes, the workload and the checker.
type subject struct {
	t        *testing.T
	svc      *Services
	cfg      subjectConfig
	name     string
	tables   []string
	ingest   *Ingest
	proc     *Process
	workload *Workload
	stopWL   func() WorkloadStats
	checker  *Checker
	dir      string
	kills    int
	crashes  int // exits on open bugs (knownFailure), restarted
}

// newSubject creates the database, its tables with their initial rows, and the topics (three
// partitions each, kept whole: cleanup.policy delete, so that the checker sees every record),
// and writes the pipeline file. Everything is removed when the test ends.
func newSubject(t *testing.T, cfg subjectConfig) *subject {
	t.Helper()
	svc := env(t)
	cfg = cfg.defaults()
	s := &subject{t: t, svc: svc, cfg: cfg, name: uniqueName(t), tables: []string{"t0", "t1", "t2"}}
	s.createDatabase()
	s.createTopics()
	s.dir = t.TempDir()
	s.writePipeline()
	t.Cleanup(func() {
		if s.stopWL != nil {
			s.stopWL()
		}
		if s.proc != nil {
			_ = s.proc.Kill()
		}
		s.checker.Close()
		if t.Failed() {
			s.keepLogs()
		}
	})
	return s
}

// writePipeline writes the pipeline file and creates the checker.
func (s *subject) writePipeline() {
	t := s.t
	cfg := s.cfg
	p := Pipeline{Database: s.name, Guarantee: cfg.guarantee, ChunkSize: cfg.chunkSize, Parallelism: 2,
		SourceExtra: cfg.sourceExtra, SinkExtra: cfg.sinkExtra}
	in, err := NewIngest(suite.bin, s.dir, p, s.svc)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.stateDir != "" {
		in.StateDir = cfg.stateDir
	}
	s.ingest = in
	if s.checker, err = NewChecker(s.svc.KafkaAddr, s.topics(), cfg.guarantee == exactlyOnce); err != nil {
		t.Fatal(err)
	}
}

// keepLogs copies the ingest logs of a failed test to .cache/chaos/failed/<database>, out of
// the test's temporary directory, and prints the last lines of the last run.
func (s *subject) keepLogs() {
	if s.proc != nil {
		s.t.Logf("%s: last lines of ingest run %d:\n%s", s.cfg.guarantee, s.proc.Run, s.proc.LogTail(30))
	}
	dst := filepath.Join(suite.repo, ".cache", "chaos", "failed", s.name)
	if err := os.CopyFS(dst, os.DirFS(s.ingest.LogDir)); err != nil {
		s.t.Logf("keep the logs: %v", err)
		return
	}
	s.t.Logf("%s: the logs of every ingest run are in %s", s.cfg.guarantee, dst)
}

func (s *subject) createDatabase() {
	t := s.t
	root := openDB(t, s.svc, "")
	ctx := context.Background()
	if _, err := root.ExecContext(ctx, "CREATE DATABASE "+quoteIdent(s.name)); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS " + quoteIdent(s.name)) })
	db := openDB(t, s.svc, s.name)
	s.workload = &Workload{DB: db, Database: s.name, Tables: s.tables, Rate: s.cfg.rate, BigEvery: s.cfg.bigEvery,
		BigRows: s.cfg.bigRows, DDLEvery: s.cfg.ddlEvery, Seed: rand.Uint64()}
	if err := s.workload.Create(ctx, s.cfg.rows); err != nil {
		t.Fatal(err)
	}
}

func (s *subject) topics() []string {
	out := make([]string, len(s.tables))
	for i, table := range s.tables {
		out[i] = s.name + "." + table
	}
	return out
}

func (s *subject) createTopics() {
	t := s.t
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.svc.KafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	del := "delete"
	resp, err := adm.CreateTopics(ctx, 3, 1, map[string]*string{"cleanup.policy": &del}, s.topics()...)
	if err == nil {
		err = resp.Error()
	}
	if err == nil {
		err = waitTopics(ctx, adm, s.topics())
	}
	if err != nil {
		cl.Close()
		t.Fatalf("create topics: %v", err)
	}
	t.Cleanup(func() {
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = adm.DeleteTopics(ctx, s.topics()...)
	})
}

// waitTopics waits until the metadata shows the topics with a leader for every partition (a
// topic created a moment ago may not show yet, and ingest would try to create it again).
func waitTopics(ctx context.Context, adm *kadm.Client, topics []string) error {
	for {
		details, err := adm.ListTopics(ctx, topics...)
		if err != nil {
			return err
		}
		ready := len(details) == len(topics)
		for _, d := range details {
			ready = ready && d.Err == nil && len(d.Partitions) > 0
			for _, p := range d.Partitions {
				ready = ready && p.Err == nil && p.Leader >= 0
			}
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topics %v not visible: %w", topics, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logf logs with the subject's guarantee in front.
func (s *subject) logf(format string, args ...any) {
	s.t.Helper()
	s.t.Logf("%s: "+format, append([]any{s.cfg.guarantee}, args...)...)
}

// start starts `ingest apply` (running until stopped).
func (s *subject) start() *Process {
	s.t.Helper()
	p, err := s.ingest.Start(StartOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	s.proc = p
	return p
}

// startWorkload starts the workload.
func (s *subject) startWorkload() {
	s.stopWL = s.workload.Start()
}

// stopWorkload stops the workload and waits until none of its statements is in flight.
func (s *subject) stopWorkload() {
	if s.stopWL == nil {
		return
	}
	st := s.stopWL()
	s.stopWL = nil
	s.logf("workload: %s", st)
}

// kill sends SIGKILL to the running ingest.
func (s *subject) kill() {
	s.t.Helper()
	if err := s.proc.Kill(); err != nil {
		s.t.Fatal(err)
	}
	s.kills++
}

// terminate sends SIGTERM and requires exit code 0 within 60s. It first waits for ingest to
// have loaded the pipeline: before that its signal handler may not be installed yet.
func (s *subject) terminate() {
	s.t.Helper()
	s.waitFor("ingest to start", 30*time.Second, func() bool { return s.proc.LogContains("pipeline loaded") })
	code, err := s.proc.Terminate(time.Minute)
	if err != nil || code != 0 {
		s.t.Fatalf("%s: SIGTERM: exit code %d, %v\n%s", s.cfg.guarantee, code, err, s.proc.LogTail(20))
	}
}

// recoverKnown restarts ingest when it stopped on an open bug (knownFailure) and reports
// whether it did.
func (s *subject) recoverKnown() bool {
	s.t.Helper()
	bug, ok := knownFailure(s.proc)
	if !ok {
		return false
	}
	s.crashes++
	s.logf("KNOWN BUG (%s): ingest run %d exited 1; restarting it:\n%s", bug, s.proc.Run, errorsOf(s.proc))
	s.start()
	return true
}

// alive requires the running ingest not to have exited (but for open bugs: recoverKnown).
func (s *subject) alive(what string) {
	s.t.Helper()
	if s.proc.Exited() && !s.recoverKnown() {
		s.t.Fatalf("%s: ingest exited (code %d) %s; it must keep running:\n%s", s.cfg.guarantee, s.proc.ExitCode(), what, s.proc.LogTail(20))
	}
}

// catchUp runs `ingest apply --until-caught-up` and requires exit code 0.
func (s *subject) catchUp() {
	s.t.Helper()
	p, err := s.ingest.Start(StartOptions{UntilCaughtUp: true})
	if err != nil {
		s.t.Fatal(err)
	}
	s.proc = p
	code, err := p.Wait(90 * time.Second)
	if err != nil || code != 0 {
		s.t.Fatalf("%s: --until-caught-up: exit code %d, %v\n%s", s.cfg.guarantee, code, err, p.LogTail(20))
	}
}

// compare reads the topics up to their end and compares them with the tables.
func (s *subject) compare(ctx context.Context) (*Report, error) {
	if err := s.checker.Sync(ctx); err != nil {
		return nil, err
	}
	return s.checker.Compare(ctx, s.workload.DB, s.name, s.tables, CompareOptions{Optional: OptionalColumn})
}

// converge waits until the topics equal the tables (the workload stopped) while ingest runs on
// its own, and requires that within timeout.
func (s *subject) converge(timeout time.Duration) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	var last *Report
	var lastErr error
	for ctx.Err() == nil {
		rep, err := s.compare(ctx)
		if err == nil && rep.Equal() {
			s.logf("converged in %v while running: %s", time.Since(start).Round(time.Millisecond), rep)
			return
		}
		last, lastErr = rep, err
		if s.proc != nil && s.proc.Exited() && !s.recoverKnown() {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	exited := ""
	if s.proc != nil && s.proc.Exited() {
		exited = fmt.Sprintf(" (ingest exited with code %d:\n%s)", s.proc.ExitCode(), s.proc.LogTail(20))
	}
	if lastErr != nil {
		s.t.Fatalf("%s: the topics did not converge to the tables within %v%s: %v", s.cfg.guarantee, timeout, exited, lastErr)
	}
	s.t.Fatalf("%s: the topics did not converge to the tables within %v%s: %v", s.cfg.guarantee, timeout, exited, last.Err(AllowDuplicates))
}

// check compares the topics with the tables and fails the test on any difference, lost
// change or duplicate that dups forbids.
func (s *subject) check(dups Duplicates) *Report {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := s.compare(ctx)
	if err != nil {
		s.t.Fatalf("%s: %v", s.cfg.guarantee, err)
	}
	if s.crashes > 0 && dups != NoDuplicates {
		dups = AllowDuplicates // ingest crashed on an open bug: at-least-once may write twice
	}
	if err := rep.Err(dups); err != nil {
		s.t.Fatalf("%s: %v", s.cfg.guarantee, err)
	}
	s.logf("check passed after %d SIGKILLs and %d runs: %s", s.kills, s.ingest.runs, rep)
	return rep
}

// finish ends a scenario: stop the workload, let the running ingest catch up on its own,
// stop it with SIGTERM (exit 0), run --until-caught-up (exit 0), and check.
func (s *subject) finish(dups Duplicates) *Report {
	s.t.Helper()
	s.stopWorkload()
	if s.proc != nil && !s.proc.Exited() {
		s.converge(2 * time.Minute)
		s.terminate()
	}
	s.catchUp()
	return s.check(dups)
}

// metrics scrapes the running ingest (an error while it starts or stops is returned).
func (s *subject) metrics() (Metrics, error) {
	return s.proc.Metrics(context.Background())
}

// metric returns the sum of a metric's series of this subject's tables, 0 when absent or
// unreadable.
func (s *subject) metric(name string) float64 {
	m, err := s.metrics()
	if err != nil {
		return 0
	}
	v, _ := m.Sum(name)
	return v
}

// storedCheckpoint is the part of the local state file checkpoint.json the suite reads.
type storedCheckpoint struct {
	Position string `json:"position"`
	Snapshot *struct {
		Chunks []struct {
			Rows int64 `json:"rows"`
		} `json:"chunks"`
		Done bool `json:"done"`
	} `json:"snapshot"`
}

// storedProgress returns the snapshot progress stored now: in checkpoint.json (at-least-once)
// or in the last committed state record in Kafka (exactly-once); nil when there is none.
func (s *subject) storedProgress() *storedCheckpoint {
	if s.cfg.guarantee != exactlyOnce {
		return s.stored()
	}
	// A run killed inside a transaction leaves it open, and it holds back read_committed
	// readers of the state topic until the coordinator aborts it: after the transaction
	// timeout (franz-go's 40 s, the pipeline sets none) and the broker's cleanup interval (1 s
	// in scripts/services). Wait longer than both.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	st, err := upsert.ReadState(ctx, []kgo.Opt{kgo.SeedBrokers(s.svc.KafkaAddr)}, upsert.DefaultStateTopic, s.name)
	if err != nil {
		s.t.Fatal(err)
	}
	if st.Checkpoint == nil {
		return nil
	}
	return s.checkpointFrom(string(st.Checkpoint.Position), st.Checkpoint.State.Snapshot, st.Checkpoint.State.Chunks)
}

// checkpointFrom decodes the parts of a stored checkpoint: the snapshot progress without
// its chunks, and the chunks.
func (s *subject) checkpointFrom(position string, snapshot []byte, chunks [][]byte) *storedCheckpoint {
	cp := &storedCheckpoint{Position: position}
	if len(snapshot) == 0 {
		return cp
	}
	if err := json.Unmarshal(snapshot, &cp.Snapshot); err != nil {
		s.t.Fatalf("stored snapshot progress: %v: %s", err, snapshot)
	}
	for _, c := range chunks {
		var chunk struct {
			Rows int64 `json:"rows"`
		}
		if err := json.Unmarshal(c, &chunk); err != nil {
			s.t.Fatalf("stored chunk: %v: %s", err, c)
		}
		cp.Snapshot.Chunks = append(cp.Snapshot.Chunks, chunk)
	}
	return cp
}

// stored reads the local state (at-least-once); nil when there is none yet.
func (s *subject) stored() *storedCheckpoint {
	_, cp, err := state.Peek(s.ingest.StateDir)
	if err != nil {
		s.t.Fatalf("state %s: %v", s.ingest.StateDir, err)
	}
	if cp == nil {
		return nil
	}
	return s.checkpointFrom(cp.Position, cp.Snapshot, cp.Chunks)
}

// waitFor polls cond every 20ms until it holds, and fails the test after timeout.
func (s *subject) waitFor(what string, timeout time.Duration, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if s.proc != nil && s.proc.Exited() && !s.recoverKnown() {
			s.t.Fatalf("%s: ingest exited (code %d) while waiting for %s:\n%s", s.cfg.guarantee, s.proc.ExitCode(), what, s.proc.LogTail(20))
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: no %s within %v", s.cfg.guarantee, what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// handoffStored waits until the running ingest's stream has passed the snapshot and a
// checkpoint after that is stored (no later run reads a chunk again), then takes the checker's
// baseline: from now on every change must reach the topics.
func (s *subject) handoffStored() {
	s.t.Helper()
	s.waitFor("snapshot hand-off", 2*time.Minute, func() bool { return s.proc.LogContains("hand-off finished") })
	if s.cfg.guarantee == exactlyOnce {
		base := s.metric("ingest_kafka_transactions_committed_total")
		s.waitFor("Kafka commit after the hand-off", time.Minute, func() bool {
			return s.metric("ingest_kafka_transactions_committed_total") >= base+2
		})
	} else {
		s.waitFor("stored position after the hand-off", time.Minute, func() bool {
			cp := s.stored()
			// Past the hand-off the snapshot progress holds no chunks: nothing at all, or
			// (since the captured tables are recorded) only the finished set of tables.
			return cp != nil && cp.Position != "" && (cp.Snapshot == nil || cp.Snapshot.Done && len(cp.Snapshot.Chunks) == 0)
		})
	}
	if err := s.checker.Baseline(context.Background(), s.workload.DB, s.name, s.tables); err != nil {
		s.t.Fatal(err)
	}
}

// begin starts the workload and ingest and waits until the snapshot is done and stored: the
// start of the scenarios whose faults hit the streaming.
func (s *subject) begin() {
	s.t.Helper()
	s.startWorkload()
	s.start()
	s.handoffStored()
}

// sleepRandom sleeps a random time in [lo, hi).
func sleepRandom(lo, hi time.Duration) {
	time.Sleep(lo + time.Duration(rand.Int64N(int64(hi-lo))))
}

// tableRows counts the rows of the subject's tables.
func (s *subject) tableRows() int64 {
	s.t.Helper()
	var total int64
	for _, table := range s.tables {
		var n int64
		if err := s.workload.DB.QueryRow("SELECT COUNT(*) FROM " + quoteIdent(table)).Scan(&n); err != nil {
			s.t.Fatal(err)
		}
		total += n
	}
	return total
}

// guarantees runs f as parallel subtests, one per delivery guarantee.
func guarantees(t *testing.T, f func(t *testing.T, guarantee string)) {
	for _, g := range []string{atLeastOnce, exactlyOnce} {
		t.Run(g, func(t *testing.T) {
			t.Parallel()
			f(t, g)
		})
	}
}

// errorsOf returns the ERROR lines of a process's log, shortened.
func errorsOf(p *Process) string {
	lines := p.Errors()
	for i, l := range lines {
		if len(l) > 400 {
			lines[i] = l[:400] + "…"
		}
	}
	return strings.Join(lines, "\n")
}
