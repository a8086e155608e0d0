package runner

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/metrics"
	"github.com/ingestkit/ingest/upsert"
)

// TestLagGrowsUnderBackPressure: while the sink takes nothing (Kafka slow or down), the lag
// metric follows the commit time of the stream batch the forwarder holds, instead of staying
// at the lag of the last batch taken.
func TestLagGrowsUnderBackPressure(t *testing.T) {
	r := &run{m: metrics.New("lag-test")}
	out := make(chan upsert.Input) // nobody receives: the sink is stuck
	in := upsert.Input{Batch: change.Batch{CommitTime: time.Now().Add(-10 * time.Second), End: true}}
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	if r.sendWaiting(ctx, out, in, true) {
		t.Fatal("sent to a channel nobody receives")
	}
	if lag := gauge(t, r.m.SourceLag); lag < 11 {
		t.Fatalf("lag %.1fs after 2.5s of back-pressure on a batch committed 10s ago, want >= 11s", lag)
	}
	if r.status.lagMillis.Load() < 11000 {
		t.Fatalf("status lag %dms, want >= 11000", r.status.lagMillis.Load())
	}

	snap := &run{m: metrics.New("lag-test-snapshot")} // snapshot batches do not move the lag
	ctx2, cancel2 := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel2()
	snap.sendWaiting(ctx2, out, in, false)
	if lag := gauge(t, snap.m.SourceLag); lag != 0 {
		t.Fatalf("lag %.1fs from a snapshot batch, want 0", lag)
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
