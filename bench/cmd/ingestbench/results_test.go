package main

import (
	"strings"
	"testing"
)

// TestCheckRounds compares each round's ingest run with the slower raw limit of the same
// round and reports their median, for information only.
func TestCheckRounds(t *testing.T) {
	r := &results{Measurements: []measurement{
		{Suite: "snapshot", Name: namePreparedScan, RowsPerSec: 600, AllRowsPerSec: []float64{600, 400, 500}},
		{Suite: "snapshot", Name: nameProduce, RowsPerSec: 700, AllRowsPerSec: []float64{700, 700, 450}},
		{Suite: "snapshot", Name: ingestName("at-least-once"), RowsPerSec: 290, AllRowsPerSec: []float64{240, 220, 290}},
	}}
	r.evaluate([]string{"at-least-once"})
	found := findCheck(t, r, "round by round")
	// Rounds: 240/600 = 40%, 220/400 = 55%, 290/450 = 64%.
	if want := "median 55% (rounds: 40%, 55%, 64%)"; found.Measured != want || !found.Info || found.Value != 0.55 {
		t.Errorf("check %+v, want %q, for information", *found, want)
	}
	if r.Checks[0].Met || r.Checks[0].Value != 0.483 {
		t.Errorf("the target is still judged on the fastest runs (290 of 600): %+v", r.Checks[0])
	}
}

// TestSnapshotLimit judges the snapshot against the prepared scan (ingest's chunk SELECTs
// are prepared) and shows the plain scan for information.
func TestSnapshotLimit(t *testing.T) {
	r := &results{Measurements: []measurement{
		{Suite: "snapshot", Name: nameScan, RowsPerSec: 600},
		{Suite: "snapshot", Name: namePreparedScan, RowsPerSec: 800},
		{Suite: "snapshot", Name: nameProduce, RowsPerSec: 700},
		{Suite: "snapshot", Name: ingestName("at-least-once"), RowsPerSec: 560},
	}}
	r.evaluate([]string{"at-least-once"})
	if c := r.Checks[0]; c.Value != 0.8 || !c.Met || c.Info || !strings.Contains(c.Name, "prepared scan") {
		t.Errorf("the target is judged on min(prepared scan, produce) = 700, 560 of it is 80%% >= 75%%: %+v", c)
	}
	found := findCheck(t, r, "vs min(scan,")
	if want := "93% (560 of 600 rows/s)"; found.Measured != want || !found.Info {
		t.Errorf("check %+v, want %q against the plain scan, for information", *found, want)
	}
}

// TestCatchupLimit judges the catch-up against the binlog read, go-mysql's decode for
// information.
func TestCatchupLimit(t *testing.T) {
	suite := "catch-up txn=100"
	r := &results{Measurements: []measurement{
		{Suite: suite, Name: nameRead, RowsPerSec: 1000},
		{Suite: suite, Name: nameDecode, RowsPerSec: 400},
		{Suite: suite, Name: nameProduce, RowsPerSec: 900},
		{Suite: suite, Name: ingestName("at-least-once"), RowsPerSec: 700},
	}}
	r.evaluate([]string{"at-least-once"})
	if c := r.Checks[0]; c.Value != 0.778 || c.Met || !strings.Contains(c.Name, "binlog read") {
		t.Errorf("700 of min(binlog read, produce) = 900 is 78%%, under 80%%: %+v", c)
	}
	found := findCheck(t, r, "vs min(decode,")
	if found.Value != 1.75 || !found.Info {
		t.Errorf("check %+v: 700 of the decode's 400, for information", *found)
	}
}

// TestCheckLatency judges the at-least-once p99 at the target rate against the relay's p99
// at that rate plus 5 ms; the high rate and exactly-once are for information.
func TestCheckLatency(t *testing.T) {
	tests := []struct {
		name string
		p99  float64
		rate int
		g    string
		met  bool
		info bool
	}{
		{"within 5 ms of the relay", 14.9, 5000, "at-least-once", true, false},
		{"over 5 ms above the relay", 15.1, 5000, "at-least-once", false, false},
		{"exactly-once", 1200, 5000, "exactly-once", true, true},
		{"the high rate", 90, 50000, "at-least-once", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results{Config: map[string]any{"latency_rate": 5000}, Latency: []latencyRun{
				{Name: nameRawRelay, TargetRate: 5000, P99ms: 10, Rows: 10, Received: 10},
				{Name: nameRawRelay, TargetRate: 50000, P99ms: 20, Rows: 10, Received: 10},
				{Name: ingestName(tt.g), Guarantee: tt.g, TargetRate: tt.rate, P99ms: tt.p99, Rows: 10, Received: 10},
			}}
			r.checkLatency()
			if len(r.Checks) != 1 || r.Checks[0].Met != tt.met || r.Checks[0].Info != tt.info {
				t.Errorf("checks %+v, want met %v, info %v", r.Checks, tt.met, tt.info)
			}
		})
	}
}

// findCheck returns the check whose name contains part.
func findCheck(t *testing.T, r *results, part string) *check {
	t.Helper()
	for i := range r.Checks {
		if strings.Contains(r.Checks[i].Name, part) {
			return &r.Checks[i]
		}
	}
	t.Fatalf("no check named with %q in %+v", part, r.Checks)
	return nil
}

// TestCheckTransform gives the transform run's ratio to the plain run, in rows/s and CPU
// per row, for information.
func TestCheckTransform(t *testing.T) {
	r := &results{Measurements: []measurement{
		{Suite: "snapshot", Name: namePreparedScan, RowsPerSec: 600},
		{Suite: "snapshot", Name: nameProduce, RowsPerSec: 700},
		{Suite: "snapshot", Name: ingestName("at-least-once"), Rows: 1000, RowsPerSec: 400, CPUSeconds: 0.008},
		{Suite: "snapshot", Name: ingestTransformName("at-least-once"), Rows: 1000, RowsPerSec: 300, CPUSeconds: 0.01},
	}}
	r.evaluate([]string{"at-least-once"})
	found := findCheck(t, r, "transform")
	if want := "75% (300 vs 400 rows/s; client CPU 10.0 vs 8.0 µs/row)"; found.Measured != want || !found.Info || found.Value != 0.75 {
		t.Errorf("check %+v, want %q, for information", *found, want)
	}
}
