package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// sample is one worker's figures at one moment.
type sample struct {
	Step       string  `json:"step"`
	Load       string  `json:"load"` // idle or busy
	Worker     int     `json:"worker"`
	Owned      int     `json:"owned"`
	RSSMiB     float64 `json:"rss_mib"`      // VmRSS
	PeakMiB    float64 `json:"peak_rss_mib"` // VmHWM, since the worker started
	HeapMiB    float64 `json:"heap_inuse_mib"`
	Goroutines int     `json:"goroutines"`
	CPUSeconds float64 `json:"cpu_seconds"` // since the worker started
}

// sample samples every live worker.
func (g *group) sample(ctx context.Context, step, load string) ([]sample, error) {
	var out []sample
	for _, w := range g.live() {
		st, err := status(ctx, w)
		if err != nil {
			return nil, err
		}
		s := sample{Step: step, Load: load, Worker: w.n, Owned: len(st.Owned)}
		if s.RSSMiB, s.PeakMiB, err = procMemory(w.cmd.Process.Pid); err != nil {
			return nil, fmt.Errorf("worker %d: %w", w.n, err)
		}
		m, err := metrics(ctx, w)
		if err != nil {
			return nil, err
		}
		s.HeapMiB = m["go_memstats_heap_inuse_bytes"] / (1 << 20)
		s.Goroutines = int(m["go_goroutines"])
		s.CPUSeconds = m["process_cpu_seconds_total"]
		out = append(out, s)
	}
	return out, nil
}

// procMemory reads a process's resident and peak resident memory from /proc.
func procMemory(pid int) (rss, peak float64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, _ := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(val)
		if len(fields) == 0 {
			continue
		}
		kb, _ := strconv.ParseFloat(fields[0], 64)
		switch key {
		case "VmRSS":
			rss = kb / 1024
		case "VmHWM":
			peak = kb / 1024
		}
	}
	return rss, peak, sc.Err()
}

// metrics reads the worker's unlabelled series from /metrics.
func metrics(ctx context.Context, w *worker) (map[string]float64, error) {
	var m map[string]float64
	err := get(ctx, w, "/metrics", func(r io.Reader) (err error) { m, err = parseMetrics(r); return err })
	return m, err
}

// parseMetrics returns the series without labels of a Prometheus text exposition.
func parseMetrics(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, val, ok := strings.Cut(line, " ")
		if !ok || strings.Contains(name, "{") {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
			out[name] = f
		}
	}
	return out, sc.Err()
}
