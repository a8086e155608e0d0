package main

import (
	"strings"
	"testing"
)

// TestEvaluateCurves judges each series on the largest rise of a cost per unit of work
// from one point to the next, and the transaction curve on its memory.
func TestEvaluateCurves(t *testing.T) {
	pt := func(curve string, x int, work int64, secs, startup, rss float64) curvePoint {
		return curvePoint{Curve: curve, X: x, Phase: phaseSnapshot, Work: work, measurement: measurement{
			Guarantee: atLeastOnce, Seconds: secs, StartupSec: startup, PeakRSSMiB: rss}}
	}
	txn := func(x int, rss float64) curvePoint {
		p := pt(curveTxn, x, 1000, 2, 0.5, rss)
		p.Phase = phaseCatchup
		return p
	}
	tests := []struct {
		name   string
		points []curvePoint
		check  string // the check's name contains this
		met    bool
		value  float64
	}{
		{"linear in tables", []curvePoint{pt(curveTables, 1, 1, 0.5, 0.4, 50), pt(curveTables, 100, 100, 1.4, 0.5, 60),
			pt(curveTables, 1000, 1000, 10.4, 1.0, 80)}, "time to the last record per table", true, 0.74},
		// 1.4 s for 100 tables, then 100 s for 1,000: 7x per table.
		{"quadratic in tables", []curvePoint{pt(curveTables, 100, 100, 1.4, 0.5, 60), pt(curveTables, 1000, 1000, 100, 1, 80)},
			"time to the last record per table", false, 7.14},
		{"start-up grows with the tables", []curvePoint{pt(curveTables, 100, 100, 2, 0.2, 60), pt(curveTables, 1000, 1000, 20, 5, 80)},
			"start-up per table", false, 2.5},
		// The start-up is judged per column, not per cell: wider tables take longer to describe.
		{"start-up of wider tables", []curvePoint{pt(curveColumns, 10, 1000, 3, 0.24, 60), pt(curveColumns, 100, 1000, 3.2, 0.37, 61)},
			"start-up per column", true, 0.15},
		// The same cells at each point: the time must not grow.
		{"columns flat", []curvePoint{pt(curveColumns, 10, 1000, 3, 1, 60), pt(curveColumns, 100, 1000, 3.2, 1, 61)},
			"time to the last record per cell", true, 1.07},
		{"memory bounded in the transaction size", []curvePoint{txn(1, 60), txn(10000, 62), txn(1000000, 70)},
			"peak RSS bounded", true, 1.17},
		{"memory grows with the transaction", []curvePoint{txn(1, 60), txn(1000000, 400)}, "peak RSS bounded", false, 6.67},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results{Mode: partCurves, Curves: tt.points}
			r.evaluate(nil)
			var found *check
			for i := range r.Checks {
				if strings.Contains(r.Checks[i].Name, tt.check) {
					found = &r.Checks[i]
				}
			}
			if found == nil {
				t.Fatalf("no check %q in %+v", tt.check, r.Checks)
			}
			if found.Met != tt.met || found.Value != tt.value {
				t.Errorf("check %+v: want met %v, value %v", *found, tt.met, tt.value)
			}
		})
	}
}

// TestCurvesConfig refuses the curves part with another part and unknown curves.
func TestCurvesConfig(t *testing.T) {
	base := config{Parts: []string{partCurves}, Curve: curveSettings{Curves: curveNames, Tables: []int{1, 10}, Columns: []int{10},
		RowBytes: []int{100}, TxnSizes: []int{1, 100}, Changes: 100, Cells: 100, Bytes: 100, TxnRows: 100}}
	if err := base.checkCurves(); err != nil {
		t.Fatalf("valid settings refused: %v", err)
	}
	for name, mod := range map[string]func(*config){
		"with another part":   func(c *config) { c.Parts = append(c.Parts, partSnapshot) },
		"unknown curve":       func(c *config) { c.Curve.Curves = []string{"width"} },
		"too many columns":    func(c *config) { c.Curve.Columns = []int{2000} },
		"odd transaction":     func(c *config) { c.Curve.TxnSizes = []int{15} },
		"too few tables rows": func(c *config) { c.Curve.Changes = 5 },
	} {
		c := base
		c.Curve.Curves = append([]string(nil), base.Curve.Curves...)
		mod(&c)
		if err := c.checkCurves(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
