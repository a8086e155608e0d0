package runner

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/metrics"
	"github.com/ingestkit/ingest/upsert"
)

// TestWrittenSeries checks that acknowledgements alternating between (table, topic) pairs,
// which switch the series at hand, each count into their own series.
func TestWrittenSeries(t *testing.T) {
	m := metrics.New("observe-test")
	var count atomic.Int64
	w := &written{m: m, count: &count}
	a, b := change.TableID{DB: "d", Table: "a"}, change.TableID{DB: "d", Table: "b"}
	acks := []upsert.Written{
		{Table: a, Topic: "t1", Bytes: 10},
		{Table: a, Topic: "t1", Bytes: 20, Tombstone: true},
		{Table: b, Topic: "t1", Bytes: 5},
		{Table: a, Topic: "t2", Bytes: 7},
		{Table: a, Topic: "t1", Bytes: 1, Latency: time.Millisecond},
	}
	for _, r := range acks {
		w.observe(r)
	}
	tests := []struct {
		table, topic           string
		records, bytes, tombst float64
	}{
		{"d.a", "t1", 3, 31, 1},
		{"d.b", "t1", 1, 5, 0},
		{"d.a", "t2", 1, 7, 0},
	}
	for _, tc := range tests {
		if got := counter(t, m.RecordsWritten.WithLabelValues(tc.table, tc.topic)); got != tc.records {
			t.Errorf("%s → %s: %v records, want %v", tc.table, tc.topic, got, tc.records)
		}
		if got := counter(t, m.BytesWritten.WithLabelValues(tc.table, tc.topic)); got != tc.bytes {
			t.Errorf("%s → %s: %v bytes, want %v", tc.table, tc.topic, got, tc.bytes)
		}
		if got := counter(t, m.Tombstones.WithLabelValues(tc.table, tc.topic)); got != tc.tombst {
			t.Errorf("%s → %s: %v tombstones, want %v", tc.table, tc.topic, got, tc.tombst)
		}
	}
	if count.Load() != int64(len(acks)) {
		t.Errorf("status count %d, want %d", count.Load(), len(acks))
	}
}

func counter(t *testing.T, c prometheus.Counter) float64 {
	return metricOf(t, c).GetCounter().GetValue()
}
