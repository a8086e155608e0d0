package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// fleetMetrics are the worker's own metrics, beside its pipelines'.
type fleetMetrics struct {
	reg         *prometheus.Registry
	owned       prometheus.Gauge
	rebalances  prometheus.Counter
	failures    *prometheus.CounterVec
	suspensions prometheus.Counter
}

func newFleetMetrics(group string) *fleetMetrics {
	c := prometheus.Labels{"group": group}
	m := &fleetMetrics{reg: prometheus.NewRegistry(),
		owned: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ingest_fleet_pipelines_owned",
			Help: "Pipelines this worker runs.", ConstLabels: c}),
		rebalances: prometheus.NewCounter(prometheus.CounterOpts{Name: "ingest_fleet_assignments_total",
			Help: "Group assignments this worker received.", ConstLabels: c}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_fleet_pipeline_failures_total",
			Help: "Runs of a pipeline that failed on this worker (each is run again).", ConstLabels: c}, []string{"pipeline"}),
		suspensions: prometheus.NewCounter(prometheus.CounterOpts{Name: "ingest_fleet_suspensions_total",
			Help: "Times this worker stopped its pipelines because the group coordinator did not answer for a session timeout.", ConstLabels: c}),
	}
	m.reg.MustRegister(m.owned, m.rebalances, m.failures, m.suspensions,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// gather gathers the worker's metrics and every pipeline's (each series labelled by its
// pipeline); the Go and process metrics come once, from the worker's registry.
func (w *Worker) gather() ([]*dto.MetricFamily, error) {
	w.mu.Lock()
	gs := prometheus.Gatherers{w.m.reg}
	for _, m := range w.metrics {
		g := m.Gatherer()
		gs = append(gs, prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
			mfs, err := g.Gather()
			out := mfs[:0]
			for _, mf := range mfs {
				if n := mf.GetName(); !strings.HasPrefix(n, "go_") && !strings.HasPrefix(n, "process_") {
					out = append(out, mf)
				}
			}
			return out, err
		}))
	}
	w.mu.Unlock()
	return gs.Gather()
}

// Handler serves /status (JSON), / (the same as an HTML page), /metrics and /healthz.
func (w *Worker) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/status", func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(rw)
		enc.SetIndent("", "  ")
		_ = enc.Encode(w.Status())
	})
	mux.HandleFunc("/{$}", func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := statusPage.Execute(rw, w.Status()); err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
		}
	})
	mux.Handle("/metrics", promhttp.HandlerFor(prometheus.GathererFunc(w.gather), promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, _ *http.Request) { _, _ = rw.Write([]byte("ok\n")) })
	return mux
}

// Serve serves Handler on ln until ctx is done.
func (w *Worker) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: w.Handler(), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("fleet: serve status on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("fleet: serve status on %s: %w", ln.Addr(), err)
	}
	return nil
}

var statusPage = template.Must(template.New("status").Funcs(template.FuncMap{
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return time.Since(t).Round(time.Second).String()
	},
	"secs": func(f float64) string { return fmt.Sprintf("%.1f s", f) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="5">
<title>ingest serve: {{.Group}}</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}.failed{color:#b00}</style>
</head><body>
<h1>ingest serve, group {{.Group}}</h1>
<p>Member <code>{{.Member}}</code>, generation {{.Generation}}; pipeline set <code>{{.Set}}</code> ({{.Total}} pipelines){{if .Draining}}; <strong>draining</strong>{{end}}{{if .Suspended}}; <strong>suspended: no answer from the group coordinator</strong>{{end}}.</p>
<p id="owned">{{len .Owned}} pipelines owned by this worker.</p>
<table>
<tr><th>Pipeline</th><th>Phase</th><th>Owned for</th><th>Lag</th><th>Records</th><th>Position</th><th>Restarts</th><th>Last error</th></tr>
{{range .Owned}}<tr class="{{.Phase}}"><td>{{.Name}}</td><td>{{.Phase}}</td><td>{{ago .Since}}</td><td>{{secs .LagSeconds}}</td><td>{{.Records}}</td><td><code>{{.Position}}</code></td><td>{{.Restarts}}</td><td>{{.LastError}}</td></tr>
{{end}}</table>
<p><a href="/status">JSON</a> · <a href="/metrics">metrics</a></p>
</body></html>
`))
