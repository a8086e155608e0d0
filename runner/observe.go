package runner

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

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
	bytes  *atomic.Int64 // nil: not counted
	series sync.Map      // seriesKey → *seriesSet
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
	if w.bytes != nil {
		w.bytes.Add(int64(r.Bytes))
	}
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
	bytes     atomic.Int64 // key plus value bytes acknowledged
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

// stallWarning is how long Kafka may acknowledge nothing while stream transactions wait
// before followLag warns (at least three Kafka transaction intervals with exactly-once).
const stallWarning = 10 * time.Second

// followLag sets the lag metric every second from the lag clock, across restarts, until
// done is closed; and warns once when Kafka has acknowledged nothing for stallWarning while
// transactions wait (a broker that is down or unreachable), counting it in
// ingest_errors_total{kind="kafka_unreachable"}, and notes when acknowledgements resume.
func (r *run) followLag(done <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	limit := max(stallWarning, 3*r.snk.TransactionInterval)
	warned := false
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		now := time.Now()
		r.setLag(r.lag.lag(now))
		switch waited := r.lag.waiting(now); {
		case waited >= limit && !warned:
			warned = true
			r.m.Errors.WithLabelValues("kafka_unreachable").Inc()
			r.log.Warn("Kafka has acknowledged nothing for a while: the brokers may be down or unreachable; "+
				"the source waits and the lag grows", "waited", waited.Round(time.Second), "lag", r.lag.lag(now).Round(time.Second))
		case waited == 0 && warned:
			warned = false
			r.log.Info("Kafka acknowledges again", "lag", r.lag.lag(now).Round(time.Second))
		}
	}
}

// summary logs the end-of-run line: the tables written, the snapshot rows read, the
// records and bytes acknowledged and how long the run took, with how it ended.
func (r *run) summary(began time.Time, err error) {
	tables := map[change.TableID]bool{}
	if r.writes != nil {
		r.writes.series.Range(func(k, _ any) bool { tables[k.(seriesKey).table] = true; return true })
	}
	ended := "stopped"
	switch {
	case err != nil:
		ended = "failed"
	case r.opts.UntilCaughtUp:
		ended = "caught up"
	}
	r.log.Info("run summary", "ended", ended, "tables", len(tables), "snapshot_rows", int64(sumGauges(r.m.SnapshotRowsDone)),
		"records", r.status.records.Load(), "bytes", r.status.bytes.Load(), "duration", time.Since(began).Round(time.Millisecond))
}

// sumGauges adds up the series of a gauge vector.
func sumGauges(v *prometheus.GaugeVec) float64 {
	ch := make(chan prometheus.Metric)
	go func() { v.Collect(ch); close(ch) }()
	var sum float64
	for m := range ch {
		var d dto.Metric
		if m.Write(&d) == nil {
			sum += d.GetGauge().GetValue()
		}
	}
	return sum
}
