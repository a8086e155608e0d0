package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Kinds of measurement.
const (
	kindRaw    = "raw"
	kindIngest = "ingest"
)

// measurement is one throughput run: a raw limit or an ingest run.
type measurement struct {
	Suite      string  `json:"suite"` // "snapshot", "catch-up txn=100", ...
	Name       string  `json:"name"`  // "raw SELECT * scan", "ingest at-least-once", ...
	Kind       string  `json:"kind"`  // raw or ingest
	Guarantee  string  `json:"guarantee,omitempty"`
	Rows       int     `json:"rows"`  // rows (changes) carried; for ingest, records verified in the topic
	Bytes      int64   `json:"bytes"` // payload bytes (see rawResult.Bytes); for ingest, key+value bytes in Kafka
	Seconds    float64 `json:"seconds"`
	RowsPerSec float64 `json:"rows_per_s"`
	// RowsPerSecFromFirst is the rows over the time from the first record in Kafka to the
	// last (the peers part).
	RowsPerSecFromFirst float64 `json:"rows_per_s_from_first_record,omitempty"`
	// IngestX is ingest's rows/s over this peer's in the same suite (the peers part).
	IngestX    float64 `json:"ingest_x,omitempty"`
	MBPerSec   float64 `json:"mb_per_s"`
	PeakRSSMiB float64 `json:"peak_rss_mib,omitempty"` // ingest's peak resident set
	CPUSeconds float64 `json:"cpu_s"`                  // CPU of the measured client: ingest, or this program for a raw limit
	MariaDBCPU float64 `json:"mariadb_cpu_s,omitempty"`
	KafkaCPU   float64 `json:"kafka_cpu_s,omitempty"`
	OtherCPU   float64 `json:"other_cpu_s,omitempty"` // CPU of other processes of the machine meanwhile
	StartupSec float64 `json:"startup_s,omitempty"`   // from starting ingest to its first record in Kafka
	Limit      string  `json:"limit,omitempty"`       // the raw limit the ratio is taken against
	Ratio      float64 `json:"ratio,omitempty"`       // RowsPerSec / the limit's RowsPerSec
	// AllRowsPerSec are the rates of every repetition (-repeat); the fastest is kept.
	AllRowsPerSec []float64 `json:"all_rows_per_s,omitempty"`
	Note          string    `json:"note,omitempty"`
}

// latencyRun is one streaming-latency run.
type latencyRun struct {
	Name       string  `json:"name"` // "raw go-mysql -> franz-go" or "ingest <guarantee>"
	Guarantee  string  `json:"guarantee"`
	TargetRate int     `json:"target_rows_per_s"`
	Rate       float64 `json:"achieved_rows_per_s"`
	Seconds    float64 `json:"seconds"`
	TxnRows    float64 `json:"rows_per_txn"`
	Rows       int     `json:"rows"`
	Received   int     `json:"received"`
	P50ms      float64 `json:"p50_ms"`
	P90ms      float64 `json:"p90_ms"`
	P99ms      float64 `json:"p99_ms"`
	Maxms      float64 `json:"max_ms"`
	PeakRSSMiB float64 `json:"peak_rss_mib,omitempty"`
	CPUSeconds float64 `json:"cpu_s"`       // of the pipeline: ingest, or this program for the raw relay
	OtherCPU   float64 `json:"other_cpu_s"` // of other processes of the machine meanwhile
	Note       string  `json:"note,omitempty"`
}

// check is one target and whether it was met.
type check struct {
	Name     string  `json:"name"`
	Measured string  `json:"measured"`
	Goal     string  `json:"goal"`
	Value    float64 `json:"value"`
	Met      bool    `json:"met"`
	Info     bool    `json:"info,omitempty"` // no target: shown for information
}

// results is everything a run of the suite produced.
type results struct {
	Started      time.Time      `json:"started"`
	Seconds      float64        `json:"seconds"`
	Machine      machine        `json:"machine"`
	Config       map[string]any `json:"config"`
	Table        tableInfo      `json:"table"`
	Measurements []measurement  `json:"measurements"`
	Latency      []latencyRun   `json:"latency"`
	Checks       []check        `json:"checks"`
	Errors       []string       `json:"errors,omitempty"`

	// Mode is "peers" for a run of the peers part (make bench-peers).
	Mode string `json:"mode,omitempty"`
	// PeerVersions names the peers' software; PeerSettings are each configuration's
	// settings (peers.go).
	PeerVersions string                       `json:"peer_versions,omitempty"`
	PeerSettings map[string]map[string]string `json:"peer_settings,omitempty"`
	// Curves are the points of the curves part (curves.go).
	Curves []curvePoint `json:"curves,omitempty"`
}

// tableInfo describes the generated rows.
type tableInfo struct {
	Columns        int     `json:"columns"`
	AvgRowBytes    int64   `json:"innodb_avg_row_bytes"`
	ScanBytesRow   float64 `json:"select_bytes_per_row"`
	RecordBytesRow float64 `json:"kafka_bytes_per_record"`
}

// newMeasurement fills the rates of a measurement.
func newMeasurement(suite, name, kind string, rows int, bytes int64, wall time.Duration) measurement {
	s := wall.Seconds()
	return measurement{Suite: suite, Name: name, Kind: kind, Rows: rows, Bytes: bytes, Seconds: round(s, 3),
		RowsPerSec: round(float64(rows)/s, 0), MBPerSec: round(float64(bytes)/s/1e6, 1)}
}

func (r *results) add(m measurement) { r.Measurements = append(r.Measurements, m) }

// find returns the measurement of suite and name.
func (r *results) find(suite, name string) (*measurement, bool) {
	for i := range r.Measurements {
		if m := &r.Measurements[i]; m.Suite == suite && m.Name == name {
			return m, true
		}
	}
	return nil, false
}

// Measurement names.
const (
	// nameScan is the plain text-protocol scan, shown for information.
	nameScan = "raw SELECT * scan"
	// namePreparedScan is the scan as a prepared statement (binary protocol), as ingest's
	// chunk SELECTs: the snapshot's limit.
	namePreparedScan = "raw prepared SELECT * scan"
	// nameRead is the binlog read off the replication connection, events framed and not
	// decoded (binlogread.go): the catch-up's limit.
	nameRead = "raw binlog read"
	// nameDecode is go-mysql's BinlogSyncer decoding the same binlog, shown for information.
	nameDecode   = "raw go-mysql decode"
	nameProduce  = "raw franz-go produce"
	nameRawRelay = "raw go-mysql -> franz-go"
)

func ingestName(g string) string        { return "ingest " + g }
func ingestQuarterName(g string) string { return "ingest " + g + " (N/4)" }

// ingestChangeLogName names the run of sink type kafka with value.format debezium-json.
func ingestChangeLogName(g string) string { return "ingest kafka debezium-json " + g }

// ingestTransformName names the run with a transform (benchProjection, benchFilter).
func ingestTransformName(g string) string { return "ingest transform " + g }

// Targets of issue 22.
const (
	targetSnapshot     = 0.75 // of min(raw prepared scan, raw produce)
	targetCatchup      = 0.80 // of min(raw binlog read, raw produce)
	targetEOS          = 0.90 // exactly-once over at-least-once
	targetP99OverRelay = 5.0  // ms: at-least-once p99 over the raw relay's, at the target rate
	targetRSSMiB       = 128
	targetRSSFlatMax   = 1.25 // peak RSS at N over peak RSS at N/4
)

// evaluate orders the measurements (by suite, the raw limits first), sets each ingest
// measurement's ratio to its limit and derives the checks.
func (r *results) evaluate(guarantees []string) {
	if r.Mode == partPeers {
		r.evaluatePeers()
		return
	}
	if r.Mode == partCurves {
		r.evaluateCurves()
		return
	}
	order := map[string]int{}
	for i, s := range r.suites() {
		order[s] = i
	}
	slices.SortStableFunc(r.Measurements, func(a, b measurement) int {
		if c := cmp.Compare(order[a.Suite], order[b.Suite]); c != 0 {
			return c
		}
		return cmp.Compare(b.Kind, a.Kind) // "raw" before "ingest"
	})
	r.Checks = nil
	for _, suite := range r.suites() {
		first, info := nameRead, nameDecode
		target := targetCatchup
		if suite == "snapshot" {
			first, info, target = namePreparedScan, nameScan, targetSnapshot
		}
		limit := r.slower(suite, first, nameProduce)
		for _, g := range guarantees {
			m, ok := r.find(suite, ingestName(g))
			if !ok || limit == nil {
				continue
			}
			m.Limit, m.Ratio = limit.Name, round(m.RowsPerSec/limit.RowsPerSec, 3)
			r.Checks = append(r.Checks, check{
				Name:     fmt.Sprintf("%s %s vs min(%s, %s)", suite, g, shortName(first), shortName(nameProduce)),
				Measured: fmt.Sprintf("%.0f%% (%s of %s rows/s)", 100*m.Ratio, thousands(m.RowsPerSec), thousands(limit.RowsPerSec)),
				Goal:     fmt.Sprintf(">= %.0f%%", 100*target), Value: m.Ratio, Met: m.Ratio >= target,
			})
			r.checkRounds(suite, g, first, target)
			r.checkInfoLimit(suite, g, m, info)
		}
		r.checkEOS(suite)
		r.checkChangeLog(suite, guarantees)
		r.checkTransform(suite, guarantees)
	}
	r.checkLatency()
	r.checkRSS(guarantees)
}

// suites lists the throughput suites in order of first appearance.
// checkRounds adds, for information, the ratio of each round's ingest run to the slower
// raw limit of the same round (the runs of a round are minutes apart at most, while this
// VM's speed drifts by up to 2x over minutes), and their median. The target is judged on
// the fastest runs only; this shows how much of a verdict is the machine's drift.
func (r *results) checkRounds(suite, g, first string, target float64) {
	m, ok1 := r.find(suite, ingestName(g))
	src, ok2 := r.find(suite, first)
	produce, ok3 := r.find(suite, nameProduce)
	if !ok1 || !ok2 || !ok3 {
		return
	}
	n := len(m.AllRowsPerSec)
	if n < 2 || len(src.AllRowsPerSec) != n || len(produce.AllRowsPerSec) != n {
		return
	}
	ratios := make([]float64, n)
	parts := make([]string, n)
	for i := range n {
		ratios[i] = m.AllRowsPerSec[i] / min(src.AllRowsPerSec[i], produce.AllRowsPerSec[i])
		parts[i] = fmt.Sprintf("%.0f%%", 100*ratios[i])
	}
	slices.Sort(ratios)
	median := ratios[n/2]
	if n%2 == 0 {
		median = (ratios[n/2-1] + ratios[n/2]) / 2
	}
	r.Checks = append(r.Checks, check{
		Name:     fmt.Sprintf("%s %s vs min(%s, %s), round by round", suite, g, shortName(first), shortName(nameProduce)),
		Measured: fmt.Sprintf("median %.0f%% (rounds: %s)", 100*median, strings.Join(parts, ", ")),
		Goal:     fmt.Sprintf("(>= %.0f%%)", 100*target), Value: round(median, 3), Met: true, Info: true,
	})
}

// checkInfoLimit adds, for information, the ratio of an ingest run to the slower of the
// limit shown for information (the plain scan, go-mysql's decode) and the raw produce.
func (r *results) checkInfoLimit(suite, g string, m *measurement, name string) {
	limit, ok := r.find(suite, name)
	if !ok {
		return
	}
	if produce, ok := r.find(suite, nameProduce); ok && produce.RowsPerSec < limit.RowsPerSec {
		limit = produce
	}
	v := m.RowsPerSec / limit.RowsPerSec
	r.Checks = append(r.Checks, check{
		Name:     fmt.Sprintf("%s %s vs min(%s, %s)", suite, g, shortName(name), shortName(nameProduce)),
		Measured: fmt.Sprintf("%.0f%% (%s of %s rows/s)", 100*v, thousands(m.RowsPerSec), thousands(limit.RowsPerSec)),
		Goal:     "none: for information", Value: round(v, 3), Met: true, Info: true,
	})
}

func (r *results) suites() []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range r.Measurements {
		if !seen[m.Suite] {
			seen[m.Suite] = true
			out = append(out, m.Suite)
		}
	}
	return out
}

// slower returns the slower of two raw measurements of suite (nil if neither exists).
func (r *results) slower(suite, a, b string) *measurement {
	ma, okA := r.find(suite, a)
	mb, okB := r.find(suite, b)
	switch {
	case okA && okB && mb.RowsPerSec < ma.RowsPerSec:
		return mb
	case okA:
		return ma
	case okB:
		return mb
	}
	return nil
}

func (r *results) checkEOS(suite string) {
	alo, ok1 := r.find(suite, ingestName(atLeastOnce))
	eos, ok2 := r.find(suite, ingestName(exactlyOnce))
	if !ok1 || !ok2 {
		return
	}
	v := eos.RowsPerSec / alo.RowsPerSec
	r.Checks = append(r.Checks, check{
		Name:     suite + " exactly-once vs at-least-once",
		Measured: fmt.Sprintf("%.0f%% (%s vs %s rows/s)", 100*v, thousands(eos.RowsPerSec), thousands(alo.RowsPerSec)),
		Goal:     fmt.Sprintf(">= %.0f%%", 100*targetEOS), Value: round(v, 3), Met: v >= targetEOS,
	})
}

// checkChangeLog adds, for information, the ratio of the type kafka (debezium-json) run
// of suite to the upsert-kafka run of the same guarantee, in rows/s and in bytes: a change
// event carries the before image too and is larger.
func (r *results) checkChangeLog(suite string, guarantees []string) {
	for _, g := range guarantees {
		k, ok1 := r.find(suite, ingestChangeLogName(g))
		u, ok2 := r.find(suite, ingestName(g))
		if !ok1 || !ok2 || u.RowsPerSec == 0 || u.MBPerSec == 0 {
			continue
		}
		v := k.RowsPerSec / u.RowsPerSec
		r.Checks = append(r.Checks, check{
			Name: fmt.Sprintf("%s type kafka debezium-json vs upsert-kafka (%s)", suite, g),
			Measured: fmt.Sprintf("%.0f%% (%s vs %s rows/s; %.1f vs %.1f MB/s, records x%.2f the bytes)", 100*v,
				thousands(k.RowsPerSec), thousands(u.RowsPerSec), k.MBPerSec, u.MBPerSec,
				float64(k.Bytes)/float64(max(u.Bytes, 1))),
			Goal: "none: for information", Value: round(v, 3), Met: true, Info: true,
		})
	}
}

// checkTransform adds, for information, the ratio of the run with a transform (4 computed
// columns and a filter) to the plain run of the same guarantee, in rows/s.
func (r *results) checkTransform(suite string, guarantees []string) {
	for _, g := range guarantees {
		tr, ok1 := r.find(suite, ingestTransformName(g))
		u, ok2 := r.find(suite, ingestName(g))
		if !ok1 || !ok2 || u.RowsPerSec == 0 {
			continue
		}
		v := tr.RowsPerSec / u.RowsPerSec
		r.Checks = append(r.Checks, check{
			Name: fmt.Sprintf("%s transform (4 computed columns, a filter) vs plain (%s)", suite, g),
			Measured: fmt.Sprintf("%.0f%% (%s vs %s rows/s; client CPU %.1f vs %.1f µs/row)", 100*v,
				thousands(tr.RowsPerSec), thousands(u.RowsPerSec), cpuPerRow(tr), cpuPerRow(u)),
			Goal: "none: for information", Value: round(v, 3), Met: true, Info: true,
		})
	}
}

// cpuPerRow is m's client CPU time per row, in microseconds.
func cpuPerRow(m *measurement) float64 { return m.CPUSeconds * 1e6 / float64(max(m.Rows, 1)) }

// checkLatency judges the at-least-once p99 at the target rate against the raw relay's
// p99 at the same rate; the exactly-once runs and the runs at the high rate are shown for
// information.
func (r *results) checkLatency() {
	relay := map[int]latencyRun{}
	for _, l := range r.Latency {
		if l.Name == nameRawRelay {
			relay[l.TargetRate] = l
		}
	}
	base := intConfig(r.Config, "latency_rate")
	for _, l := range r.Latency {
		if l.Name == nameRawRelay {
			continue
		}
		raw, ok := relay[l.TargetRate]
		c := check{
			Name:     fmt.Sprintf("p99 latency %s at %d rows/s", l.Guarantee, l.TargetRate),
			Measured: fmt.Sprintf("%.1f ms (p50 %.1f, max %.1f; raw relay p50 %.1f, p99 %.1f ms)", l.P99ms, l.P50ms, l.Maxms, raw.P50ms, raw.P99ms),
			Goal:     fmt.Sprintf("<= raw relay's p99 + %.0f ms", targetP99OverRelay), Value: l.P99ms,
			Met: ok && l.P99ms <= raw.P99ms+targetP99OverRelay && l.Received == l.Rows,
		}
		switch {
		case l.Guarantee == exactlyOnce:
			c.Goal = "none: read_committed waits for sink.transaction.interval (1s)"
			c.Met, c.Info = l.Received == l.Rows, true
		case l.TargetRate != base:
			c.Goal = "none: the second rate, for information"
			c.Met, c.Info = l.Received == l.Rows, true
		}
		r.Checks = append(r.Checks, c)
	}
}

func (r *results) checkRSS(guarantees []string) {
	var peak float64
	var which string
	for _, m := range r.Measurements {
		if m.Kind == kindIngest && m.PeakRSSMiB > peak {
			peak, which = m.PeakRSSMiB, m.Suite+" "+m.Name
		}
	}
	for _, l := range r.Latency {
		if l.Name != nameRawRelay && l.PeakRSSMiB > peak {
			peak, which = l.PeakRSSMiB, "latency "+l.Guarantee
		}
	}
	if peak > 0 {
		r.Checks = append(r.Checks, check{
			Name: "peak RSS of every ingest run", Measured: fmt.Sprintf("%.0f MiB (%s)", peak, which),
			Goal: fmt.Sprintf("<= %d MiB", targetRSSMiB), Value: peak, Met: peak <= targetRSSMiB,
		})
	}
	for _, g := range guarantees {
		full, ok1 := r.find("snapshot", ingestName(g))
		quarter, ok2 := r.find("snapshot", ingestQuarterName(g))
		if !ok1 || !ok2 || quarter.PeakRSSMiB == 0 {
			continue
		}
		v := full.PeakRSSMiB / quarter.PeakRSSMiB
		r.Checks = append(r.Checks, check{
			Name:     fmt.Sprintf("peak RSS flat in N (snapshot %s, N vs N/4)", g),
			Measured: fmt.Sprintf("%.0f vs %.0f MiB (x%.2f)", full.PeakRSSMiB, quarter.PeakRSSMiB, v),
			Goal:     fmt.Sprintf("<= x%.2f", targetRSSFlatMax), Value: round(v, 3), Met: v <= targetRSSFlatMax,
		})
	}
}

func shortName(name string) string {
	switch name {
	case nameScan:
		return "scan"
	case nameDecode:
		return "decode"
	case namePreparedScan:
		return "prepared scan"
	case nameRead:
		return "binlog read"
	case nameProduce:
		return "produce"
	}
	return name
}

func round(v float64, digits int) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// thousands formats v rounded to an integer with thousands separators.
func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
