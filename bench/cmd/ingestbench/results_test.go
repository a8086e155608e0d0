package main

import (
	"strings"
	"testing"
)

// TestCheckRounds compares each round's ingest run with the slower raw limit of the same
// round and reports their median, for information only.
func TestCheckRounds(t *testing.T) {
	r := &results{Measurements: []measurement{
		{Suite: "snapshot", Name: nameScan, RowsPerSec: 600, AllRowsPerSec: []float64{600, 400, 500}},
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

// TestCheckPreparedScan shows ingest against the prepared scan for information, while the
// target stays judged against the plain scan.
func TestCheckPreparedScan(t *testing.T) {
	r := &results{Measurements: []measurement{
		{Suite: "snapshot", Name: nameScan, RowsPerSec: 600},
		{Suite: "snapshot", Name: namePreparedScan, RowsPerSec: 800},
		{Suite: "snapshot", Name: nameProduce, RowsPerSec: 700},
		{Suite: "snapshot", Name: ingestName("at-least-once"), RowsPerSec: 350},
	}}
	r.evaluate([]string{"at-least-once"})
	found := findCheck(t, r, "prepared scan")
	if want := "50% (350 of 700 rows/s)"; found.Measured != want || !found.Info {
		t.Errorf("check %+v, want %q (the produce limit is the slower), for information", *found, want)
	}
	if r.Checks[0].Value != 0.583 || !r.Checks[0].Met {
		t.Errorf("the target is judged on the plain scan (350 of 600): %+v", r.Checks[0])
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
		{Suite: "snapshot", Name: nameScan, RowsPerSec: 600},
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
