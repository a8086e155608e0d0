package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// client is a measured process of the peers part (ingest or a JVM), with the resources
// of its process tree.
type client struct {
	cmd     *exec.Cmd
	logPath string
	start   time.Time
	pids    servicePIDs
	servers serverCPU // the servers' CPU at the start
	done    chan error
	exit    chan struct{} // closed when the process has exited

	mu      sync.Mutex
	peakRSS int64 // bytes: the highest sum of VmRSS over the tree seen, or the root's VmHWM
	tree    []int // the process and its descendants, refreshed every second
}

// usage is the CPU a client's tree and the servers had used at one moment.
type usage struct {
	cpu     time.Duration
	servers serverCPU
}

// startClient starts bin with args, its output into logPath, and polls its process tree.
func startClient(ctx context.Context, svc services, logPath string, env []string, bin string, args ...string) (*client, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr, cmd.Env = logFile, logFile, env
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = time.Minute
	p := &client{cmd: cmd, logPath: logPath, pids: readServicePIDs(svc), done: make(chan error, 1), exit: make(chan struct{})}
	p.servers = p.pids.cpu()
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p.tree = []int{cmd.Process.Pid}
	go p.poll()
	go func() {
		err := cmd.Wait()
		logFile.Close()
		close(p.exit)
		p.done <- err
	}()
	return p, nil
}

// poll samples the tree's resident set every 100 ms until the process exits.
func (p *client) poll() {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	root := p.cmd.Process.Pid
	for i := 0; ; i++ {
		if i%10 == 0 {
			tree := descendants(root)
			p.mu.Lock()
			p.tree = tree
			p.mu.Unlock()
		}
		p.mu.Lock()
		var sum int64
		for _, pid := range p.tree {
			sum += statusKB(pid, "VmRSS:") << 10
		}
		sum = max(sum, statusKB(root, "VmHWM:")<<10)
		p.peakRSS = max(p.peakRSS, sum)
		p.mu.Unlock()
		select {
		case <-p.exit:
			return
		case <-tick.C:
		}
	}
}

// peak is the highest resident set seen; once the process has exited, at least its own
// maximum resident set as the kernel counted it (a run shorter than the sampling interval
// is seen only there).
func (p *client) peak() int64 {
	p.mu.Lock()
	peak := p.peakRSS
	p.mu.Unlock()
	select {
	case <-p.exit:
		if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss<<10) // kilobytes on Linux
		}
	default:
	}
	return peak
}

// usage returns the CPU the tree and the servers have used since the start.
// A process that has exited counts with its own times (its children's are lost then).
func (p *client) usage() usage {
	u := usage{servers: p.pids.cpu().minus(p.servers)}
	select {
	case <-p.exit:
		if ps := p.cmd.ProcessState; ps != nil {
			u.cpu = ps.UserTime() + ps.SystemTime()
		}
		return u
	default:
	}
	for _, pid := range descendants(p.cmd.Process.Pid) {
		u.cpu += processCPU(pid)
	}
	if u.cpu == 0 { // gone from /proc: it exited, and Wait is about to say so
		select {
		case <-p.exit:
			if ps := p.cmd.ProcessState; ps != nil {
				u.cpu = ps.UserTime() + ps.SystemTime()
			}
		case <-time.After(time.Second):
		}
	}
	return u
}

// exited reports whether the process has exited, with its error.
func (p *client) exited() (bool, error) {
	select {
	case err := <-p.done:
		p.done <- err
		return true, err
	default:
		return false, nil
	}
}

// wait waits for the process to exit on its own; an exit status other than 0 is an error.
func (p *client) wait(timeout time.Duration) error {
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			return fmt.Errorf("%s: %w\n%s", p.cmd.Path, err, tail(p.logPath, 15))
		}
		return nil
	case <-time.After(timeout):
		_ = p.stop()
		return fmt.Errorf("%s still running after %v; stopped (log: %s)", p.cmd.Path, timeout, p.logPath)
	}
}

// stop sends SIGTERM and waits for the process to exit (a minute, then SIGKILL). An exit
// by the signal is no error.
func (p *client) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		var ee *exec.ExitError
		if err != nil && errors.As(err, &ee) && (ee.ExitCode() == 143 || !ee.Exited()) {
			return nil
		}
		return err
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.exit
		return fmt.Errorf("%s did not stop within a minute of SIGTERM; killed (log: %s)", p.cmd.Path, p.logPath)
	}
}

// descendants returns root and every process below it, from /proc/PID/stat.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return []int{root}
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid := parentPID(pid); ppid > 0 {
			children[ppid] = append(children[ppid], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// parentPID returns the parent of pid from /proc/PID/stat (0 if unknown).
func parentPID(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// statusKB returns a "kB" line of /proc/PID/status (0 if unknown).
func statusKB(pid int, key string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb
			}
		}
	}
	return 0
}

// arrival is what a client's run put into its topic.
type arrival struct {
	Records    int
	Tombstones int
	Bytes      int64     // key plus value
	First      time.Time // the earliest record's LogAppendTime
	Last       time.Time // the latest
}

// watch reads topic from the start while a client runs, counting the records stamped at or
// after since, until want of them have arrived; it fails when the client exits first or
// after timeout.
func (k *kafka) watch(ctx context.Context, topic string, since time.Time, want int, timeout time.Duration, p *client) (arrival, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		return arrival{}, err
	}
	defer cl.Close()
	since = since.Truncate(time.Millisecond)
	deadline := time.Now().Add(timeout)
	var a arrival
	var exitedAt time.Time
	for a.Records < want {
		if time.Now().After(deadline) {
			return a, fmt.Errorf("%d of %d records in %s after %v (log: %s)", a.Records, want, topic, timeout, p.logPath)
		}
		// A client that exited on its own with status 0 (ingest --until-caught-up) may have
		// written records not read yet: they are read for up to 30 s more.
		if done, err := p.exited(); done && (err != nil || exitedAt.IsZero()) {
			if err != nil {
				return a, fmt.Errorf("%s exited (%v) with %d of %d records in %s\n%s", p.cmd.Path, err, a.Records, want, topic, tail(p.logPath, 15))
			}
			exitedAt = time.Now()
		}
		if !exitedAt.IsZero() && time.Since(exitedAt) > 30*time.Second {
			return a, fmt.Errorf("%s exited with %d of %d records in %s\n%s", p.cmd.Path, a.Records, want, topic, tail(p.logPath, 15))
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return a, err
		}
		if errs := fs.Errors(); len(errs) > 0 && !errors.Is(errs[0].Err, context.DeadlineExceeded) {
			return a, fmt.Errorf("read %s: %w", topic, errs[0].Err)
		}
		fs.EachRecord(func(rec *kgo.Record) {
			if rec.Timestamp.Before(since) {
				return
			}
			a.Records++
			a.Bytes += int64(len(rec.Key) + len(rec.Value))
			if rec.Value == nil {
				a.Tombstones++
			}
			if a.First.IsZero() || rec.Timestamp.Before(a.First) {
				a.First = rec.Timestamp
			}
			if rec.Timestamp.After(a.Last) {
				a.Last = rec.Timestamp
			}
		})
	}
	return a, nil
}

// execOutput runs a command and returns its output and error output.
func execOutput(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}
