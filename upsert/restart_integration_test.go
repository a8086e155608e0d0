//go:build integration

package upsert

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/ingestkit/ingest/internal/testenv"
)

// TestBrokerRestart restarts the broker while an at-least-once and an exactly-once sink
// are writing, and checks that nothing is lost: at-least-once keeps every change,
// exactly-once shows each change once to read_committed. A sink that gives up with a
// retryable error is restarted from its last checkpoint, as the runner does.
//
// By default the broker is a private one that the test starts. With
// INGEST_TEST_DISRUPTIVE=1 it is THE SHARED TEST BROKER, restarted with
// scripts/services down kafka && up kafka: other tests using it at the same time fail.
func TestBrokerRestart(t *testing.T) {
	restart := func() {
		services(t, "down", "kafka")
		time.Sleep(2 * time.Second)
		services(t, "up", "kafka")
	}
	if os.Getenv("INGEST_TEST_DISRUPTIVE") != "1" {
		b := startPrivateBroker(t, newTestPKI(t, nil, nil))
		t.Setenv("INGEST_TEST_KAFKA", b.plainAddr())
		restart = func() {
			b.stop(t)
			time.Sleep(2 * time.Second)
			b.start(t)
		}
	}
	const n = 2000
	alo := testenv.Topic(t, 3, nil)
	eos := testenv.Topic(t, 3, nil)
	state := testenv.Name(t) + "_state"
	deleteTopic(t, state)

	var wg sync.WaitGroup
	progress := make(chan int, 2*n)
	errs := make(chan error, 2)
	for _, g := range []Guarantee{AtLeastOnce, ExactlyOnce} {
		cfg := baseConfig(t, alo, g)
		if g == ExactlyOnce {
			cfg = baseConfig(t, eos, g)
			cfg.StateTopic = state
			cfg.TransactionInterval = 100 * time.Millisecond
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- runResilient(t, cfg, n, progress)
		}()
	}
	// Restart the broker once both have made progress.
	for seen := 0; seen < 200; seen++ {
		<-progress
	}
	restart()
	t.Log("broker restarted")
	go func() {
		for range progress {
		}
	}()
	wg.Wait()
	close(progress)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	recs := readAll(t, alo, false)
	seen := map[[2]int]bool{}
	for _, r := range recs {
		v := decodeSeq(t, r)
		seen[[2]int{v.Seq, v.J}] = true
	}
	if len(seen) != 5*n {
		t.Errorf("at-least-once: %d distinct changes of %d", len(seen), 5*n)
	}
	checkExactlyOnce(t, eos, n)
}

// runResilient writes transactions 0..n-1, restarting the sink from its last checkpoint
// after a retryable error, and sends each acknowledged position to progress.
func runResilient(t *testing.T, cfg Config, n int, progress chan<- int) error {
	var last int
	var mu sync.Mutex
	cfg.Acked = func(cp Checkpoint) {
		p := positionOf(t, &cp)
		mu.Lock()
		last = p
		mu.Unlock()
		progress <- p
	}
	for attempt := 0; ; attempt++ {
		s, err := New(cfg)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cp, err := s.Start(ctx)
		if err == nil {
			mu.Lock()
			start := last
			mu.Unlock()
			if cfg.Guarantee == ExactlyOnce {
				start = positionOf(t, cp)
			}
			err = s.Run(ctx, feed(ctx, start, n))
		}
		cancel()
		if err == nil || !IsRetryable(err) || attempt == 10 {
			return err
		}
		t.Logf("%s: restarting after: %v", cfg.Guarantee, err)
		time.Sleep(time.Second)
	}
}

// feed sends transactions start..n-1 slowly and closes the channel.
func feed(ctx context.Context, start, n int) <-chan Input {
	in := make(chan Input, 8)
	go func() {
		defer close(in)
		for i := start; i < n; i++ {
			select {
			case in <- seqTxn(i):
			case <-ctx.Done():
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return in
}

func services(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("../scripts/services", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/services %v: %v\n%s", args, err, out)
	}
	t.Logf("scripts/services %v: %s", args, out)
}
