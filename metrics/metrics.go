// Package metrics holds ingest's Prometheus metrics and serves them over HTTP.
//
// Every metric is listed in docs/metrics.md. Names follow Prometheus conventions: an
// `ingest_` prefix, base units (seconds, bytes) and `_total` for counters.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is the set of ingest's metrics, registered on its own registry. The zero value is
// not usable; call New. All methods are safe for concurrent use.
type Metrics struct {
	reg   *prometheus.Registry
	scrub func(string) string // ScrubLabels; nil: none

	// RecordsWritten counts records acknowledged by Kafka, by source table and topic.
	RecordsWritten *prometheus.CounterVec
	// BytesWritten counts key plus value bytes acknowledged by Kafka, by table and topic.
	BytesWritten *prometheus.CounterVec
	// Tombstones counts tombstones (deletes and the old key of a primary-key change).
	Tombstones *prometheus.CounterVec
	// SendLatency observes the time from handing a record to the producer to its ack.
	SendLatency prometheus.Histogram
	// SourceLag is how far the last processed binlog event is behind the wall clock.
	SourceLag prometheus.Gauge
	// SnapshotRowsDone counts rows read by the snapshot, by table.
	SnapshotRowsDone *prometheus.GaugeVec
	// SnapshotRowsEstimated is the table's row estimate from information_schema.
	SnapshotRowsEstimated *prometheus.GaugeVec
	// SnapshotChunksDone counts finished snapshot chunks, by table.
	SnapshotChunksDone *prometheus.GaugeVec
	// TransactionsCommitted counts source transactions whose position was stored.
	TransactionsCommitted prometheus.Counter
	// KafkaTransactions counts committed Kafka transactions (exactly-once only).
	KafkaTransactions prometheus.Counter
	// PositionStored is when (Unix time) the last position was stored.
	PositionStored prometheus.Gauge
	// Errors counts errors by kind (source, sink, state, retry).
	Errors *prometheus.CounterVec
	// OversizedSkipped counts records skipped because they exceeded max.request.size.
	OversizedSkipped *prometheus.CounterVec
	// KeylessSkipped counts tables created while streaming that are not captured because
	// they have no key (scan.binlog.newly-added-table.keyless skip), by table.
	KeylessSkipped *prometheus.CounterVec
}

// New creates the metrics for the pipeline name, which every series carries as the label
// "pipeline", and registers the Go runtime and process collectors beside them.
func New(pipeline string) *Metrics {
	c := prometheus.Labels{"pipeline": pipeline}
	tt := []string{"table", "topic"}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		RecordsWritten: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_records_written_total",
			Help: "Records acknowledged by Kafka.", ConstLabels: c}, tt),
		BytesWritten: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_bytes_written_total",
			Help: "Key and value bytes acknowledged by Kafka.", ConstLabels: c}, tt),
		Tombstones: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_tombstones_written_total",
			Help: "Tombstones acknowledged by Kafka (deletes and old keys of primary-key changes).", ConstLabels: c}, tt),
		SendLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ingest_send_latency_seconds",
			Help: "Time from handing a record to the producer to its acknowledgement.", ConstLabels: c,
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}),
		SourceLag: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ingest_source_lag_seconds",
			Help: "Seconds between the commit time of the last processed binlog event and now.", ConstLabels: c}),
		SnapshotRowsDone: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ingest_snapshot_rows_done",
			Help: "Rows read by the initial snapshot.", ConstLabels: c}, []string{"table"}),
		SnapshotRowsEstimated: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ingest_snapshot_rows_estimated",
			Help: "Row estimate of a snapshotted table (information_schema.TABLES.TABLE_ROWS).", ConstLabels: c}, []string{"table"}),
		SnapshotChunksDone: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ingest_snapshot_chunks_done",
			Help: "Snapshot chunks finished.", ConstLabels: c}, []string{"table"}),
		TransactionsCommitted: prometheus.NewCounter(prometheus.CounterOpts{Name: "ingest_source_transactions_total",
			Help: "Source transactions fully written (their position may be stored).", ConstLabels: c}),
		KafkaTransactions: prometheus.NewCounter(prometheus.CounterOpts{Name: "ingest_kafka_transactions_committed_total",
			Help: "Kafka transactions committed (exactly-once).", ConstLabels: c}),
		PositionStored: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ingest_position_stored_timestamp_seconds",
			Help: "When (Unix seconds) the last position was stored.", ConstLabels: c}),
		Errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_errors_total",
			Help: "Errors by kind (source, sink, state; retried ones included).", ConstLabels: c}, []string{"kind"}),
		OversizedSkipped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_oversized_records_skipped_total",
			Help: "Records skipped because they exceeded max.request.size (sink.skip-oversized-records).", ConstLabels: c}, tt),
		KeylessSkipped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_keyless_tables_skipped_total",
			Help:        "Tables created while streaming that are not captured for want of a key (scan.binlog.newly-added-table.keyless skip).",
			ConstLabels: c}, []string{"table"}),
	}
	m.reg.MustRegister(m.RecordsWritten, m.BytesWritten, m.Tombstones, m.SendLatency, m.SourceLag,
		m.SnapshotRowsDone, m.SnapshotRowsEstimated, m.SnapshotChunksDone, m.TransactionsCommitted,
		m.KafkaTransactions, m.PositionStored, m.Errors, m.OversizedSkipped, m.KeylessSkipped,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry returns the registry the metrics are registered on.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler returns the HTTP handler serving the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.gatherer(), promhttp.HandlerOpts{Registry: m.reg})
}

// Server is a metrics endpoint whose address is bound: [Metrics.Listen] binds it, so that
// an address that cannot be used fails before anything else starts, and Serve serves it.
type Server struct {
	m     *Metrics
	ln    net.Listener
	pprof bool
}

// Listen binds addr (HOST:PORT; an empty host is every interface) for /metrics and
// /healthz, and, with pprof, the Go runtime's profiles under /debug/pprof/. It returns an
// error naming the address when it cannot be bound (in use, no such port).
func (m *Metrics) Listen(addr string, pprof bool) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	return &Server{m: m, ln: ln, pprof: pprof}, nil
}

// Addr returns the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Loopback reports whether the server is reachable from this host only.
func (s *Server) Loopback() bool {
	a, ok := s.ln.Addr().(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}

// Close releases the address of a server that is not going to Serve.
func (s *Server) Close() error { return s.ln.Close() }

// Serve serves until ctx is done, then shuts down. It returns nil after a clean shutdown.
func (s *Server) Serve(ctx context.Context) error {
	addr := s.ln.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("/metrics", s.m.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	if s.pprof {
		handleProfiles(mux)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(s.ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("metrics: serve on %s: %w", addr, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics: serve on %s: %w", addr, err)
	}
	return nil
}

// Serve listens on addr and serves /metrics and /healthz (no profiles) until ctx is done:
// Listen and Server.Serve in one.
func (m *Metrics) Serve(ctx context.Context, addr string) error {
	s, err := m.Listen(addr, false)
	if err != nil {
		return err
	}
	return s.Serve(ctx)
}

// handleProfiles serves the Go runtime's profiles under /debug/pprof/ (net/http/pprof, on
// this mux only, not on http.DefaultServeMux): `go tool pprof
// http://ADDR/debug/pprof/profile?seconds=30` for CPU, `/debug/pprof/heap` for memory.
// Only with `ingest apply --pprof`: a profile shows the process's memory and command line.
func handleProfiles(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index) // also the named profiles: heap, allocs, goroutine, …
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
