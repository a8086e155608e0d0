package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// table is a grid of cells rendered as aligned text or as Markdown.
type table struct {
	header []string
	right  []bool // right-align the column (numbers)
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) widths() []int {
	w := make([]int, len(t.header))
	for i, h := range t.header {
		w[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			w[i] = max(w[i], utf8.RuneCountInString(c))
		}
	}
	return w
}

func pad(s string, w int, right bool) string {
	n := w - utf8.RuneCountInString(s)
	if n <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", n) + s
	}
	return s + strings.Repeat(" ", n)
}

// text renders the table with aligned columns.
func (t *table) text(w io.Writer) {
	ws := t.widths()
	line := func(cells []string) {
		out := make([]string, len(cells))
		for i, c := range cells {
			out[i] = pad(c, ws[i], t.right[i])
		}
		fmt.Fprintln(w, strings.TrimRight(strings.Join(out, "  "), " "))
	}
	line(t.header)
	total := len(ws)*2 - 2
	for _, x := range ws {
		total += x
	}
	fmt.Fprintln(w, strings.Repeat("-", total))
	for _, r := range t.rows {
		line(r)
	}
}

// markdown renders the table as a GitHub table.
func (t *table) markdown(w io.Writer) {
	fmt.Fprintln(w, "| "+strings.Join(t.header, " | ")+" |")
	seps := make([]string, len(t.header))
	for i := range seps {
		seps[i] = "---"
		if t.right[i] {
			seps[i] = "---:"
		}
	}
	fmt.Fprintln(w, "| "+strings.Join(seps, " | ")+" |")
	for _, r := range t.rows {
		fmt.Fprintln(w, "| "+strings.Join(r, " | ")+" |")
	}
}

// throughputTable lists every throughput measurement with its ratio to the limit.
func (r *results) throughputTable() *table {
	t := &table{
		header: []string{"suite", "run", "rows", "time s", "startup s", "rows/s", "MB/s", "vs limit", "peak RSS MiB", "client CPU µs/row", "CPU s client/mariadb/kafka/other"},
		right:  []bool{false, false, true, true, true, true, true, true, true, true, true},
	}
	for _, m := range r.Measurements {
		ratio, rss, startup := "", "", ""
		cpu := fmt.Sprintf("%.1f / %.1f / %.1f / %.1f", m.CPUSeconds, m.MariaDBCPU, m.KafkaCPU, m.OtherCPU)
		if m.Ratio > 0 {
			ratio = fmt.Sprintf("%.0f%% of %s", 100*m.Ratio, shortName(m.Limit))
		}
		if m.Kind == kindIngest {
			rss, startup = fmt.Sprintf("%.0f", m.PeakRSSMiB), fmt.Sprintf("%.2f", m.StartupSec)
		}
		name := m.Name
		if strings.HasPrefix(m.Note, "busy") {
			name += " *"
		}
		if strings.Contains(m.Note, "records in the topic") {
			name += " [" + m.Note + "]"
		}
		t.add(m.Suite, name, thousands(float64(m.Rows)), fmt.Sprintf("%.2f", m.Seconds), startup, thousands(m.RowsPerSec),
			fmt.Sprintf("%.1f", m.MBPerSec), ratio, rss, fmt.Sprintf("%.1f", 1e6*m.CPUSeconds/float64(max(m.Rows, 1))), cpu)
	}
	return t
}

// latencyTable lists the streaming-latency runs.
func (r *results) latencyTable() *table {
	t := &table{
		header: []string{"latency run", "rows/s (target)", "rows/txn", "received", "p50 ms", "p90 ms", "p99 ms", "max ms", "peak RSS MiB", "CPU s client/other"},
		right:  []bool{false, true, true, true, true, true, true, true, true, true},
	}
	for _, l := range r.Latency {
		rss, cpu := fmt.Sprintf("%.0f", l.PeakRSSMiB), fmt.Sprintf("%.1f / %.1f", l.CPUSeconds, l.OtherCPU)
		if l.Name == nameRawRelay {
			rss = ""
		}
		name := l.Name
		if l.Note != "" {
			name += " *"
		}
		t.add(name, fmt.Sprintf("%s (%d)", thousands(l.Rate), l.TargetRate), fmt.Sprintf("%.0f", l.TxnRows),
			fmt.Sprintf("%d/%d", l.Received, l.Rows), fmt.Sprintf("%.1f", l.P50ms), fmt.Sprintf("%.1f", l.P90ms),
			fmt.Sprintf("%.1f", l.P99ms), fmt.Sprintf("%.1f", l.Maxms), rss, cpu)
	}
	return t
}

// checksTable lists the targets.
func (r *results) checksTable() *table {
	t := &table{header: []string{"target", "measured", "goal", "met"}, right: []bool{false, false, false, false}}
	for _, c := range r.Checks {
		met := "MET"
		switch {
		case !c.Met:
			met = "NOT MET"
		case c.Info:
			met = "(info)"
		}
		t.add(c.Name, c.Measured, c.Goal, met)
	}
	return t
}

const busyFootnote = "* busy: other processes of the machine used more than 15% of its CPUs during the run (the `other` CPU column); a quiet machine gives higher figures."

// anyBusy reports whether a run is marked busy.
func (r *results) anyBusy() bool {
	for _, m := range r.Measurements {
		if strings.HasPrefix(m.Note, "busy") {
			return true
		}
	}
	for _, l := range r.Latency {
		if l.Note != "" {
			return true
		}
	}
	return false
}

// summary is the header of the reports: the machine and the data.
func (r *results) summary() []string {
	m := r.Machine
	title := "ingest benchmark"
	if r.Mode == partPeers {
		title = "ingest and its peers"
	}
	if r.Mode == partCurves {
		title = "ingest cost curves"
	}
	lines := []string{
		fmt.Sprintf("%s, %s on %s (%s)", title, r.Started.Format("2006-01-02 15:04 MST"), m.Host, m.GitCommit),
		fmt.Sprintf("machine: %d CPUs %s, %.1f GiB, Linux %s, load average %s at start, %s at the end", m.CPUs, m.CPUModel,
			m.MemoryGiB, m.Kernel, m.LoadAvg, m.LoadAvgEnd),
		fmt.Sprintf("software: %s; ingest %s; MariaDB %s; Kafka %s", m.GoVersion, m.Ingest, m.MariaDB, m.Kafka),
		fmt.Sprintf("data: N = %s rows, %d columns, InnoDB avg row %d B, SELECT payload %.0f B/row, Kafka key+value %.0f B/record; %d partitions, %s; best of %d run(s) each",
			thousands(float64(intConfig(r.Config, "rows"))), r.Table.Columns, r.Table.AvgRowBytes, r.Table.ScanBytesRow,
			r.Table.RecordBytesRow, m.Partitions, m.Compressed, max(intConfig(r.Config, "repeat"), 1)),
	}
	if r.Mode == partPeers {
		lines[3] = fmt.Sprintf("data: N = %s rows, %d columns, InnoDB avg row %d B; catch-up: N changes in transactions of %d rows; %d partitions; %d round(s), the clients alternated, the fastest run of each kept",
			thousands(float64(intConfig(r.Config, "rows"))), r.Table.Columns, r.Table.AvgRowBytes, intConfig(r.Config, "peer_txn"),
			m.Partitions, max(intConfig(r.Config, "repeat"), 1))
		lines = append(lines, "peers: "+r.PeerVersions)
	}
	if r.Mode == partCurves {
		lines[3] = fmt.Sprintf("data: %s; %d partitions, %s, pipeline.parallelism %d; one run per point", curveData(r.Config),
			m.Partitions, m.Compressed, intConfig(r.Config, "parallelism"))
	}
	return lines
}

func intConfig(c map[string]any, key string) int { return intOf(c[key]) }

// intOf is v as an int: an int as the suite sets it, or a float64 as a results file read
// back holds it (-rejudge).
func intOf(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return 0
}

// print writes the text report.
func (r *results) print(w io.Writer) {
	fmt.Fprintln(w)
	for _, l := range r.summary() {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w)
	switch r.Mode {
	case partPeers:
		r.peersTable().text(w)
	case partCurves:
		r.curvesTable().text(w)
	default:
		r.throughputTable().text(w)
	}
	if len(r.Latency) > 0 {
		fmt.Fprintln(w)
		r.latencyTable().text(w)
	}
	if r.anyBusy() {
		fmt.Fprintln(w, busyFootnote)
	}
	fmt.Fprintln(w)
	r.checksTable().text(w)
	for _, e := range r.Errors {
		fmt.Fprintln(w, "ERROR:", e)
	}
}

// markdown writes the Markdown report.
func (r *results) markdown(w io.Writer, jsonName string) {
	if r.Mode == partPeers {
		r.peersMarkdown(w, jsonName)
		return
	}
	if r.Mode == partCurves {
		r.curvesMarkdown(w, jsonName)
		return
	}
	r.markdownHead(w, "ingest benchmark: latest run")
	fmt.Fprintf(w, "- results: [%s](%s), chart: ![chart](latest.png)\n\n", jsonName, jsonName)
	fmt.Fprintln(w, "## Throughput")
	fmt.Fprintln(w)
	r.throughputTable().markdown(w)
	if len(r.Latency) > 0 {
		fmt.Fprintln(w, "\n## Streaming latency (commit in MariaDB to readable in Kafka, read_committed)")
		fmt.Fprintln(w)
		r.latencyTable().markdown(w)
	}
	if r.anyBusy() {
		fmt.Fprintln(w, "\n"+busyFootnote)
	}
	fmt.Fprintln(w, "\n## Targets")
	fmt.Fprintln(w)
	r.checksTable().markdown(w)
	r.markdownErrors(w)
}

// markdownHead writes a Markdown report's title and the run's summary as a list.
func (r *results) markdownHead(w io.Writer, title string) {
	fmt.Fprintln(w, "# "+title)
	fmt.Fprintln(w)
	for _, l := range r.summary() {
		fmt.Fprintln(w, "- "+l)
	}
}

// markdownErrors writes the run's errors at the end of a Markdown report.
func (r *results) markdownErrors(w io.Writer) {
	for _, e := range r.Errors {
		fmt.Fprintln(w, "\n**ERROR:** "+e)
	}
}

// write saves <date>-<host>.json, latest.md and latest.png in dir.
func (r *results) write(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	jsonName := fmt.Sprintf("%s-%s.json", r.Started.Format("2006-01-02T1504"), r.Machine.Host)
	base := "latest"
	if r.Mode == partPeers {
		jsonName, base = "peers-"+jsonName, "peers"
	}
	if r.Mode == partCurves {
		jsonName, base = "curves-"+jsonName, "curves"
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	paths := []string{filepath.Join(dir, jsonName), filepath.Join(dir, base+".md"), filepath.Join(dir, base+".png")}
	if err := os.WriteFile(paths[0], append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	var md strings.Builder
	r.markdown(&md, jsonName)
	if err := os.WriteFile(paths[1], []byte(md.String()), 0o644); err != nil {
		return nil, err
	}
	if r.Mode == partCurves {
		charts, err := r.writeCurveCharts(dir)
		return append(paths[:2], charts...), err
	}
	if err := writeChart(paths[2], r); err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	return paths, nil
}
