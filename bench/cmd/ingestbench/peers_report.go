package main

import (
	"fmt"
	"image/color"
	"io"
	"maps"
	"slices"
	"strings"
)

// Targets against the peers (issue 22).
const (
	targetPeerX   = 20 // ingest's rows/s over each judged peer run's (rateJudged)
	targetPeerMem = 10 // each peer configuration's peak RSS over ingest's
)

// evaluatePeers sets each peer measurement's ratio to ingest's and derives the checks.
func (r *results) evaluatePeers() {
	r.Checks = nil
	for _, suite := range r.suites() {
		ingest, ok := r.find(suite, ingestName(atLeastOnce))
		if !ok {
			continue
		}
		for i := range r.Measurements {
			m := &r.Measurements[i]
			if m.Suite != suite || m.Kind != kindPeer || m.RowsPerSec == 0 {
				continue
			}
			m.IngestX = round(ingest.RowsPerSec/m.RowsPerSec, 2)
			c := check{
				Name: fmt.Sprintf("%s: ingest vs %s, rows/s", suite, m.Name),
				Measured: fmt.Sprintf("%.1fx (%s vs %s rows/s)%s", m.IngestX, thousands(ingest.RowsPerSec), thousands(m.RowsPerSec),
					roundRatios(ingest.AllRowsPerSec, m.AllRowsPerSec)),
				Goal: fmt.Sprintf(">= %dx", targetPeerX), Value: m.IngestX, Met: m.IngestX >= targetPeerX,
			}
			if !rateJudged(suite, m.Name) { // issue 22 sets none on this run: for information
				c.Goal, c.Met, c.Info = "none (issue 22 sets none on this run)", true, true
			}
			r.Checks = append(r.Checks, c)
			if m.RowsPerSecFromFirst > 0 && ingest.RowsPerSecFromFirst > 0 {
				v := ingest.RowsPerSecFromFirst / m.RowsPerSecFromFirst
				r.Checks = append(r.Checks, check{
					Name:     fmt.Sprintf("%s: ingest vs %s, rows/s from the first record", suite, m.Name),
					Measured: fmt.Sprintf("%.1fx (%s vs %s rows/s)", v, thousands(ingest.RowsPerSecFromFirst), thousands(m.RowsPerSecFromFirst)),
					Goal:     fmt.Sprintf("(>= %dx)", targetPeerX), Value: round(v, 2), Met: true, Info: true,
				})
			}
			if ingest.PeakRSSMiB > 0 {
				v := m.PeakRSSMiB / ingest.PeakRSSMiB
				r.Checks = append(r.Checks, check{
					Name:     fmt.Sprintf("%s: peak RSS, %s vs ingest", suite, m.Name),
					Measured: fmt.Sprintf("%.1fx (%.0f vs %.0f MiB)", v, m.PeakRSSMiB, ingest.PeakRSSMiB),
					Goal:     fmt.Sprintf(">= %dx (ingest <= 1/%d)", targetPeerMem, targetPeerMem), Value: round(v, 2), Met: v >= targetPeerMem,
				})
			}
			if ingest.CPUSeconds > 0 && m.CPUSeconds > 0 {
				v := (m.CPUSeconds / float64(m.Rows)) / (ingest.CPUSeconds / float64(ingest.Rows))
				r.Checks = append(r.Checks, check{
					Name:     fmt.Sprintf("%s: CPU per row, %s vs ingest", suite, m.Name),
					Measured: fmt.Sprintf("%.1fx (%.1f vs %.1f µs/row)", v, 1e6*m.CPUSeconds/float64(m.Rows), 1e6*ingest.CPUSeconds/float64(ingest.Rows)),
					Goal:     "none", Value: round(v, 2), Met: true, Info: true,
				})
			}
		}
	}
}

// roundRatios describes the per-round ratios of a's rates over b's and their median, when
// there were several rounds.
func roundRatios(a, b []float64) string {
	if len(a) < 2 || len(a) != len(b) {
		return ""
	}
	ratios := make([]float64, len(a))
	parts := make([]string, len(a))
	for i := range a {
		ratios[i] = a[i] / b[i]
		parts[i] = fmt.Sprintf("%.1fx", ratios[i])
	}
	slices.Sort(ratios)
	n := len(ratios)
	median := ratios[n/2]
	if n%2 == 0 {
		median = (ratios[n/2-1] + ratios[n/2]) / 2
	}
	return fmt.Sprintf("; round by round %s, median %.1fx", strings.Join(parts, ", "), median)
}

// peersTable lists the measurements of the peers part.
func (r *results) peersTable() *table {
	t := &table{
		header: []string{"suite", "run", "rows", "time s", "startup s", "rows/s", "rows/s from first record", "ingest x", "peak RSS MiB", "client CPU µs/row", "CPU s client/mariadb/kafka/other", "rows/s of each round"},
		right:  []bool{false, false, true, true, true, true, true, true, true, true, true, true},
	}
	for _, m := range r.Measurements {
		x := ""
		if m.IngestX > 0 {
			x = fmt.Sprintf("%.1fx", m.IngestX)
		}
		name := m.Name
		if strings.HasPrefix(m.Note, "busy") {
			name += " *"
		}
		if strings.Contains(m.Note, "records in the topic") {
			name += " [" + m.Note + "]"
		}
		all := make([]string, len(m.AllRowsPerSec))
		for i, v := range m.AllRowsPerSec {
			all[i] = thousands(v)
		}
		t.add(m.Suite, name, thousands(float64(m.Rows)), fmt.Sprintf("%.2f", m.Seconds), fmt.Sprintf("%.2f", m.StartupSec),
			thousands(m.RowsPerSec), thousands(m.RowsPerSecFromFirst), x, fmt.Sprintf("%.0f", m.PeakRSSMiB),
			fmt.Sprintf("%.1f", 1e6*m.CPUSeconds/float64(max(m.Rows, 1))),
			fmt.Sprintf("%.1f / %.1f / %.1f / %.1f", m.CPUSeconds, m.MariaDBCPU, m.KafkaCPU, m.OtherCPU), strings.Join(all, ", "))
	}
	return t
}

// peersMarkdown writes the Markdown report of the peers part.
func (r *results) peersMarkdown(w io.Writer, jsonName string) {
	r.markdownHead(w, "ingest and its peers: latest run (make bench-peers)")
	fmt.Fprintf(w, "- results: [%s](%s), chart: ![chart](peers.png)\n\n", jsonName, jsonName)
	fmt.Fprintln(w, "## Runs")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Time is from the start of the process to the last record of the run in Kafka (the broker's LogAppendTime); `startup s` to the first. Peak RSS is the highest sum of VmRSS over the process tree (sampled every 100 ms), CPU the tree's user + system time when the last record had arrived.")
	fmt.Fprintln(w)
	r.peersTable().markdown(w)
	if r.anyBusy() {
		fmt.Fprintln(w, "\n"+busyFootnote)
	}
	fmt.Fprintln(w, "\n## Targets (issue 22)")
	fmt.Fprintln(w)
	r.checksTable().markdown(w)
	fmt.Fprintln(w, "\n## Settings of each peer configuration")
	for _, name := range slices.Sorted(maps.Keys(r.PeerSettings)) {
		fmt.Fprintf(w, "\n### %s\n\n", name)
		t := &table{header: []string{"setting", "value"}, right: []bool{false, false}}
		settings := r.PeerSettings[name]
		for _, k := range slices.Sorted(maps.Keys(settings)) {
			t.add("`"+k+"`", "`"+settings[k]+"`")
		}
		t.markdown(w)
	}
	r.markdownErrors(w)
}

var colPeer = color.RGBA{150, 150, 150, 255}

// peersChartSections are the chart of the peers part: rows/s per suite, then peak RSS and
// CPU per row of every run.
func peersChartSections(r *results) []section {
	var secs []section
	col := func(m measurement) color.RGBA {
		if m.Kind == kindPeer {
			return colPeer
		}
		return colALO
	}
	for _, suite := range r.suites() {
		s := section{title: suite + ": rows/s (start to last record)"}
		for _, m := range r.Measurements {
			if m.Suite != suite {
				continue
			}
			text := thousands(m.RowsPerSec)
			if m.IngestX > 0 {
				text += fmt.Sprintf(" (ingest %.1fx)", m.IngestX)
			}
			s.bars = append(s.bars, bar{label: m.Name, value: m.RowsPerSec, text: text, color: col(m)})
		}
		secs = append(secs, s)
	}
	rss := section{title: "peak RSS, MiB"}
	cpu := section{title: "client CPU per row, us"}
	for _, m := range r.Measurements {
		label := strings.TrimSuffix(strings.TrimPrefix(m.Suite, "catch-up"), " txn="+fmt.Sprint(intConfig(r.Config, "peer_txn")))
		if label == "" {
			label = "catch-up"
		}
		label += " " + strings.TrimSuffix(m.Name, " at-least-once")
		rss.bars = append(rss.bars, bar{label: label, value: m.PeakRSSMiB, text: fmt.Sprintf("%.0f", m.PeakRSSMiB), color: col(m)})
		v := 1e6 * m.CPUSeconds / float64(max(m.Rows, 1))
		cpu.bars = append(cpu.bars, bar{label: label, value: v, text: fmt.Sprintf("%.1f", v), color: col(m)})
	}
	return append(secs, rss, cpu)
}
