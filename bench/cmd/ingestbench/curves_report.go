package main

import (
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// The curves part's checks, tables and charts.

// targetGrowthStep is the largest rise of a cost per unit of work from one point of a curve
// to the next that still counts as linear (the rest is noise on this machine).
const targetGrowthStep = 1.5

// targetTxnRSS bounds the peak RSS of the transaction curve's largest transaction over its
// smallest one: memory stays bounded as transactions grow.
const targetTxnRSS = 1.5

// checkCurves checks the settings of the curves part.
func (c config) checkCurves() error {
	if len(c.Parts) != 1 {
		return fmt.Errorf("-only %s: not with other parts", partCurves)
	}
	for _, name := range c.Curve.Curves {
		if !slices.Contains(curveNames, name) {
			return fmt.Errorf("-curves: unknown curve %q (%s)", name, strings.Join(curveNames, ", "))
		}
	}
	for _, l := range []struct {
		flag string
		xs   []int
		min  int
	}{{"-curve-tables", c.Curve.Tables, 1}, {"-curve-columns", c.Curve.Columns, 3}, {"-curve-row-bytes", c.Curve.RowBytes, 1},
		{"-curve-txn-sizes", c.Curve.TxnSizes, 1}} {
		for _, x := range l.xs {
			if x < l.min || x > 1017 && l.flag == "-curve-columns" { // InnoDB's most columns
				return fmt.Errorf("%s: %d out of range", l.flag, x)
			}
			if l.flag == "-curve-txn-sizes" && x != 1 && (x < 10 || x%10 != 0) {
				return fmt.Errorf("-curve-txn-sizes: %d is neither 1 nor a multiple of 10", x)
			}
		}
	}
	if c.Curve.Changes < 10 || c.Curve.Cells < 1 || c.Curve.Bytes < 1 || c.Curve.TxnRows < 1 {
		return fmt.Errorf("-curve-changes at least 10; -curve-cells, -curve-bytes, -curve-txn-rows at least 1")
	}
	return nil
}

// curveUnits names what a curve's Work counts.
var curveUnits = map[string]string{curveTables: "table", curveColumns: "cell", curveRowSize: "byte", curveTxn: "change"}

// curveXUnits names the unit of a curve's variable.
var curveXUnits = map[string]string{curveTables: "table", curveColumns: "column", curveRowSize: "row byte", curveTxn: "row per transaction"}

// curveX names a curve's variable.
var curveX = map[string]string{curveTables: "tables", curveColumns: "columns", curveRowSize: "row bytes", curveTxn: "rows/txn"}

// series groups a curve's points by phase and guarantee, in X order.
func (r *results) series(curve string) [][]curvePoint {
	var keys []string
	by := map[string][]curvePoint{}
	for _, p := range r.Curves {
		if p.Curve != curve {
			continue
		}
		k := p.Phase + " " + p.Guarantee
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], p)
	}
	var out [][]curvePoint
	for _, k := range keys {
		ps := by[k]
		slices.SortFunc(ps, func(a, b curvePoint) int { return a.X - b.X })
		out = append(out, ps)
	}
	return out
}

// curveMetric is a cost of a point that the checks follow along a curve, per unit of the
// point's work, or per unit of its variable (perX: the start-up, which reads the tables'
// descriptions, not their rows, so grows at most with their number and width).
type curveMetric struct {
	name string
	of   func(curvePoint) float64
	perX bool
}

var curveMetrics = []curveMetric{
	{"time to the last record", func(p curvePoint) float64 { return max(p.Seconds, 0.001) }, false},
	{"start-up", func(p curvePoint) float64 { return max(p.StartupSec, 0.01) }, true},
	{"peak RSS", func(p curvePoint) float64 { return p.PeakRSSMiB }, false},
}

// evaluateCurves checks that no cost per unit of work rises by more than targetGrowthStep
// from one point of a series to the next (nothing grows faster than linearly), and that
// the transaction curve's memory stays bounded.
func (r *results) evaluateCurves() {
	r.Checks = nil
	for _, curve := range curveNames {
		unit := curveUnits[curve]
		for _, ps := range r.series(curve) {
			if len(ps) < 2 {
				continue
			}
			series := fmt.Sprintf("%s curve, %s %s", curve, ps[0].Phase, ps[0].Guarantee)
			for _, m := range curveMetrics {
				r.Checks = append(r.Checks, growthCheck(series, m, unit, curveXUnits[curve], ps))
			}
			if curve == curveTxn {
				lo, hi := ps[0], ps[len(ps)-1]
				v := hi.PeakRSSMiB / max(lo.PeakRSSMiB, 1)
				r.Checks = append(r.Checks, check{
					Name:     series + ": peak RSS bounded in the transaction size",
					Measured: fmt.Sprintf("%.0f MiB at %s rows/txn vs %.0f MiB at %s (x%.2f)", hi.PeakRSSMiB, thousands(float64(hi.X)), lo.PeakRSSMiB, thousands(float64(lo.X)), v),
					Goal:     fmt.Sprintf("<= x%.2f", targetTxnRSS), Value: round(v, 2), Met: v <= targetTxnRSS,
				})
			}
		}
	}
}

// growthCheck is the check of one metric along a series: the largest rise of the metric
// per unit of work from one point to the next.
func growthCheck(series string, m curveMetric, unit, xUnit string, ps []curvePoint) check {
	per := func(p curvePoint) float64 {
		if m.perX {
			return float64(max(p.X, 1))
		}
		return float64(max(p.Work, 1))
	}
	worst, at := 0.0, ""
	for i := 1; i < len(ps); i++ {
		a := m.of(ps[i-1]) / per(ps[i-1])
		b := m.of(ps[i]) / per(ps[i])
		if v := b / a; v > worst {
			worst, at = v, fmt.Sprintf("%s to %s", thousands(float64(ps[i-1].X)), thousands(float64(ps[i].X)))
		}
	}
	if m.perX {
		unit = xUnit
	}
	return check{
		Name:     fmt.Sprintf("%s: %s per %s, largest step", series, m.name, unit),
		Measured: fmt.Sprintf("x%.2f (%s)", worst, at),
		Goal:     fmt.Sprintf("<= x%.2f (linear)", targetGrowthStep), Value: round(worst, 2), Met: worst <= targetGrowthStep,
	}
}

// curveData describes the work of each curve from the run's configuration.
func curveData(cfg map[string]any) string {
	c, _ := cfg["curves"].(map[string]any)
	n := func(k string) string { return thousands(float64(intOf(c[k]))) }
	return fmt.Sprintf("tables curve: %d rows per table, snapshot, then %s one-row updates in transactions of 10; "+
		"columns: %s cells (rows × columns) per point; row size: %s payload bytes per point; both a snapshot, then an update of every row; "+
		"transactions: %s changes (60%% inserts, 30%% updates, 10%% deletes) per point, at least one transaction",
		tablesRows, n("changes"), n("cells"), n("bytes"), n("txn_rows"))
}

// curvesTable lists every point.
func (r *results) curvesTable() *table {
	t := &table{
		header: []string{"curve", "x", "phase", "records", "time s", "startup s", "rows/s", "MB/s", "peak RSS MiB", "CPU µs/record", "CPU s ingest/mariadb/kafka/other"},
		right:  []bool{false, true, false, true, true, true, true, true, true, true, true},
	}
	for _, p := range r.Curves {
		name := p.Phase + " " + p.Guarantee
		if p.Note != "" {
			name += " [" + p.Note + "]"
		}
		t.add(p.Curve, fmt.Sprintf("%s %s", thousands(float64(p.X)), curveX[p.Curve]), name, thousands(float64(p.Rows)),
			fmt.Sprintf("%.2f", p.Seconds), fmt.Sprintf("%.2f", p.StartupSec), thousands(p.RowsPerSec), fmt.Sprintf("%.1f", p.MBPerSec),
			fmt.Sprintf("%.0f", p.PeakRSSMiB), fmt.Sprintf("%.1f", 1e6*p.CPUSeconds/float64(max(p.Rows, 1))),
			fmt.Sprintf("%.1f / %.1f / %.1f / %.1f", p.CPUSeconds, p.MariaDBCPU, p.KafkaCPU, p.OtherCPU))
	}
	return t
}

// curvesMarkdown writes the Markdown report of the curves part.
func (r *results) curvesMarkdown(w io.Writer, jsonName string) {
	r.markdownHead(w, "ingest cost curves: latest run")
	fmt.Fprintf(w, "- results: [%s](%s)\n\n", jsonName, jsonName)
	for _, curve := range curveNames {
		if len(r.series(curve)) > 0 {
			fmt.Fprintf(w, "![%s](curves-%s.png)\n", curve, curve)
		}
	}
	fmt.Fprintln(w, "\n## Points")
	fmt.Fprintln(w)
	r.curvesTable().markdown(w)
	fmt.Fprintln(w, "\n## Growth (cost per unit of work from one point to the next)")
	fmt.Fprintln(w)
	r.checksTable().markdown(w)
	r.markdownErrors(w)
}

// writeCurveCharts draws one chart per curve into dir and returns their paths.
func (r *results) writeCurveCharts(dir string) ([]string, error) {
	var paths []string
	header := r.summary()
	for _, curve := range curveNames {
		all := r.series(curve)
		if len(all) == 0 {
			continue
		}
		secs := []section{
			{title: fmt.Sprintf("%s curve: rows/s", curve)},
			{title: "MB/s (key + value in Kafka)"},
			{title: "start-up: s to the first record"},
			{title: "peak RSS, MiB"},
		}
		for i, ps := range all {
			col := []color.RGBA{colALO, colEOS, colQuarter, colRaw}[i%4]
			for _, p := range ps {
				label := fmt.Sprintf("%s %s %s", thousands(float64(p.X)), p.Phase, strings.TrimSuffix(p.Guarantee, "-once"))
				secs[0].bars = append(secs[0].bars, bar{label: label, value: p.RowsPerSec, text: thousands(p.RowsPerSec), color: col})
				secs[1].bars = append(secs[1].bars, bar{label: label, value: p.MBPerSec, text: fmt.Sprintf("%.1f", p.MBPerSec), color: col})
				secs[2].bars = append(secs[2].bars, bar{label: label, value: p.StartupSec, text: fmt.Sprintf("%.2f", p.StartupSec), color: col})
				secs[3].bars = append(secs[3].bars, bar{label: label, value: p.PeakRSSMiB, text: fmt.Sprintf("%.0f", p.PeakRSSMiB), color: col})
			}
		}
		path := filepath.Join(dir, "curves-"+curve+".png")
		if err := drawChart(path, header, secs); err != nil {
			return paths, fmt.Errorf("chart %s: %w", curve, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
