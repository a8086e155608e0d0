package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// suite holds what the parts of a run share.
type suite struct {
	cfg    config
	db     *sql.DB
	kafka  *kafka
	dir    string // pipeline files, state directories and logs of this run
	runID  string
	flavor string // go-mysql flavor: mariadb or mysql
	res    *results
	topics []string // created by this run
}

func newSuite(ctx context.Context, cfg config) (*suite, error) {
	s := &suite{cfg: cfg, res: &results{Started: time.Now()}}
	var err error
	if s.db, err = openDB(ctx, cfg.svc); err != nil {
		return nil, err
	}
	if s.kafka, err = newKafka(cfg.svc.Kafka, cfg.Partitions); err != nil {
		s.db.Close()
		return nil, err
	}
	if s.dir, err = os.MkdirTemp("", "ingestbench-"); err != nil {
		s.close(ctx)
		return nil, err
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	s.runID = s.res.Started.UTC().Format("20060102t150405") + "-" + hex.EncodeToString(b)
	s.res.Machine = describeMachine(ctx, cfg)
	s.res.Machine.MariaDB = serverVersion(ctx, s.db)
	s.res.Machine.Kafka = s.kafka.brokerVersion(ctx, cfg.svc.KafkaLibs)
	s.res.Table.Columns = strings.Count(tableColumns, "\n") + 1
	s.flavor = "mysql"
	if strings.Contains(strings.ToLower(s.res.Machine.MariaDB), "mariadb") {
		s.flavor = "mariadb"
	}
	s.res.Config = map[string]any{
		"rows": cfg.Rows, "single_txn_rows": cfg.SingleRows, "latency_seconds": cfg.Seconds, "latency_rate": cfg.Rate, "latency_high_rate": cfg.HighRate,
		"partitions": cfg.Partitions, "compression": cfg.Compression, "parallelism": cfg.Parallelism,
		"txn_sizes": cfg.TxnSizes, "repeat": cfg.Repeat, "peer_txn": cfg.PeerTxn, "peers": cfg.Peers, "guarantees": cfg.Guarantees, "parts": cfg.Parts, "profile": cfg.Profile != "",
	}
	// Topics of earlier runs go first: their data would only take the broker's disk.
	if err := s.kafka.deleteTopics(ctx); err != nil {
		log.Printf("warning: %v", err)
	}
	return s, nil
}

// close deletes this run's topics (unless kept) and the temporary directory (unless a
// part failed: its logs are there).
func (s *suite) close(ctx context.Context) {
	if s.kafka != nil {
		if !s.cfg.KeepTopics && len(s.topics) > 0 {
			if err := s.kafka.deleteTopics(ctx, s.topics...); err != nil {
				log.Printf("warning: %v", err)
			}
		}
		s.kafka.Close()
	}
	if s.db != nil {
		s.db.Close()
	}
	if s.dir != "" && len(s.res.Errors) == 0 {
		os.RemoveAll(s.dir)
	} else if s.dir != "" {
		log.Printf("pipeline files and ingest logs kept in %s", s.dir)
	}
}

// topic returns this run's name for the topic called label.
func (s *suite) topic(label string) string {
	t := topicPrefix() + s.runID + "." + label
	s.topics = append(s.topics, t)
	return t
}

// fastest keeps the fastest of a measurement's repeated runs, with the highest peak RSS of
// them all and the rate of each.
type fastest struct {
	best measurement
	all  []float64
}

// add records a run and reports whether it is the fastest so far.
func (f *fastest) add(m measurement) bool {
	peak := max(m.PeakRSSMiB, f.best.PeakRSSMiB)
	faster := len(f.all) == 0 || m.RowsPerSec > f.best.RowsPerSec
	if faster {
		f.best = m
	}
	f.best.PeakRSSMiB = peak
	f.all = append(f.all, m.RowsPerSec)
	return faster
}

// result is the fastest run, with the rates of all when there were several.
func (f *fastest) result() measurement {
	m := f.best
	if len(f.all) > 1 {
		m.AllRowsPerSec = f.all
	}
	return m
}

// ingestRun runs ingest until caught up on spec (-repeat times, each with its own
// pipeline name and topic), checks that each topic holds want records, and records the
// fastest run with the highest peak RSS of all.
func (s *suite) ingestRun(ctx context.Context, suiteName, name string, spec pipelineSpec, want int) error {
	var f fastest
	for i := range s.cfg.Repeat {
		m, _, err := s.ingestOnce(ctx, suiteName, name, s.repeated(spec, i), want, 0)
		if err != nil {
			return err
		}
		f.add(m)
	}
	s.addIngest(f.result())
	return nil
}

// repeated returns the spec of the i-th run of spec (from 0), with a pipeline name and
// topic of its own.
func (s *suite) repeated(spec pipelineSpec, i int) pipelineSpec {
	if i == 0 {
		return spec
	}
	spec.Name, spec.Topic = fmt.Sprintf("%s-r%d", spec.Name, i+1), fmt.Sprintf("%s-r%d", spec.Topic, i+1)
	s.topics = append(s.topics, spec.Topic)
	return spec
}

// addIngest records an ingest measurement.
func (s *suite) addIngest(m measurement) {
	s.res.add(m)
	if s.res.Table.RecordBytesRow == 0 {
		s.res.Table.RecordBytesRow = round(float64(m.Bytes)/float64(m.Rows), 1)
	}
}

// rawSource is a raw limit of reading the source: a name and a measurement.
type rawSource struct {
	name    string
	measure func() (rawResult, error)
}

// rounds measures a suite's raw source limits (sources: the first is the limit, the others
// are shown for information), its ingest runs (spec, one per guarantee, want records each)
// and the raw produce limit (on the records of the first ingest run) in -repeat rounds of
// one run of each, and records the fastest run of each; it returns the fastest run of the
// first source. Interleaved, the runs compared with each other are taken minutes apart at
// most: this VM's speed drifts by up to 2x over minutes, and measuring all repeats of the
// scan before all of ingest's made the ratio depend on when each came.
func (s *suite) rounds(ctx context.Context, suiteName string, sources []rawSource,
	spec func(guarantee string) pipelineSpec, want int, produceLabel string) (rawResult, error) {
	var produce fastest
	src := make([]fastest, len(sources))
	var srcBest rawResult
	ingest := make([]fastest, len(s.cfg.Guarantees))
	produceTopic := ""
	var sample []*kgo.Record
	for round := range s.cfg.Repeat {
		for i, source := range sources {
			m, r, err := s.rawOnce(suiteName, source.name, source.measure)
			if err != nil {
				return r, err
			}
			if src[i].add(m) && i == 0 {
				srcBest = r
			}
		}
		for i, g := range s.cfg.Guarantees {
			keep := 0
			if round == 0 && i == 0 {
				keep = s.cfg.SampleSize
			}
			m, read, err := s.ingestOnce(ctx, suiteName, ingestName(g), s.repeated(spec(g), round), want, keep)
			if err != nil {
				return srcBest, err
			}
			ingest[i].add(m)
			if i != 0 {
				continue
			}
			if round == 0 {
				if sample = read.Sample; len(sample) == 0 {
					return srcBest, fmt.Errorf("%s: no sample records for the raw producer", suiteName)
				}
				produceTopic = s.topic(produceLabel)
				if err := s.kafka.createTopic(ctx, produceTopic, false); err != nil {
					return srcBest, err
				}
			}
			m, _, err = s.rawOnce(suiteName, nameProduce, func() (rawResult, error) {
				return rawProduce(ctx, s.cfg, produceTopic, sample, want)
			})
			if err != nil {
				return srcBest, err
			}
			produce.add(m)
		}
	}
	for i := range src {
		s.res.add(src[i].result())
	}
	for i := range ingest {
		s.addIngest(ingest[i].result())
		if i == 0 {
			s.res.add(produce.result())
		}
	}
	return srcBest, nil
}

// ingestOnce runs ingest once and measures it.
func (s *suite) ingestOnce(ctx context.Context, suiteName, name string, spec pipelineSpec, want, sample int) (measurement, topicRead, error) {
	file, err := writePipeline(s.dir, s.cfg, spec)
	if err != nil {
		return measurement{}, topicRead{}, err
	}
	// Created here, as ingest would, but stamped by the broker: the first record's
	// timestamp tells when ingest started writing.
	policy := "compact"
	if spec.ChangeLog {
		policy = "delete"
	}
	if err := s.kafka.createTopicPolicy(ctx, spec.Topic, true, policy); err != nil {
		return measurement{}, topicRead{}, err
	}
	log.Printf("%s: %s (pipeline %s)", suiteName, name, spec.Name)
	p, err := startIngest(ctx, s.cfg, s.dir, file, true)
	if err != nil {
		return measurement{}, topicRead{}, err
	}
	st, err := p.wait(s.cfg.Timeout)
	if err != nil {
		return measurement{}, topicRead{}, err
	}
	read, err := s.kafka.readTopic(ctx, spec.Topic, want, sample)
	if err != nil {
		return measurement{}, read, fmt.Errorf("%s %s: %w", suiteName, name, err)
	}
	m := newMeasurement(suiteName, name, kindIngest, want, read.Bytes(), st.Wall)
	m.Guarantee = spec.Guarantee
	m.PeakRSSMiB = round(float64(st.PeakRSS)/(1<<20), 1)
	m.CPUSeconds = round(st.CPU().Seconds(), 2)
	m.MariaDBCPU, m.KafkaCPU = round(st.Servers.MariaDB.Seconds(), 2), round(st.Servers.Kafka.Seconds(), 2)
	m.OtherCPU = round(st.Servers.others(st.CPU()).Seconds(), 2)
	if !read.First.IsZero() {
		m.StartupSec = round(read.First.Sub(p.start).Seconds(), 2)
	}
	m.Note = busyNote(m)
	if read.Records != want {
		m.Note = strings.TrimPrefix(m.Note+"; ", "; ") + fmt.Sprintf("%d records in the topic", read.Records)
	}
	log.Printf("  %s rows in %.2fs: %s rows/s, %.1f MB/s, peak RSS %.0f MiB, CPU %.1fs%s",
		thousands(float64(want)), m.Seconds, thousands(m.RowsPerSec), m.MBPerSec, m.PeakRSSMiB, m.CPUSeconds, noteSuffix(m.Note))
	return m, read, nil
}

func noteSuffix(note string) string {
	if note == "" {
		return ""
	}
	return " (" + note + ")"
}

// rawOnce runs a raw-limit measurement once, with the CPU the servers and the other
// processes of the machine used meanwhile.
func (s *suite) rawOnce(suiteName, name string, measure func() (rawResult, error)) (measurement, rawResult, error) {
	pids := readServicePIDs(s.cfg.svc)
	before := pids.cpu()
	r, err := measure()
	if err != nil {
		return measurement{}, r, err
	}
	cpu := pids.cpu().minus(before)
	m := newMeasurement(suiteName, name, kindRaw, r.Rows, r.Bytes, r.Wall)
	m.CPUSeconds = round(r.CPU.Seconds(), 2)
	m.MariaDBCPU, m.KafkaCPU = round(cpu.MariaDB.Seconds(), 2), round(cpu.Kafka.Seconds(), 2)
	m.OtherCPU = round(cpu.others(0).Seconds(), 2)
	m.Note = busyNote(m)
	log.Printf("%s: %s: %s rows in %.2fs: %s rows/s, %.1f MB/s%s", suiteName, name, thousands(float64(r.Rows)), m.Seconds,
		thousands(m.RowsPerSec), m.MBPerSec, noteSuffix(m.Note))
	return m, r, nil
}

// snapshot measures the initial snapshot of a table of N rows with each guarantee, the
// raw scan and produce limits, and the at-least-once snapshot of N/4 rows (peak memory).
func (s *suite) snapshot(ctx context.Context) error {
	const suiteName = "snapshot"
	n, q := s.cfg.Rows, s.cfg.Rows/4
	if err := dropOtherSnapTables(ctx, s.db, n, q); err != nil {
		return err
	}
	for _, rows := range []int{n, q} {
		if err := ensureSnapTable(ctx, s.db, rows); err != nil {
			return err
		}
	}
	if avg, err := tableBytes(ctx, s.db, snapTable(n)); err == nil {
		s.res.Table.AvgRowBytes = avg
	}
	scans := []rawSource{
		{namePreparedScan, func() (rawResult, error) { return rawScan(ctx, s.cfg.svc, snapTable(n), true) }},
		{nameScan, func() (rawResult, error) { return rawScan(ctx, s.cfg.svc, snapTable(n), false) }},
	}
	scan, err := s.rounds(ctx, suiteName, scans,
		func(g string) pipelineSpec { return s.spec("snap-"+g, snapTable(n), g, "initial") }, n, "snap-raw-produce")
	if err != nil {
		return err
	}
	s.res.Table.ScanBytesRow = round(float64(scan.Bytes)/float64(scan.Rows), 1)
	g := s.cfg.Guarantees[0]
	if err := s.ingestRun(ctx, suiteName, ingestQuarterName(g), s.spec("snapq-"+g, snapTable(q), g, "initial"), q); err != nil {
		return err
	}
	spec := s.spec("snapk-"+g, snapTable(n), g, "initial")
	spec.ChangeLog = true
	if err := s.ingestRun(ctx, suiteName, ingestChangeLogName(g), spec, n); err != nil {
		return err
	}
	spec = s.spec("snapt-"+g, snapTable(n), g, "initial")
	spec.Transform = true
	return s.ingestRun(ctx, suiteName, ingestTransformName(g), spec, n)
}

// busyShare is the share of the machine's CPUs that other processes may use during a
// measurement before it is marked as taken on a busy machine.
const busyShare = 0.15

// busyNote marks a measurement during which other processes used more than busyShare of
// the machine's CPUs: its figure is lower than a quiet machine would give.
func busyNote(m measurement) string {
	return busyText(m.OtherCPU, m.Seconds)
}

func busyText(otherCPU, seconds float64) string {
	// Under a second, /proc/stat's 10 ms ticks make the share too coarse to judge.
	if seconds < 1 || otherCPU/seconds <= busyShare*float64(runtime.NumCPU()) {
		return ""
	}
	return fmt.Sprintf("busy: other processes used %.1f CPUs", otherCPU/seconds)
}

// spec returns the pipeline of one ingest run, with a name and topic unique to it.
func (s *suite) spec(label, table, guarantee, startup string) pipelineSpec {
	return pipelineSpec{
		Name: "ingestbench-" + s.runID + "-" + label, Table: table, Topic: s.topic(label),
		Guarantee: guarantee, Startup: startup,
	}
}

// catchup measures the binlog catch-up on rows changes written in transactions of txnRows
// rows before the pipeline starts, with the raw decode and produce limits.
func (s *suite) catchup(ctx context.Context, txnRows int) error {
	suiteName := fmt.Sprintf("catch-up txn=%d", txnRows)
	rows := s.cfg.Rows
	if txnRows == 1 {
		rows = s.cfg.SingleRows
	}
	rows = max(txnRows, rows/txnRows*txnRows)
	table := fmt.Sprintf("catchup_%d", txnRows)
	if err := recreateTable(ctx, s.db, table); err != nil {
		return err
	}
	from, err := masterStatus(ctx, s.db)
	if err != nil {
		return err
	}
	start := time.Now()
	txns, err := writeWorkload(ctx, s.db, table, txnRows, rows)
	if err != nil {
		return err
	}
	to, err := masterStatus(ctx, s.db)
	if err != nil {
		return err
	}
	log.Printf("%s: wrote %s changes in %d transactions in %v (binlog %s to %s)", suiteName, thousands(float64(rows)), txns,
		time.Since(start).Round(time.Millisecond), from, to)

	label := fmt.Sprintf("catchup%d", txnRows)
	_, err = s.rounds(ctx, suiteName, []rawSource{{nameRead, func() (rawResult, error) {
		return rawRead(ctx, s.cfg.svc, s.flavor, from, to, rows)
	}}, {nameDecode, func() (rawResult, error) {
		dec, err := rawDecode(ctx, s.cfg.svc, s.flavor, table, from, to)
		if err == nil && dec.Rows != rows {
			err = fmt.Errorf("%s: the binlog holds %d changes of %s, want %d", suiteName, dec.Rows, table, rows)
		}
		return dec, err
	}}}, func(g string) pipelineSpec {
		spec := s.spec(label+"-"+g, table, g, "specific-offset")
		spec.From = from
		return spec
	}, rows, label+"-raw-produce")
	if err != nil {
		return err
	}
	// The same changes as debezium-json events (type kafka): one record per change, as the
	// upsert records (the workload changes no primary key).
	g := s.cfg.Guarantees[0]
	spec := s.spec(label+"k-"+g, table, g, "specific-offset")
	spec.From, spec.ChangeLog = from, true
	return s.ingestRun(ctx, suiteName, ingestChangeLogName(g), spec, rows)
}
