package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// results is one run of the benchmark.
type results struct {
	Started      time.Time `json:"started"`
	Seconds      float64   `json:"seconds"`
	Machine      machine   `json:"machine"`
	Pipelines    int       `json:"pipelines"`
	Workers      int       `json:"workers"`
	Rows         int       `json:"rows_per_table"`
	Rate         float64   `json:"transactions_per_second_per_pipeline"`
	Window       int       `json:"window_seconds"`
	StartSeconds float64   `json:"start_seconds"` // until every pipeline streams
	Samples      []sample  `json:"samples"`
	Moves        []move    `json:"moves"`
	Fits         []fit     `json:"fits"`
	Errors       []string  `json:"errors,omitempty"`
}

// move is a worker leaving and the group taking its pipelines over.
type move struct {
	Kind        string  `json:"kind"` // SIGTERM or SIGKILL
	Worker      int     `json:"worker"`
	Moved       int     `json:"pipelines_moved"`
	Seconds     float64 `json:"seconds"` // until every pipeline streams on the others
	ExitSeconds float64 `json:"exit_seconds"`
}

// fit is a least-squares line of a figure against the pipelines a worker owns.
type fit struct {
	Load     string  `json:"load"`
	Figure   string  `json:"figure"`
	Base     float64 `json:"base"`         // at no pipeline
	Per      float64 `json:"per_pipeline"` // the slope
	Points   int     `json:"points"`
	MinOwned int     `json:"min_owned"`
	MaxOwned int     `json:"max_owned"`
}

// machine describes where the run ran.
type machine struct {
	CPUs    int    `json:"cpus"`
	Model   string `json:"cpu_model"`
	Kernel  string `json:"kernel"`
	Go      string `json:"go"`
	Commit  string `json:"commit"`
	Host    string `json:"host"`
	LoadAvg string `json:"load_average_start"`
}

func describeMachine(ctx context.Context) machine {
	host, _ := os.Hostname()
	m := machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), Host: host, LoadAvg: firstLine("/proc/loadavg"),
		Kernel: firstLine("/proc/sys/kernel/osrelease")}
	if out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

func firstLine(path string) string {
	b, _ := os.ReadFile(path)
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line)
}

// fit fits RSS, Go heap and goroutines against the pipelines owned, idle and busy.
func (r *results) fit() {
	figures := []struct {
		name string
		get  func(sample) float64
	}{
		{"RSS MiB", func(s sample) float64 { return s.RSSMiB }},
		{"Go heap in use MiB", func(s sample) float64 { return s.HeapMiB }},
		{"goroutines", func(s sample) float64 { return float64(s.Goroutines) }},
	}
	for _, load := range []string{"idle", "busy"} {
		for _, f := range figures {
			var xs, ys []float64
			lo, hi := 1<<30, 0
			for _, s := range r.Samples {
				if s.Load == load {
					xs, ys = append(xs, float64(s.Owned)), append(ys, f.get(s))
					lo, hi = min(lo, s.Owned), max(hi, s.Owned)
				}
			}
			if base, per, ok := leastSquares(xs, ys); ok {
				r.Fits = append(r.Fits, fit{Load: load, Figure: f.name, Base: base, Per: per, Points: len(xs), MinOwned: lo, MaxOwned: hi})
			}
		}
	}
}

// leastSquares returns the line y = a + b·x through the points; false when the x do not vary.
func leastSquares(xs, ys []float64) (a, b float64, ok bool) {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	d := n*sxx - sx*sx
	if len(xs) < 2 || d == 0 {
		return 0, 0, false
	}
	b = (n*sxy - sx*sy) / d
	return (sy - b*sx) / n, b, true
}

// print writes the results as Markdown tables.
func (r *results) print(w io.Writer) {
	fmt.Fprintf(w, "# bench-fleet: %d pipelines on %d workers\n\n", r.Pipelines, r.Workers)
	fmt.Fprintf(w, "%s, commit %s, %d CPUs (%s), %s; each pipeline one table of %d rows, exactly-once; busy: %.0f transactions/s per pipeline (%.0f in all); windows of %d s. Run took %.0f s.\n\n",
		r.Started.Format("2006-01-02 15:04 UTC"), r.Machine.Commit, r.Machine.CPUs, r.Machine.Model, r.Machine.Go,
		r.Rows, r.Rate, r.Rate*float64(r.Pipelines), r.Window, r.Seconds)
	fmt.Fprintf(w, "Every pipeline assigned, snapshotted and streaming %.1f s after the workers started.\n\n", r.StartSeconds)
	fmt.Fprintln(w, "| step | load | worker | pipelines | RSS MiB | peak RSS MiB | Go heap MiB | goroutines | CPU s |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range r.Samples {
		fmt.Fprintf(w, "| %s | %s | %d | %d | %.1f | %.1f | %.1f | %d | %.1f |\n", s.Step, s.Load, s.Worker, s.Owned, s.RSSMiB, s.PeakMiB, s.HeapMiB, s.Goroutines, s.CPUSeconds)
	}
	fmt.Fprintln(w, "\n| per worker, against the pipelines it owns | load | at 0 pipelines | per pipeline | points (pipelines) |")
	fmt.Fprintln(w, "|---|---|---:|---:|---|")
	for _, f := range r.Fits {
		fmt.Fprintf(w, "| %s | %s | %.1f | %.2f | %d (%d–%d) |\n", f.Figure, f.Load, f.Base, f.Per, f.Points, f.MinOwned, f.MaxOwned)
	}
	fmt.Fprintln(w, "\n| a worker leaves | worker | its pipelines | every pipeline streams again after | the worker exited after |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, m := range r.Moves {
		fmt.Fprintf(w, "| %s | %d | %d | %.1f s | %.1f s |\n", m.Kind, m.Worker, m.Moved, m.Seconds, m.ExitSeconds)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "\nERROR: %s\n", e)
	}
}

// write writes the JSON and the Markdown into dir.
func (r *results) write(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	name := filepath.Join(dir, fmt.Sprintf("fleet-%s-%s.json", r.Started.Format("2006-01-02T1504"), r.Machine.Host))
	if err := os.WriteFile(name, append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	var md strings.Builder
	r.print(&md)
	latest := filepath.Join(dir, "latest-fleet.md")
	if err := os.WriteFile(latest, []byte(md.String()), 0o644); err != nil {
		return nil, err
	}
	return []string{name, latest}, nil
}
