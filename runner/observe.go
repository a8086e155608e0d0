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
// (table, topic) pair are looked up once and kept, and the last pair used is at hand
// without a hash (acknowledgements come in runs of one partition's batch).
type written struct {
	m      *metrics.Metrics
	count  *atomic.Int64
	series sync.Map // seriesKey → *seriesSet
	last   atomic.Pointer[seriesSet]
}

type seriesKey struct {
	table change.TableID
	topic string
}

type seriesSet struct {
	key                        seriesKey
	records, bytes, tombstones prometheus.Counter
}

// lookup returns the series of a (table, topic) pair.
func (w *written) lookup(k seriesKey) *seriesSet {
	if s := w.last.Load(); s != nil && s.key == k {
		return s
	}
	v, ok := w.series.Load(k)
	if !ok {
		t := k.table.String()
		v, _ = w.series.LoadOrStore(k, &seriesSet{key: k,
			records:    w.m.RecordsWritten.WithLabelValues(t, k.topic),
			bytes:      w.m.BytesWritten.WithLabelValues(t, k.topic),
			tombstones: w.m.Tombstones.WithLabelValues(t, k.topic),
		})
	}
	s := v.(*seriesSet)
	w.last.Store(s)
	return s
}

func (w *written) observe(r upsert.Written) {
	s := w.lookup(seriesKey{r.Table, r.Topic})
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
