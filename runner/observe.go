package runner

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/metrics"
	"github.com/ingestkit/ingest/progress"
	"github.com/ingestkit/ingest/upsert"
)

// written counts acknowledged records into the metrics. Looking the labelled series up for
// every record would cost a hash of the labels each time, so the series of each
// (table, topic) pair are looked up once and kept.
type written struct {
	m      *metrics.Metrics
	count  *atomic.Int64
	series sync.Map // seriesKey → *seriesSet
}

type seriesKey struct {
	table change.TableID
	topic string
}

type seriesSet struct {
	records, bytes, tombstones prometheus.Counter
}

func (w *written) observe(r upsert.Written) {
	k := seriesKey{r.Table, r.Topic}
	v, ok := w.series.Load(k)
	if !ok {
		t := r.Table.String()
		v, _ = w.series.LoadOrStore(k, &seriesSet{
			records:    w.m.RecordsWritten.WithLabelValues(t, r.Topic),
			bytes:      w.m.BytesWritten.WithLabelValues(t, r.Topic),
			tombstones: w.m.Tombstones.WithLabelValues(t, r.Topic),
		})
	}
	s := v.(*seriesSet)
	w.count.Add(1)
	s.records.Inc()
	s.bytes.Add(float64(r.Bytes))
	if r.Tombstone {
		s.tombstones.Inc()
	}
	w.m.SendLatency.Observe(r.Latency.Seconds())
}

// status is what the progress display's status line shows, kept by the run's parts.
type status struct {
	records   atomic.Int64
	lagMillis atomic.Int64
	position  atomic.Value // string: the last stored position
}

func (s *status) snapshot() progress.Status {
	p, _ := s.position.Load().(string)
	return progress.Status{Records: s.records.Load(), Lag: time.Duration(s.lagMillis.Load()) * time.Millisecond, Position: p}
}

// showStatus updates the display every second until done is closed.
func (r *run) showStatus(done <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			r.display.Status(r.status.snapshot())
		}
	}
}
