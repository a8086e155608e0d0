//go:build integration

package upsert

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestkit/ingest/internal/testenv"
)

// The helper writer runs in a child process (the test binary itself, with these
// variables set) so that the parent can kill it with SIGKILL in the middle of its work.
const (
	helperEnv   = "INGEST_UPSERT_HELPER" // the guarantee: at-least-once or exactly-once
	helperTopic = "INGEST_UPSERT_HELPER_TOPIC"
	helperState = "INGEST_UPSERT_HELPER_STATE"
	helperName  = "INGEST_UPSERT_HELPER_PIPELINE"
	helperStart = "INGEST_UPSERT_HELPER_START" // first transaction (at-least-once)
	crashTxns   = 3000
)

// TestHelperWriter is not a test: it is the child process of the crash tests. It writes
// the workload's transactions slowly and prints "acked <position>" for every checkpoint.
func TestHelperWriter(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process for the crash tests")
	}
	g, err := ParseGuarantee(mode)
	if err != nil {
		t.Fatal(err)
	}
	cfg := baseConfig(t, os.Getenv(helperTopic), g)
	cfg.Pipeline = os.Getenv(helperName)
	cfg.StateTopic = os.Getenv(helperState)
	cfg.TransactionInterval = 50 * time.Millisecond
	cfg.Acked = func(cp Checkpoint) { fmt.Printf("acked %s\n", cp.Position) }
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cp, err := s.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := positionOf(t, cp)
	if g != ExactlyOnce {
		start, _ = strconv.Atoi(os.Getenv(helperStart))
	}
	fmt.Printf("started %d\n", start)
	in := make(chan Input, 8)
	go func() {
		for i := start; i < crashTxns; i++ {
			in <- seqTxn(i)
			time.Sleep(time.Millisecond)
		}
		close(in)
	}()
	if err := s.Run(ctx, in); err != nil {
		t.Fatal(err)
	}
}

// startHelper starts the helper writer and returns a channel of the positions it acks;
// the channel closes when the helper's output ends.
func startHelper(t *testing.T, mode, topic, state, pipeline string, start int) (*exec.Cmd, <-chan int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperTopic+"="+topic, helperState+"="+state,
		helperName+"="+pipeline, helperStart+"="+strconv.Itoa(start))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	acked := make(chan int, 1024)
	go func() {
		defer close(acked)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
				n, _ := strconv.Atoi(p)
				acked <- n
			}
		}
	}()
	return cmd, acked
}

// killAfter waits until the helper acked at least min, kills it with SIGKILL and returns
// the last position it acked.
func killAfter(t *testing.T, cmd *exec.Cmd, acked <-chan int, min int) int {
	t.Helper()
	last := 0
	timeout := time.After(2 * time.Minute)
	for last < min {
		select {
		case p, ok := <-acked:
			if !ok {
				t.Fatalf("helper ended after acking %d", last)
			}
			last = p
		case <-timeout:
			t.Fatalf("helper acked only %d in 2 minutes", last)
		}
	}
	// A checkpoint is printed right after a commit; wait a little so that the kill lands
	// in the middle of the next transaction, after some of its records were sent.
	time.Sleep(30 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for p := range acked { // lines printed before the kill
		last = p
	}
	if last >= crashTxns {
		t.Fatalf("helper finished (%d) before it was killed; slow it down", last)
	}
	return last
}

// TestExactlyOnceAfterSIGKILL kills an exactly-once writer in the middle of its
// transactions, restarts it, and checks that a read_committed consumer sees each change
// exactly once, in order per key.
func TestExactlyOnceAfterSIGKILL(t *testing.T) {
	topic := testenv.Topic(t, 3, map[string]*string{"cleanup.policy": ptr("compact")})
	state := testenv.Name(t) + "_state"
	deleteTopic(t, state)
	pipeline := testenv.Name(t)
	cmd, acked := startHelper(t, "exactly-once", topic, state, pipeline, 0)
	killed := killAfter(t, cmd, acked, 300)
	t.Logf("killed the writer after it committed position %d", killed)

	cfg := baseConfig(t, topic, ExactlyOnce)
	cfg.Pipeline, cfg.StateTopic = pipeline, state
	cfg.TransactionInterval = 50 * time.Millisecond
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := s.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := positionOf(t, cp)
	if start < killed {
		t.Fatalf("restart read position %d, but %d was committed", start, killed)
	}
	in := make(chan Input, 64)
	go func() {
		defer close(in)
		for i := start; i < crashTxns; i++ {
			in <- seqTxn(i)
		}
	}()
	if err := s.Run(ctx, in); err != nil {
		t.Fatal(err)
	}
	checkExactlyOnce(t, topic, crashTxns)
	if all := readAll(t, topic, false); len(all) > 5*crashTxns {
		t.Logf("the killed writer left %d records of its open transaction, aborted", len(all)-5*crashTxns)
	} else {
		t.Log("the kill fell between two transactions this time")
	}
}

// TestAtLeastOnceAfterSIGKILL kills an at-least-once writer, restarts from the last
// position it acknowledged (what the runner stores) and checks that nothing is lost and
// that every key ends with its latest value.
func TestAtLeastOnceAfterSIGKILL(t *testing.T) {
	topic := testenv.Topic(t, 3, map[string]*string{"cleanup.policy": ptr("compact")})
	pipeline := testenv.Name(t)
	cmd, acked := startHelper(t, "at-least-once", topic, "", pipeline, 0)
	killed := killAfter(t, cmd, acked, 300)
	t.Logf("killed the writer after it acked position %d", killed)

	cfg := baseConfig(t, topic, AtLeastOnce)
	var inputs []Input
	for i := killed; i < crashTxns; i++ {
		inputs = append(inputs, seqTxn(i))
	}
	if err := runSink(t, cfg, inputs); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, topic, false)
	seen := map[[2]int]bool{}
	final := map[int]int{}
	for _, r := range recs {
		v := decodeSeq(t, r)
		seen[[2]int{v.Seq, v.J}] = true
		final[v.ID] = v.Seq
	}
	want := map[int]int{}
	for i := range crashTxns {
		for j := range 5 {
			if !seen[[2]int{i, j}] {
				t.Fatalf("change %d/%d lost", i, j)
			}
			want[(i*7+j)%seqKeys] = i
		}
	}
	for k, seq := range want {
		if final[k] != seq {
			t.Errorf("key %d ends at seq %d, want %d", k, final[k], seq)
		}
	}
	t.Logf("%d records for %d changes", len(recs), 5*crashTxns)
}
