package runner

import (
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ingestkit/ingest/metrics"
	"github.com/ingestkit/ingest/upsert"
)

// TestLagClock: the lag follows the oldest transaction handed to the sink and not yet
// acknowledged, however much the sink has taken (a broker that is down: the lag rises with
// the clock), and, once everything is acknowledged, stays at the lag of the last
// acknowledgement (an idle source is not behind).
func TestLagClock(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type step struct {
		do                string // "seen", "acked" (txns, commit), "restarted"
		txns              int
		commit, now       int
		wantLag, wantWait int
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"acknowledged at once", []step{
			{do: "seen", commit: 0, now: 1, wantLag: 1},
			{do: "acked", txns: 1, commit: 0, now: 2, wantLag: 2},
			{do: "none", now: 60, wantLag: 2}, // idle: not behind
		}},
		{"broker down: the lag rises every second", []step{
			{do: "seen", commit: 10, now: 10},
			{do: "seen", commit: 11, now: 11, wantLag: 1, wantWait: 1},
			{do: "none", now: 40, wantLag: 30, wantWait: 30},
			{do: "none", now: 41, wantLag: 31, wantWait: 31},
			{do: "restarted", now: 42, wantLag: 32, wantWait: 32},
			{do: "seen", commit: 10, now: 50, wantLag: 40, wantWait: 40}, // the same transaction again
			{do: "acked", txns: 1, commit: 10, now: 51, wantLag: 41},
		}},
		{"a partial acknowledgement moves the oldest forward", []step{
			{do: "seen", commit: 0, now: 0},
			{do: "seen", commit: 5, now: 5, wantLag: 5, wantWait: 5},
			{do: "seen", commit: 6, now: 6, wantLag: 6, wantWait: 6},
			{do: "acked", txns: 2, commit: 5, now: 7, wantLag: 2},
			{do: "acked", txns: 1, commit: 6, now: 8, wantLag: 2},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c lagClock
			for i, s := range tc.steps {
				now := at(s.now)
				switch s.do {
				case "seen":
					c.seen(at(s.commit), now)
				case "acked":
					c.acked(upsert.Checkpoint{Ends: s.txns, CommitTime: at(s.commit)}, now)
				case "restarted":
					c.restarted()
				}
				if got := c.lag(now); got != time.Duration(s.wantLag)*time.Second {
					t.Errorf("step %d (%s): lag %v, want %ds", i, s.do, got, s.wantLag)
				}
				if got := c.waiting(now); got != time.Duration(s.wantWait)*time.Second {
					t.Errorf("step %d (%s): waiting %v, want %ds", i, s.do, got, s.wantWait)
				}
			}
		})
	}
}

// TestFollowLagSetsTheGaugeEverySecond: the gauge follows the clock while nothing is
// acknowledged.
func TestFollowLagSetsTheGaugeEverySecond(t *testing.T) {
	r := &run{m: metrics.New("lag-test"), log: slog.New(slog.DiscardHandler)}
	r.lag.seen(time.Now().Add(-10*time.Second), time.Now())
	done := make(chan struct{})
	go r.followLag(done)
	time.Sleep(1100 * time.Millisecond)
	first := gauge(t, r.m.SourceLag)
	time.Sleep(time.Second)
	second := gauge(t, r.m.SourceLag)
	close(done)
	if first < 10 || second < first+0.9 {
		t.Fatalf("lag %.1fs then %.1fs a second later, want >= 10s and rising by a second", first, second)
	}
}

func gauge(t *testing.T, g prometheus.Gauge) float64 { return metricOf(t, g).GetGauge().GetValue() }

// metricOf returns the current value of one series.
func metricOf(t *testing.T, c prometheus.Metric) *dto.Metric {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return &m
}
