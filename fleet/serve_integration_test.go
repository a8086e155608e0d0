//go:build integration

package fleet_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ingestkit/ingest/chaos"
	"github.com/ingestkit/ingest/fleet"
	"github.com/ingestkit/ingest/internal/testenv"
)

// basePort is the first of the status ports of the test's workers (18090-18099).
const basePort = 18090

// fleetPipeline is one pipeline of the test: a database with the workload's tables.
type fleetPipeline struct {
	name     string
	db       *sql.DB
	workload *chaos.Workload
	stop     func() chaos.WorkloadStats
	checker  *chaos.Checker
}

var tables = []string{"t0", "t1", "t2"}

func (p *fleetPipeline) topics() []string {
	out := make([]string, len(tables))
	for i, t := range tables {
		out[i] = p.name + "." + t
	}
	return out
}

// worker is one `ingest serve` process.
type worker struct {
	n       int
	addr    string
	ns      *netns // nil: on the host's loopback
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error
}

func (w *worker) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

func (w *worker) logTail(n int) string {
	b, _ := os.ReadFile(w.logPath)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// fleetTest is the group under test.
type fleetTest struct {
	t         *testing.T
	svc       *chaos.Services
	bin, dir  string
	group     string
	pipelines []*fleetPipeline
	workers   []*worker
	suffix    string
	useNetns  bool
	subnet    int // the third octet of the first worker's 10.239.X.0/30
}

// TestServeFailover runs a group of workers, each a separate process in a network namespace
// of its own (a veth to the host, where MariaDB and Kafka listen; on the host's loopback when
// namespaces cannot be made, said in the log), over several databases under a continuous
// randomized workload. It (a) SIGKILLs one worker, (b) cuts another's link for 60 s and
// restores it, (c) adds a worker, (d) SIGTERMs one, and requires after each step that every
// pipeline is owned by exactly one live worker and streaming; at the end the topics equal the
// tables, with no duplicate (exactly-once). It prints the failover times.
// INGEST_FLEET_PIPELINES sets the number of pipelines (default 12), INGEST_FLEET_CUT the
// length of the cut (default 60s).
func TestServeFailover(t *testing.T) {
	ft := newFleetTest(t, envInt("INGEST_FLEET_PIPELINES", 12))
	for i := range 3 {
		ft.start(i)
	}
	settled := ft.waitSettled("the first assignment", nil, 90*time.Second)
	t.Logf("3 workers: %d pipelines assigned and streaming after %v", len(ft.pipelines), settled)
	ctx := context.Background()
	for _, p := range ft.pipelines {
		if err := p.checker.Baseline(ctx, p.db, p.name, tables); err != nil {
			t.Fatal(err)
		}
		p.stop = p.workload.Start()
	}
	time.Sleep(8 * time.Second)

	// (a) SIGKILL the worker that owns the most pipelines.
	victim := ft.busiest()
	moved := ft.ownedBy(victim)
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := ft.waitSettled(fmt.Sprintf("SIGKILL of worker %d", victim.n), victim, 90*time.Second)
	t.Logf("FAILOVER SIGKILL: worker %d owned %d pipelines %v; all streaming on the others %v after the kill (session timeout %v)",
		victim.n, len(moved), moved, killed.Round(100*time.Millisecond), fleet.DefaultSessionTimeout)
	ft.withinBound("SIGKILL", killed)
	time.Sleep(5 * time.Second)

	// (b) Cut another worker's link; the others take its pipelines over; restore it.
	if ft.useNetns {
		cutFor := envDuration("INGEST_FLEET_CUT", 60*time.Second)
		cut := ft.busiest()
		cutMoved := ft.ownedBy(cut)
		ft.link(cut, "down")
		cutOver := ft.waitSettled(fmt.Sprintf("link cut of worker %d", cut.n), cut, 90*time.Second)
		t.Logf("FAILOVER LINK CUT: worker %d owned %d pipelines %v; all streaming on the others %v after the cut",
			cut.n, len(cutMoved), cutMoved, cutOver.Round(100*time.Millisecond))
		ft.withinBound("link cut", cutOver)
		// The cut worker must not go on as a zombie: its watchdog stops its pipelines once the
		// coordinator has been silent for a session timeout.
		zombie := ft.waitLog(cut, "stopping them until it answers again", cutFor-cutOver)
		t.Logf("ZOMBIE STOPPED: worker %d stopped its pipelines %v after the cut", cut.n, (cutOver + zombie).Round(100*time.Millisecond))
		cutOver += zombie
		if rest := cutFor - cutOver; rest > 0 {
			time.Sleep(rest)
		}
		ft.link(cut, "up")
		back := ft.waitSettled(fmt.Sprintf("worker %d back after the cut", cut.n), nil, 90*time.Second, func(owners map[string]int) bool {
			return ft.count(owners, cut) >= len(ft.pipelines)/len(ft.live())
		})
		if cut.exited() {
			t.Fatalf("worker %d exited after its link came back:\n%s", cut.n, cut.logTail(20))
		}
		t.Logf("LINK RESTORED: worker %d owns %d pipelines again, all streaming, %v after the link came back",
			cut.n, len(ft.ownedBy(cut)), back.Round(100*time.Millisecond))
		time.Sleep(5 * time.Second)
	}

	// (c) Add a worker: it takes its share, the others keep theirs.
	added := ft.start(len(ft.workers))
	join := ft.waitSettled(fmt.Sprintf("worker %d joining", added.n), nil, 90*time.Second, func(owners map[string]int) bool {
		return ft.count(owners, added) >= len(ft.pipelines)/len(ft.live())
	})
	t.Logf("JOIN: worker %d owns %d pipelines, all streaming, after %v", added.n, len(ft.ownedBy(added)), join.Round(100*time.Millisecond))
	ft.checkPageInBrowser(added)
	time.Sleep(5 * time.Second)

	// (d) SIGTERM one: it drains and hands its pipelines over.
	drained := ft.live()[0]
	handed := ft.ownedBy(drained)
	began := time.Now()
	if err := drained.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	term := ft.waitSettled(fmt.Sprintf("SIGTERM of worker %d", drained.n), drained, 90*time.Second)
	select {
	case <-drained.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("worker %d did not exit within 60s of SIGTERM:\n%s", drained.n, drained.logTail(20))
	}
	if code := drained.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("worker %d: exit code %d after SIGTERM, want 0:\n%s", drained.n, code, drained.logTail(20))
	}
	t.Logf("FAILOVER SIGTERM: worker %d handed %d pipelines over; all streaming after %v; it exited 0 after %v",
		drained.n, len(handed), term.Round(100*time.Millisecond), time.Since(began).Round(100*time.Millisecond))
	time.Sleep(3 * time.Second)

	for _, p := range ft.pipelines {
		st := p.stop()
		p.stop = nil
		t.Logf("%s: workload: %s", p.name, st)
	}
	for _, p := range ft.pipelines {
		ft.converge(p, 2*time.Minute)
	}
	ft.groupStatus()
}

func newFleetTest(t *testing.T, n int) *fleetTest {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	repo, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := chaos.NewShared(ctx, repo, "")
	if err != nil {
		t.Skipf("services: %v", err)
	}
	dir := t.TempDir()
	bin, err := chaos.BuildIngest(ctx, repo, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	suffix := randHex()
	ft := &fleetTest{t: t, svc: svc, bin: bin, dir: dir, group: "sv_fl_" + suffix, suffix: suffix,
		subnet: 16 + int(suffix[0])%8*16}
	// Each worker in a network namespace of its own, unless namespaces cannot be made here
	// (not root, no iproute2 or socat) or INGEST_FLEET_NETNS=0.
	ft.useNetns = os.Getenv("INGEST_FLEET_NETNS") != "0" && netnsWorks(t, suffix)
	if !ft.useNetns {
		t.Log("NO NETWORK NAMESPACES: the workers run on the host's loopback, and the link-cut step is left out")
	}
	if err := os.MkdirAll(filepath.Join(dir, "pipelines"), 0o755); err != nil {
		t.Fatal(err)
	}
	admin := ft.open("")
	cl, err := kgo.NewClient(kgo.SeedBrokers(svc.KafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	t.Cleanup(func() {
		for _, w := range ft.workers {
			if !w.exited() {
				_ = w.cmd.Process.Signal(syscall.SIGKILL)
				<-w.done
			}
			if t.Failed() {
				t.Logf("worker %d, last lines:\n%s", w.n, w.logTail(30))
			}
		}
		for _, p := range ft.pipelines {
			if p.stop != nil {
				p.stop()
			}
			p.checker.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var topics []string
		for _, p := range ft.pipelines {
			_, _ = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+p.name)
			topics = append(topics, p.topics()...)
		}
		_, _ = adm.DeleteTopics(ctx, append(topics, fleet.TopicPrefix+ft.group)...)
		_, _ = adm.DeleteGroups(ctx, ft.group)
		cl.Close()
	})
	for i := range n {
		p := &fleetPipeline{name: fmt.Sprintf("sv_fl_%s_%02d", suffix, i)}
		ft.pipelines = append(ft.pipelines, p)
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+p.name); err != nil {
			t.Fatal(err)
		}
		p.db = ft.open(p.name)
		p.workload = &chaos.Workload{DB: p.db, Database: p.name, Tables: tables, Rate: 3, Seed: uint64(i + 1)}
		if err := p.workload.Create(ctx, []int{300, 100, 30}); err != nil {
			t.Fatal(err)
		}
		del := "delete"
		resp, err := adm.CreateTopics(ctx, 3, 1, map[string]*string{"cleanup.policy": &del}, p.topics()...)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.Fatalf("create topics: %v", err)
		}
		yaml := chaos.Pipeline{Database: p.name, Guarantee: "exactly-once",
			SinkExtra: []string{"sink.transactional-id-prefix: sv_"}}.YAML(svc)
		if err := os.WriteFile(filepath.Join(dir, "pipelines", p.name+".yaml"), []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		if p.checker, err = chaos.NewChecker(svc.KafkaAddr, p.topics(), true); err != nil {
			t.Fatal(err)
		}
	}
	return ft
}

func (ft *fleetTest) open(db string) *sql.DB {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = ft.svc.AdminUser, ft.svc.AdminPassword, "tcp", ft.svc.MySQLAddr, db
	c.InterpolateParams = true
	conn, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		ft.t.Fatal(err)
	}
	ft.t.Cleanup(func() { conn.Close() })
	return conn
}

// start starts worker n, with its own state directory and status port.
func (ft *fleetTest) start(n int) *worker {
	ft.t.Helper()
	w := &worker{n: n, addr: "127.0.0.1:" + strconv.Itoa(basePort+n), done: make(chan struct{}),
		logPath: filepath.Join(ft.dir, fmt.Sprintf("worker-%d.log", n))}
	logFile, err := os.Create(w.logPath)
	if err != nil {
		ft.t.Fatal(err)
	}
	args := []string{"serve", "--group", ft.group, "--state", filepath.Join(ft.dir, fmt.Sprintf("state-%d", n)),
		"--status-addr", w.addr, filepath.Join(ft.dir, "pipelines")}
	if ft.useNetns {
		w.ns = ft.newNetns(n)
		w.addr = w.ns.nsIP + ":" + strconv.Itoa(basePort+n)
		args[6] = w.addr
		w.cmd = exec.Command("ip", append([]string{"netns", "exec", w.ns.name, ft.bin}, args...)...)
	} else {
		w.cmd = exec.Command(ft.bin, args...)
	}
	w.cmd.Env = append(os.Environ(), "INGEST_SECRET_PW="+ft.svc.CDCPassword)
	w.cmd.Stdout, w.cmd.Stderr = logFile, logFile
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := w.cmd.Start(); err != nil {
		ft.t.Fatal(err)
	}
	go func() {
		w.err = w.cmd.Wait()
		logFile.Close()
		close(w.done)
	}()
	ft.workers = append(ft.workers, w)
	return w
}

// failoverBound is the failover time docs/scaling.md promises under the default settings.
const failoverBound = 30 * time.Second

// withinBound fails the test when a failover took longer than failoverBound.
func (ft *fleetTest) withinBound(what string, took time.Duration) {
	ft.t.Helper()
	if took > failoverBound {
		ft.t.Errorf("FAILOVER %s took %v, over the bound of %v that docs/scaling.md states", what, took.Round(100*time.Millisecond), failoverBound)
	}
}

// waitLog waits until worker w's log has a line containing want and returns how long that
// took; the test fails when it has none within timeout.
func (ft *fleetTest) waitLog(w *worker, want string, timeout time.Duration) time.Duration {
	ft.t.Helper()
	began := time.Now()
	for {
		b, _ := os.ReadFile(w.logPath)
		if strings.Contains(string(b), want) {
			return time.Since(began)
		}
		if time.Since(began) > timeout {
			ft.t.Fatalf("worker %d: no %q in its log within %v:\n%s", w.n, want, timeout, w.logTail(30))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// live returns the workers that have not exited.
func (ft *fleetTest) live() []*worker {
	var out []*worker
	for _, w := range ft.workers {
		if !w.exited() {
			out = append(out, w)
		}
	}
	return out
}

func status(w *worker) (*fleet.Status, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + w.addr + "/status")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var st fleet.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return nil, err
	}
	return &st, nil
}

// owners returns, for the live workers but skip, each pipeline's owners (worker numbers)
// and whether every one of them streams; an error when a worker cannot be asked.
func (ft *fleetTest) owners(skip *worker) (map[string][]int, bool, error) {
	out := map[string][]int{}
	streaming := true
	for _, w := range ft.live() {
		if w == skip {
			continue
		}
		st, err := status(w)
		if err != nil {
			return nil, false, fmt.Errorf("worker %d: %w", w.n, err)
		}
		for _, p := range st.Owned {
			out[p.Name] = append(out[p.Name], w.n)
			streaming = streaming && p.Phase == fleet.PhaseStreaming
		}
	}
	return out, streaming, nil
}

// waitSettled waits until every pipeline is owned by exactly one live worker (skip, being
// stopped, left out) and streaming, and the extra conditions hold; it returns how long
// that took.
func (ft *fleetTest) waitSettled(what string, skip *worker, timeout time.Duration, extra ...func(map[string]int) bool) time.Duration {
	ft.t.Helper()
	began := time.Now()
	var last string
	for time.Since(began) < timeout {
		owners, streaming, err := ft.owners(skip)
		if err != nil {
			last = err.Error()
		} else if ok, why := ft.exactlyOnce(owners); !ok {
			last = why
		} else if !streaming {
			last = "not every pipeline streams yet"
		} else {
			single := map[string]int{}
			for name, ws := range owners {
				single[name] = ws[0]
			}
			done := true
			for _, f := range extra {
				done = done && f(single)
			}
			if done {
				return time.Since(began)
			}
			last = "waiting for the balance"
		}
		time.Sleep(200 * time.Millisecond)
	}
	ft.t.Fatalf("%s: not settled within %v: %s", what, timeout, last)
	return 0
}

func (ft *fleetTest) exactlyOnce(owners map[string][]int) (bool, string) {
	for _, p := range ft.pipelines {
		switch ws := owners[p.name]; len(ws) {
		case 1:
		case 0:
			return false, p.name + " is owned by no live worker"
		default:
			ft.t.Errorf("%s is owned by workers %v at once", p.name, ws)
			return false, p.name + " is owned twice"
		}
	}
	return true, ""
}

func (ft *fleetTest) count(owners map[string]int, w *worker) int {
	n := 0
	for _, o := range owners {
		if o == w.n {
			n++
		}
	}
	return n
}

func (ft *fleetTest) ownedBy(w *worker) []string {
	st, err := status(w)
	if err != nil {
		ft.t.Fatal(err)
	}
	var names []string
	for _, p := range st.Owned {
		names = append(names, p.Name)
	}
	return names
}

func (ft *fleetTest) busiest() *worker {
	var best *worker
	n := -1
	for _, w := range ft.live() {
		if k := len(ft.ownedBy(w)); k > n {
			best, n = w, k
		}
	}
	return best
}

// converge waits until the pipeline's topics equal its tables, then requires no duplicate
// and no lost change.
func (ft *fleetTest) converge(p *fleetPipeline, timeout time.Duration) {
	ft.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		if err := p.checker.Sync(ctx); err != nil {
			last = err
		} else if rep, err := p.checker.Compare(ctx, p.db, p.name, tables, chaos.CompareOptions{Optional: chaos.OptionalColumn}); err != nil {
			last = err
		} else if rep.Equal() {
			if err := rep.Err(chaos.NoDuplicates); err != nil {
				ft.t.Fatalf("%s: %v", p.name, err)
			}
			ft.t.Logf("%s: topics equal the tables: %s", p.name, rep)
			return
		} else {
			last = rep.Err(chaos.NoDuplicates)
		}
		time.Sleep(500 * time.Millisecond)
	}
	ft.t.Fatalf("%s: the topics did not converge to the tables within %v: %v", p.name, timeout, last)
}

// groupStatus runs `ingest status --group` and requires it to list the live workers.
func (ft *fleetTest) groupStatus() {
	ft.t.Helper()
	out, err := exec.Command(ft.bin, "status", "--group", ft.group, "--bootstrap", ft.svc.KafkaAddr, "-o", "json").Output()
	if err != nil {
		ft.t.Fatalf("ingest status: %v", err)
	}
	var g fleet.GroupState
	if err := json.Unmarshal(out, &g); err != nil {
		ft.t.Fatalf("ingest status: %v\n%s", err, out)
	}
	var names []string
	for _, m := range g.Members {
		names = append(names, m.Pipelines...)
	}
	sort.Strings(names)
	if len(g.Members) != len(ft.live()) || len(names) != len(ft.pipelines) {
		ft.t.Errorf("ingest status: %d members with %d pipelines, want %d and %d:\n%s", len(g.Members), len(names),
			len(ft.live()), len(ft.pipelines), out)
	}
}

func randHex() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
