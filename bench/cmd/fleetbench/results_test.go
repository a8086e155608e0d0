package main

import (
	"math"
	"strings"
	"testing"
)

func TestLeastSquares(t *testing.T) {
	tests := []struct {
		name   string
		xs, ys []float64
		a, b   float64
		ok     bool
	}{
		{"a line", []float64{33, 50, 100}, []float64{118, 135, 185}, 85, 1, true},
		{"noise around a line", []float64{1, 2, 3, 4}, []float64{2.1, 3.9, 6.1, 7.9}, 0.1, 1.96, true},
		{"one point", []float64{33}, []float64{100}, 0, 0, false},
		{"x does not vary", []float64{50, 50}, []float64{100, 120}, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b, ok := leastSquares(tt.xs, tt.ys)
			if ok != tt.ok || math.Abs(a-tt.a) > 1e-9 || math.Abs(b-tt.b) > 1e-9 {
				t.Errorf("leastSquares = %v, %v, %v; want %v, %v, %v", a, b, ok, tt.a, tt.b, tt.ok)
			}
		})
	}
}

func TestParseMetrics(t *testing.T) {
	text := `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 484
go_memstats_heap_inuse_bytes 3.4603008e+07
ingest_fleet_pipelines_owned{group="g"} 33
process_cpu_seconds_total 1.1
`
	got, err := parseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"go_goroutines": 484, "go_memstats_heap_inuse_bytes": 34603008, "process_cpu_seconds_total": 1.1}
	if len(got) != len(want) {
		t.Fatalf("parseMetrics = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}
