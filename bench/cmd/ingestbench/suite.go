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
		"rows": cfg.Rows, "single_txn_rows": cfg.SingleRows, "latency_seconds": cfg.Seconds, "latency_rate": cfg.Rate,
		"partitions": cfg.Partitions, "compression": cfg.Compression, "parallelism": cfg.Parallelism,
		"txn_sizes": cfg.TxnSizes, "repeat": cfg.Repeat, "guarantees": cfg.Guarantees, "parts": cfg.Parts, "profile": cfg.Profile != "",
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
	t := topicPrefix + s.runID + "." + label
	s.topics = append(s.topics, t)
	return t
}

// ingestRun runs ingest until caught up on spec (-repeat times, each with its own
// pipeline name and topic), checks that each topic holds want records, and records the
// fastest run with the highest peak RSS of all; it returns what the first run read back
// (up to sample records kept).
func (s *suite) ingestRun(ctx context.Context, suiteName, name string, spec pipelineSpec, want, sample int) (topicRead, error) {
	var best measurement
	var first topicRead
	var all []float64
	for i := range s.cfg.Repeat {
		sp := spec
		if i > 0 {
			sp.Name, sp.Topic = fmt.Sprintf("%s-r%d", spec.Name, i+1), fmt.Sprintf("%s-r%d", spec.Topic, i+1)
			s.topics = append(s.topics, sp.Topic)
			sample = 0
		}
		m, read, err := s.ingestOnce(ctx, suiteName, name, sp, want, sample)
		if err != nil {
			return read, err
		}
		if i == 0 {
			first = read
		}
		all = append(all, m.RowsPerSec)
		peak := max(m.PeakRSSMiB, best.PeakRSSMiB)
		if i == 0 || m.RowsPerSec > best.RowsPerSec {
			best = m
		}
		best.PeakRSSMiB = peak
	}
	if len(all) > 1 {
		best.AllRowsPerSec = all
	}
	s.res.add(best)
	if s.res.Table.RecordBytesRow == 0 {
		s.res.Table.RecordBytesRow = round(float64(best.Bytes)/float64(best.Rows), 1)
	}
	return first, nil
}

// ingestOnce runs ingest once and measures it.
func (s *suite) ingestOnce(ctx context.Context, suiteName, name string, spec pipelineSpec, want, sample int) (measurement, topicRead, error) {
	file, err := writePipeline(s.dir, s.cfg, spec)
	if err != nil {
		return measurement{}, topicRead{}, err
	}
	// Created here, as ingest would, but stamped by the broker: the first record's
	// timestamp tells when ingest started writing.
	if err := s.kafka.createTopic(ctx, spec.Topic, true); err != nil {
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

// raw runs a raw-limit measurement (-repeat times) and records the fastest, with the CPU
// the servers and the other processes of the machine used meanwhile.
func (s *suite) raw(suiteName, name string, measure func() (rawResult, error)) (rawResult, error) {
	var best measurement
	var bestRaw rawResult
	var all []float64
	for i := range s.cfg.Repeat {
		pids := readServicePIDs(s.cfg.svc)
		before := pids.cpu()
		r, err := measure()
		if err != nil {
			return r, err
		}
		cpu := pids.cpu().minus(before)
		m := newMeasurement(suiteName, name, kindRaw, r.Rows, r.Bytes, r.Wall)
		m.CPUSeconds = round(r.CPU.Seconds(), 2)
		m.MariaDBCPU, m.KafkaCPU = round(cpu.MariaDB.Seconds(), 2), round(cpu.Kafka.Seconds(), 2)
		m.OtherCPU = round(cpu.others(0).Seconds(), 2)
		m.Note = busyNote(m)
		log.Printf("%s: %s: %s rows in %.2fs: %s rows/s, %.1f MB/s%s", suiteName, name, thousands(float64(r.Rows)), m.Seconds,
			thousands(m.RowsPerSec), m.MBPerSec, noteSuffix(m.Note))
		all = append(all, m.RowsPerSec)
		if i == 0 || m.RowsPerSec > best.RowsPerSec {
			best, bestRaw = m, r
		}
	}
	if len(all) > 1 {
		best.AllRowsPerSec = all
	}
	s.res.add(best)
	return bestRaw, nil
}

// produceLimit measures the raw producer on the records that ingest wrote.
func (s *suite) produceLimit(ctx context.Context, suiteName, label string, sample []*kgo.Record, n int) error {
	topic := s.topic(label)
	if err := s.kafka.createTopic(ctx, topic, false); err != nil {
		return err
	}
	_, err := s.raw(suiteName, nameProduce, func() (rawResult, error) { return rawProduce(ctx, s.cfg, topic, sample, n) })
	return err
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
	scan, err := s.raw(suiteName, nameScan, func() (rawResult, error) { return rawScan(ctx, s.cfg.svc, snapTable(n)) })
	if err != nil {
		return err
	}
	s.res.Table.ScanBytesRow = round(float64(scan.Bytes)/float64(scan.Rows), 1)

	for i, g := range s.cfg.Guarantees {
		spec := s.spec("snap-"+g, snapTable(n), g, "initial")
		read, err := s.ingestRun(ctx, suiteName, ingestName(g), spec, n, s.cfg.SampleSize)
		if err != nil {
			return err
		}
		if i == 0 {
			if err := s.produceLimit(ctx, suiteName, "snap-raw-produce", read.Sample, n); err != nil {
				return err
			}
		}
	}
	g := s.cfg.Guarantees[0]
	spec := s.spec("snapq-"+g, snapTable(q), g, "initial")
	_, err = s.ingestRun(ctx, suiteName, ingestQuarterName(g), spec, q, 0)
	return err
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

	dec, err := s.raw(suiteName, nameDecode, func() (rawResult, error) {
		return rawDecode(ctx, s.cfg.svc, s.flavor, table, from, to)
	})
	if err != nil {
		return err
	}
	if dec.Rows != rows {
		return fmt.Errorf("%s: the binlog holds %d changes of %s, want %d", suiteName, dec.Rows, table, rows)
	}
	for i, g := range s.cfg.Guarantees {
		label := fmt.Sprintf("catchup%d-%s", txnRows, g)
		spec := s.spec(label, table, g, "specific-offset")
		spec.From = from
		read, err := s.ingestRun(ctx, suiteName, ingestName(g), spec, rows, s.cfg.SampleSize)
		if err != nil {
			return err
		}
		if i == 0 {
			if err := s.produceLimit(ctx, suiteName, fmt.Sprintf("catchup%d-raw-produce", txnRows), read.Sample, rows); err != nil {
				return err
			}
		}
	}
	return nil
}
