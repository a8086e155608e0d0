package chaos

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// BuildIngest builds cmd/ingest of the module at repo into dir and returns the binary's path.
// race adds the race detector.
func BuildIngest(ctx context.Context, repo, dir string, race bool) (string, error) {
	bin := filepath.Join(dir, "ingest")
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/ingest")...)
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/ingest: %w\n%s", err, out)
	}
	return bin, nil
}

// Pipeline is the definition of a pipeline under test: every table of one database into the
// topics <database>.<table>.
type Pipeline struct {
	// Database is the source database; it is also pipeline.name (so the state, the
	// transactional id and the metrics are the test's own).
	Database string
	// Guarantee is sink.delivery-guarantee: at-least-once or exactly-once.
	Guarantee string
	// ChunkSize is scan.incremental.snapshot.chunk.size (0: the default).
	ChunkSize int
	// Parallelism is pipeline.parallelism (0: the default).
	Parallelism int
	// SourceExtra and SinkExtra are more option lines for the blocks ("key: value" each).
	SourceExtra, SinkExtra []string
}

// YAML renders the pipeline for services svc; the password is the secret "pw".
func (p Pipeline) YAML(svc *Services) string {
	host, port, _ := strings.Cut(svc.MySQLAddr, ":")
	var b strings.Builder
	fmt.Fprintf(&b, "source:\n  type: mysql\n  hostname: %s\n  port: %s\n  username: %s\n", host, port, svc.CDCUser)
	fmt.Fprintf(&b, "  password: ${secret_values.pw}\n  tables: %s.\\.*\n  heartbeat.interval: 1s\n", p.Database)
	if p.ChunkSize > 0 {
		fmt.Fprintf(&b, "  scan.incremental.snapshot.chunk.size: %d\n", p.ChunkSize)
	}
	for _, l := range p.SourceExtra {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	fmt.Fprintf(&b, "sink:\n  type: upsert-kafka\n  properties.bootstrap.servers: %s\n", svc.KafkaAddr)
	fmt.Fprintf(&b, "  sink.delivery-guarantee: %s\n", p.Guarantee)
	for _, l := range p.SinkExtra {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	fmt.Fprintf(&b, "pipeline:\n  name: %s\n", p.Database)
	if p.Parallelism > 0 {
		fmt.Fprintf(&b, "  parallelism: %d\n", p.Parallelism)
	}
	return b.String()
}

// Ingest runs `ingest apply` for one pipeline file and state directory, one process at a time.
type Ingest struct {
	// Bin is the ingest binary.
	Bin string
	// File is the pipeline file.
	File string
	// StateDir is --state.
	StateDir string
	// LogDir receives one log file (stderr and stdout) per process.
	LogDir string
	// Env is added to the processes' environment (INGEST_SECRET_PW=…).
	Env []string

	runs int
}

// NewIngest writes the pipeline file into dir and returns an Ingest whose state and logs are
// under dir too.
func NewIngest(bin, dir string, p Pipeline, svc *Services) (*Ingest, error) {
	file := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(file, []byte(p.YAML(svc)), 0o600); err != nil {
		return nil, fmt.Errorf("ingest: write the pipeline: %w", err)
	}
	in := &Ingest{Bin: bin, File: file, StateDir: filepath.Join(dir, "state"), LogDir: filepath.Join(dir, "logs"),
		Env: []string{"INGEST_SECRET_PW=" + svc.CDCPassword}}
	if err := os.MkdirAll(in.LogDir, 0o755); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	return in, nil
}

// StartOptions are the flags of one `ingest apply`.
type StartOptions struct {
	// UntilCaughtUp adds --until-caught-up.
	UntilCaughtUp bool
	// NoMetrics leaves --metrics-addr out (by default the process serves its metrics on a
	// free loopback port).
	NoMetrics bool
}

// Start starts `ingest apply`.
func (in *Ingest) Start(opts StartOptions) (*Process, error) {
	var addr string
	if !opts.NoMetrics {
		var err error
		if addr, err = freeAddr(); err != nil {
			return nil, err
		}
	}
	in.runs++
	logPath := filepath.Join(in.LogDir, fmt.Sprintf("run-%03d.log", in.runs))
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	args := []string{"apply", in.File, "--state", in.StateDir, "--log-format", "json"}
	if addr != "" {
		args = append(args, "--metrics-addr", addr)
	}
	if opts.UntilCaughtUp {
		args = append(args, "--until-caught-up")
	}
	cmd := exec.Command(in.Bin, args...)
	cmd.Env = append(os.Environ(), in.Env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("ingest: start: %w", err)
	}
	p := &Process{cmd: cmd, MetricsAddr: addr, LogPath: logPath, Run: in.runs, Started: time.Now(), done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// freeAddr returns a loopback address with a port that is free now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("ingest: find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Process is one running (or finished) `ingest apply`.
type Process struct {
	// MetricsAddr is the --metrics-addr of the process ("" for none).
	MetricsAddr string
	// LogPath is the file holding its output.
	LogPath string
	// Run numbers the processes of one Ingest from 1.
	Run int
	// Started is when it was started.
	Started time.Time

	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
}

// Pid returns the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitCode returns the exit code of an exited process (-1 when a signal ended it).
func (p *Process) ExitCode() int { return p.cmd.ProcessState.ExitCode() }

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Process) Kill() error {
	if p.Exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("ingest: SIGKILL pid %d: %w", p.Pid(), err)
	}
	<-p.done
	return nil
}

// Terminate sends SIGTERM and waits up to timeout for the exit; it returns the exit code.
// After the timeout the process is killed and an error returned.
func (p *Process) Terminate(timeout time.Duration) (int, error) {
	if !p.Exited() {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return 0, fmt.Errorf("ingest: SIGTERM pid %d: %w", p.Pid(), err)
		}
	}
	return p.Wait(timeout)
}

// Wait waits up to timeout for the process to exit by itself and returns its exit code. After
// the timeout the process gets SIGQUIT (the Go runtime writes every goroutine's stack to the
// log), then SIGKILL, and an error is returned.
func (p *Process) Wait(timeout time.Duration) (int, error) {
	select {
	case <-p.done:
		return p.ExitCode(), nil
	case <-time.After(timeout):
	}
	_ = p.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.Kill()
	}
	return -1, fmt.Errorf("ingest: run %d did not exit within %v (SIGQUIT: goroutine dump in %s)", p.Run, timeout, p.LogPath)
}

// RSS returns the resident set size of the running process in bytes (from /proc).
func (p *Process) RSS() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		return 0, fmt.Errorf("ingest: rss: %w", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("ingest: rss %q: %w", line, err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("ingest: no VmRSS in /proc status")
}

// Log returns the process's output so far.
func (p *Process) Log() string {
	b, _ := os.ReadFile(p.LogPath)
	return string(b)
}

// LogTail returns the last n lines of the process's output.
func (p *Process) LogTail(n int) string {
	lines := strings.Split(strings.TrimRight(p.Log(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// LogContains reports whether the output so far contains s.
func (p *Process) LogContains(s string) bool { return strings.Contains(p.Log(), s) }

// Metrics scrapes the process's metrics endpoint.
func (p *Process) Metrics(ctx context.Context) (Metrics, error) {
	if p.MetricsAddr == "" {
		return nil, errors.New("ingest: the process serves no metrics")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.MetricsAddr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ingest: scrape metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("ingest: scrape metrics: %s", resp.Status)
	}
	return ParseMetrics(resp.Body)
}

// Metrics are scraped samples: the series ("name{labels}" as exposed) and their values.
type Metrics map[string]float64

// ParseMetrics reads the Prometheus text format (the sample lines; comments are skipped).
func ParseMetrics(r io.Reader) (Metrics, error) {
	m := Metrics{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, fmt.Errorf("metrics: malformed line %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics: line %q: %w", line, err)
		}
		m[line[:i]] = v
	}
	return m, sc.Err()
}

// Sum returns the sum of the series of metric name whose labels contain every one of
// labels (`table="db.t"`), and whether there was any.
func (m Metrics) Sum(name string, labels ...string) (float64, bool) {
	var sum float64
	found := false
	for series, v := range m {
		n, rest, _ := strings.Cut(series, "{")
		if n != name || !containsAll(rest, labels) {
			continue
		}
		sum += v
		found = true
	}
	return sum, found
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// Errors returns the log lines of level ERROR of the process so far.
func (p *Process) Errors() []string {
	var out []string
	for line := range strings.SplitSeq(p.Log(), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			out = append(out, line)
		}
	}
	return out
}
