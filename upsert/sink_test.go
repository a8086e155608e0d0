package upsert

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ingestkit/ingest/change"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestBuffer(t *testing.T) {
	b := newBuffer(3, time.Second)
	now := time.Unix(100, 0)
	rec := func(topic, key, value string) outRecord {
		r := &kgo.Record{Topic: topic, Key: []byte(key)}
		if value != "" {
			r.Value = []byte(value)
		}
		return outRecord{rec: r}
	}
	if b.add(rec("t", "a", "1"), now) || b.add(rec("t", "b", "1"), now.Add(time.Millisecond)) {
		t.Fatal("full too early")
	}
	if b.add(rec("t", "a", "2"), now) || b.add(rec("t", "a", ""), now) { // the delete replaces the upsert
		t.Fatal("a replaced key counted as a new row")
	}
	if b.due(now.Add(999 * time.Millisecond)) {
		t.Error("due before the interval")
	}
	if !b.due(now.Add(time.Second)) {
		t.Error("not due after the interval")
	}
	if !b.add(rec("u", "a", "1"), now) {
		t.Error("not full at 3 distinct (topic, key)")
	}
	got := b.take()
	var s []string
	for _, r := range got {
		s = append(s, fmt.Sprintf("%s/%s=%q", r.rec.Topic, r.rec.Key, r.rec.Value))
	}
	if want := `t/a="" t/b="1" u/a="1"`; strings.Join(s, " ") != want {
		t.Errorf("took %s, want %s", strings.Join(s, " "), want)
	}
	if b.len() != 0 || b.replaced != 2 || b.due(now.Add(time.Hour)) {
		t.Errorf("after take: len %d, replaced %d", b.len(), b.replaced)
	}
}

func TestTracker(t *testing.T) {
	tr := newTracker()
	cp := func(s string) *Checkpoint { return &Checkpoint{Position: []byte(s)} }
	u1a, u1b := tr.add(), tr.add()
	tr.seal(cp("1"))
	u2 := tr.add()
	tr.seal(cp("2"))
	tr.seal(cp("3")) // a heartbeat: no records
	u2.done(nil)     // a later unit completes first
	if got := tr.release(); got != nil {
		t.Fatalf("released %s before unit 1 completed", got.Position)
	}
	u1a.done(nil)
	u1b.done(nil)
	if got := tr.release(); got == nil || string(got.Position) != "3" {
		t.Fatalf("released %v, want 3", got)
	}
	if tr.outstanding() {
		t.Error("outstanding after everything completed")
	}
	u4 := tr.add()
	tr.seal(cp("4"))
	u5 := tr.add()
	tr.seal(cp("5"))
	u4.done(errors.New("boom"))
	u5.done(nil)
	if got := tr.release(); got != nil {
		t.Errorf("released %s past a failed record", got.Position)
	}
	select {
	case <-tr.notify:
	default:
		t.Error("no notification")
	}
}

// TestTrackerConcurrentAcks acknowledges records on another goroutine while units are still
// being filled and sealed (as franz-go's promises do), some before their unit's seal.
func TestTrackerConcurrentAcks(t *testing.T) {
	tr := newTracker()
	acks := make(chan *unit, 64)
	go func() {
		for u := range acks {
			u.done(nil)
		}
	}()
	const units, perUnit = 200, 50
	for i := range units {
		for range perUnit {
			acks <- tr.add()
		}
		tr.seal(&Checkpoint{Position: []byte(fmt.Sprint(i))})
	}
	close(acks)
	deadline := time.After(5 * time.Second)
	for {
		if cp := tr.release(); cp != nil && string(cp.Position) == fmt.Sprint(units-1) {
			break
		}
		select {
		case <-tr.notify:
		case <-deadline:
			t.Fatal("the last checkpoint was never released")
		}
	}
	if tr.outstanding() {
		t.Error("outstanding after every record was acknowledged")
	}
}

func TestTrackerPending(t *testing.T) {
	tr := newTracker()
	tr.pendingCheckpoint(&Checkpoint{Position: []byte("1")})
	u := tr.add()
	tr.sealPending()
	u.done(nil)
	if got := tr.release(); got == nil || string(got.Position) != "1" {
		t.Fatalf("released %v", got)
	}
	tr.sealPending() // nothing waiting: no new unit
	if len(tr.units) != 0 {
		t.Error("sealPending sealed without a checkpoint")
	}
}

func TestConfigCheck(t *testing.T) {
	p := func(kv ...string) *Properties {
		pr, err := ParseProperties(props(kv...))
		if err != nil {
			t.Fatal(err)
		}
		return pr
	}
	route := func(change.TableID) []string { return []string{"t"} }
	bad := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no pipeline", Config{Properties: p(), Topics: route}, "pipeline name is required"},
		{"no properties", Config{Pipeline: "p", Topics: route}, "properties are required"},
		{"no router", Config{Pipeline: "p", Properties: p()}, "topic router is required"},
		{"half buffer", Config{Pipeline: "p", Properties: p(), Topics: route, BufferMaxRows: 10}, "must be set together"},
		{"acks 1 at least once", Config{Pipeline: "p", Properties: p("acks", "1"), Topics: route}, "at-least-once needs acks=all"},
		{"no idempotence exactly once", Config{Pipeline: "p", Properties: p("enable.idempotence", "false"), Topics: route, Guarantee: ExactlyOnce},
			"exactly-once needs the idempotent producer"},
		{"idempotence none", Config{Pipeline: "p", Properties: p("enable.idempotence", "true"), Topics: route, Guarantee: None},
			"none does not use idempotence"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestClientOpts checks the producer options each guarantee gives.
func TestClientOpts(t *testing.T) {
	route := func(change.TableID) []string { return []string{"t"} }
	tests := []struct {
		g          Guarantee
		props      []string
		acks       kgo.Acks
		noIdem     bool
		txnID      string
		txnTimeout time.Duration
	}{
		{AtLeastOnce, nil, kgo.AllISRAcks(), false, "", 0},
		{None, nil, kgo.LeaderAck(), true, "", 0},
		{None, []string{"acks", "0"}, kgo.NoAck(), true, "", 0},
		{ExactlyOnce, []string{"transaction.timeout.ms", "60000"}, kgo.AllISRAcks(), false, "ingest-pipe", time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.g.String(), func(t *testing.T) {
			pr, err := ParseProperties(props(tc.props...))
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(Config{Pipeline: "pipe", Properties: pr, Topics: route, Guarantee: tc.g})
			if err != nil {
				t.Fatal(err)
			}
			cl := client(t, s.clientOpts())
			want(t, cl, kgo.RequiredAcks, tc.acks)
			want(t, cl, kgo.DisableIdempotentWrite, tc.noIdem)
			if tc.txnID != "" {
				want(t, cl, kgo.TransactionalID, tc.txnID)
				want(t, cl, kgo.TransactionTimeout, tc.txnTimeout)
			}
			want(t, cl, kgo.RecordDeliveryTimeout, time.Duration(0)) // unlimited: nothing is dropped
		})
	}
}

func TestParseGuarantee(t *testing.T) {
	for _, g := range []Guarantee{AtLeastOnce, ExactlyOnce, None} {
		if got, err := ParseGuarantee(g.String()); err != nil || got != g {
			t.Errorf("ParseGuarantee(%s) = %v, %v", g, got, err)
		}
	}
	if _, err := ParseGuarantee("exactly_once"); err == nil {
		t.Error("no error for exactly_once")
	}
}

func TestErrors(t *testing.T) {
	table := change.TableID{DB: "db", Table: "t"}
	e := wrap("produce", "topic", table, []byte(`{"id":1}`), kerr.NotEnoughReplicas)
	if !IsRetryable(e) || !strings.HasPrefix(e.Error(), `upsert: produce topic topic table db.t key "{\"id\":1}": NOT_ENOUGH_REPLICAS`) {
		t.Errorf("retryable broker error: %v (retryable %v)", e, IsRetryable(e))
	}
	wrapped := fmt.Errorf("runner: %w", wrap("commit", "", tableNone, nil, kerr.ProducerFenced))
	if IsRetryable(wrapped) || !errors.Is(wrapped, ErrFenced) || !errors.Is(wrapped, kerr.ProducerFenced) {
		t.Errorf("fenced: %v", wrapped)
	}
	if IsRetryable(wrap("produce", "t", table, nil, kerr.MessageTooLarge)) {
		t.Error("MESSAGE_TOO_LARGE is retryable")
	}
	if !IsRetryable(wrap("produce", "t", table, nil, kgo.ErrRecordTimeout)) {
		t.Error("a record timeout is not retryable")
	}
	if IsRetryable(errors.New("plain")) {
		t.Error("a plain error is retryable")
	}
}

func TestRecordSize(t *testing.T) {
	r := &kgo.Record{Key: make([]byte, 10), Value: make([]byte, 1000),
		Headers: []kgo.RecordHeader{{Key: "namespace", Value: []byte{}}}}
	if got := recordSize(r); got < 1010+61 || got > 1010+61+100 {
		t.Errorf("recordSize = %d", got)
	}
	for n, want := range map[int]int{0: 1, 63: 1, 64: 2, 8191: 2, 8192: 3} {
		if got := varintLen(n); got != want {
			t.Errorf("varintLen(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestTransactionTimedOut: a fencing error of a transaction older than
// transaction.timeout.ms is the coordinator's timeout, retryable; a younger one is another
// writer's fence, fatal.
func TestTransactionTimedOut(t *testing.T) {
	epoch := wrap("produce", "t", tableNone, nil, kerr.InvalidProducerEpoch)
	tests := []struct {
		name    string
		age     time.Duration
		timeout time.Duration // properties.transaction.timeout.ms; 0: franz-go's 40s
		err     error
		timed   bool
	}{
		{"older than the timeout", 11 * time.Second, 10 * time.Second, epoch, true},
		{"older than the default", 41 * time.Second, 0, epoch, true},
		{"younger: another writer", 2 * time.Second, 10 * time.Second, epoch, false},
		{"producer fenced", time.Minute, 10 * time.Second, wrap("commit", "", tableNone, nil, kerr.ProducerFenced), true},
		{"not a fence", time.Minute, 10 * time.Second, wrap("produce", "t", tableNone, nil, kerr.MessageTooLarge), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Sink{cfg: Config{Properties: &Properties{TransactionTimeout: tc.timeout}},
				txn: &txnState{open: true, since: time.Now().Add(-tc.age)}}
			err := s.timedOut(tc.err)
			if got := errors.Is(err, ErrTransactionTimedOut); got != tc.timed {
				t.Fatalf("timed out %v, want %v: %v", got, tc.timed, err)
			}
			if IsRetryable(err) != tc.timed {
				t.Errorf("retryable %v, want %v", IsRetryable(err), tc.timed)
			}
			if tc.timed && !errors.Is(err, kerr.InvalidProducerEpoch) && !errors.Is(err, kerr.ProducerFenced) {
				t.Errorf("the broker's error is lost: %v", err)
			}
		})
	}
}
