package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ingestkit/ingest/chaos"
	"github.com/ingestkit/ingest/fleet"
)

// basePort is the first worker's status port.
const basePort = 18190

// group is the benchmark's pipelines and workers.
type group struct {
	cfg       config
	svc       *chaos.Services
	dir, name string
	admin     *sql.DB
	kcl       *kgo.Client
	pipelines []*benchPipeline
	workers   []*worker
}

// benchPipeline is one pipeline: a database with one table, and its workload.
type benchPipeline struct {
	name     string
	db       *sql.DB
	workload *chaos.Workload
}

// worker is one `ingest serve` process.
type worker struct {
	n    int
	addr string
	cmd  *exec.Cmd
	done chan struct{}
}

func (w *worker) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

func (g *group) open(db string) (*sql.DB, error) {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = g.svc.AdminUser, g.svc.AdminPassword, "tcp", g.svc.MySQLAddr, db
	c.InterpolateParams = true
	conn, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(2)
	return conn, nil
}

// setup creates the databases, tables, topics and pipeline files.
func (g *group) setup(ctx context.Context) error {
	var err error
	if g.admin, err = g.open(""); err != nil {
		return err
	}
	if g.kcl, err = kgo.NewClient(kgo.SeedBrokers(g.svc.KafkaAddr)); err != nil {
		return err
	}
	if err := os.MkdirAll(g.pipelinesDir(), 0o755); err != nil {
		return err
	}
	var topics []string
	for i := range g.cfg.pipelines {
		p := &benchPipeline{name: fmt.Sprintf("%s_%03d", g.name, i)}
		g.pipelines = append(g.pipelines, p)
		if _, err := g.admin.ExecContext(ctx, "CREATE DATABASE "+p.name); err != nil {
			return fmt.Errorf("create database %s: %w", p.name, err)
		}
		if p.db, err = g.open(p.name); err != nil {
			return err
		}
		p.workload = &chaos.Workload{DB: p.db, Database: p.name, Tables: []string{"t0"}, Rate: g.cfg.rate, Seed: uint64(i + 1)}
		if err := p.workload.Create(ctx, []int{g.cfg.rows}); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		topics = append(topics, p.name+".t0")
		yaml := chaos.Pipeline{Database: p.name, Guarantee: "exactly-once", Parallelism: 1,
			SinkExtra: []string{"sink.transactional-id-prefix: fb_"}}.YAML(g.svc)
		if err := os.WriteFile(filepath.Join(g.pipelinesDir(), p.name+".yaml"), []byte(yaml), 0o600); err != nil {
			return err
		}
	}
	compact := "compact"
	resp, err := kadm.NewClient(g.kcl).CreateTopics(ctx, 1, 1, map[string]*string{"cleanup.policy": &compact}, topics...)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("create topics: %w", err)
	}
	return nil
}

// start starts worker n.
func (g *group) start(n int) error {
	w := &worker{n: n, addr: "127.0.0.1:" + strconv.Itoa(basePort+n), done: make(chan struct{})}
	logFile, err := os.Create(filepath.Join(g.dir, fmt.Sprintf("worker-%d.log", n)))
	if err != nil {
		return err
	}
	w.cmd = exec.Command(g.cfg.ingest, "serve", "--group", g.name, "--state", filepath.Join(g.dir, fmt.Sprintf("state-%d", n)),
		"--status-addr", w.addr, g.pipelinesDir())
	w.cmd.Env = append(os.Environ(), "INGEST_SECRET_PW="+g.svc.CDCPassword)
	w.cmd.Stdout, w.cmd.Stderr = logFile, logFile
	if err := w.cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("start worker %d: %w", n, err)
	}
	go func() {
		_ = w.cmd.Wait()
		logFile.Close()
		close(w.done)
	}()
	g.workers = append(g.workers, w)
	return nil
}

func (g *group) live() []*worker {
	var out []*worker
	for _, w := range g.workers {
		if !w.exited() {
			out = append(out, w)
		}
	}
	return out
}

// get reads path of worker w's status server and hands the body to read.
func get(ctx context.Context, w *worker, path string, read func(io.Reader) error) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+w.addr+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("worker %d: %w", w.n, err)
	}
	defer resp.Body.Close()
	if err := read(resp.Body); err != nil {
		return fmt.Errorf("worker %d: %s: %w", w.n, path, err)
	}
	return nil
}

func status(ctx context.Context, w *worker) (*fleet.Status, error) {
	var st fleet.Status
	err := get(ctx, w, "/status", func(r io.Reader) error { return json.NewDecoder(r).Decode(&st) })
	return &st, err
}

// settled reports whether every pipeline is owned by exactly one of the live workers but
// skip, and streams; why says what is missing.
func (g *group) settled(ctx context.Context, skip *worker) (ok bool, why string) {
	owners := map[string]int{}
	for _, w := range g.live() {
		if w == skip {
			continue
		}
		st, err := status(ctx, w)
		if err != nil {
			return false, err.Error()
		}
		for _, p := range st.Owned {
			owners[p.Name]++
			if p.Phase != fleet.PhaseStreaming {
				return false, fmt.Sprintf("%s is %s on worker %d", p.Name, p.Phase, w.n)
			}
		}
	}
	for _, p := range g.pipelines {
		if n := owners[p.name]; n != 1 {
			return false, fmt.Sprintf("%s is owned by %d workers", p.name, n)
		}
	}
	return true, ""
}

// waitStreaming waits until the group is settled and returns how long that took.
func (g *group) waitStreaming(ctx context.Context, skip *worker, timeout time.Duration) (time.Duration, error) {
	began := time.Now()
	for {
		ok, why := g.settled(ctx, skip)
		if ok {
			return time.Since(began), nil
		}
		if time.Since(began) > timeout {
			return 0, fmt.Errorf("not settled within %v: %s (logs in %s)", timeout, why, g.dir)
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return 0, err
		}
	}
}

// busiest returns the live worker that owns the most pipelines.
func (g *group) busiest() *worker {
	var best *worker
	most := -1
	for _, w := range g.live() {
		if st, err := status(context.Background(), w); err == nil && len(st.Owned) > most {
			best, most = w, len(st.Owned)
		}
	}
	return best
}

// leave stops worker w (SIGKILL when kill, else SIGTERM) and measures the time until every
// pipeline streams again on the others.
func (g *group) leave(ctx context.Context, w *worker, kill bool) (move, error) {
	m := move{Kind: "SIGTERM", Worker: w.n}
	sig := syscall.SIGTERM
	if kill {
		m.Kind, sig = "SIGKILL", syscall.SIGKILL
	}
	st, err := status(ctx, w)
	if err != nil {
		return m, err
	}
	m.Moved = len(st.Owned)
	began := time.Now()
	exited := make(chan time.Duration, 1)
	go func() { <-w.done; exited <- time.Since(began) }()
	if err := w.cmd.Process.Signal(sig); err != nil {
		return m, err
	}
	took, err := g.waitStreaming(ctx, w, 5*time.Minute)
	if err != nil {
		return m, fmt.Errorf("%s of worker %d: %w", m.Kind, w.n, err)
	}
	m.Seconds = took.Seconds()
	select {
	case d := <-exited:
		m.ExitSeconds = d.Seconds()
	case <-time.After(2 * time.Minute):
		return m, fmt.Errorf("worker %d did not exit within 2 minutes of %s", w.n, m.Kind)
	}
	return m, nil
}

// load runs every pipeline's workload until the returned function is called, which returns
// the transactions written.
func (g *group) load() (stop func() int) {
	stops := make([]func() chaos.WorkloadStats, len(g.pipelines))
	before := 0
	for i, p := range g.pipelines {
		before += p.workload.Stats().Transactions
		stops[i] = p.workload.Start()
	}
	return func() int {
		var wg sync.WaitGroup
		for _, s := range stops {
			wg.Add(1)
			go func() { defer wg.Done(); s() }()
		}
		wg.Wait()
		after := 0
		for _, p := range g.pipelines {
			after += p.workload.Stats().Transactions
		}
		return after - before
	}
}

// close stops the workers and, unless -keep, drops the databases, topics and group.
func (g *group) close(ctx context.Context) {
	for _, w := range g.live() {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-w.done:
		case <-time.After(time.Minute):
			_ = w.cmd.Process.Kill()
			<-w.done
		}
	}
	if g.cfg.keep || g.admin == nil {
		return
	}
	var topics []string
	for _, p := range g.pipelines {
		_, _ = g.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+p.name)
		if p.db != nil {
			p.db.Close()
		}
		topics = append(topics, p.name+".t0")
	}
	g.admin.Close()
	if g.kcl != nil {
		adm := kadm.NewClient(g.kcl)
		_, _ = adm.DeleteTopics(ctx, append(topics, fleet.TopicPrefix+g.name)...)
		_, _ = adm.DeleteGroups(ctx, g.name)
		g.kcl.Close()
	}
}
