package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// latencyLabel names the pipelines and topics of the latency runs at rate rows/s.
func latencyLabel(rate int) string { return fmt.Sprintf("latency%d", rate) }

// latencyBase is the first id of the measured rows; the warm-up probes use ids below it.
const latencyBase = 1_000_000

// latencyRig is what a latency run shares: the table, a topic and a consumer on it.
type latencyRig struct {
	topic string
	cons  *latencyConsumer
	stop  func() // stops the consumer
}

// newLatencyRig recreates the latency table and creates topic with a consumer running on it.
func (s *suite) newLatencyRig(ctx context.Context, topic string, total int) (*latencyRig, error) {
	if err := recreateTable(ctx, s.db, "latency"); err != nil {
		return nil, err
	}
	if err := s.kafka.createTopic(ctx, topic, false); err != nil {
		return nil, err
	}
	cons, err := newLatencyConsumer(s.cfg.svc.Kafka, topic, total)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	consumed := make(chan error, 1)
	go func() { consumed <- cons.run(cctx) }()
	return &latencyRig{topic: topic, cons: cons, stop: func() {
		cancel()
		if err := <-consumed; err != nil {
			log.Printf("warning: %v", err)
		}
		cons.cl.Close()
	}}, nil
}

// latency measures the time from commit in MariaDB to the record being readable in Kafka
// (read_committed) while rows are written at a fixed rate, ingest streaming from the
// latest position.
func (s *suite) latency(ctx context.Context, guarantee string, rate int) error {
	total := rate * s.cfg.Seconds
	spec := s.spec(latencyLabel(rate)+"-"+guarantee, "latency", guarantee, "latest-offset")
	rig, err := s.newLatencyRig(ctx, spec.Topic, total)
	if err != nil {
		return err
	}
	defer rig.stop()
	file, err := writePipeline(s.dir, s.cfg, spec)
	if err != nil {
		return err
	}
	log.Printf("latency: %s, %d rows/s for %ds (pipeline %s)", guarantee, rate, s.cfg.Seconds, spec.Name)
	p, err := startIngest(ctx, s.cfg, s.dir, file, false)
	if err != nil {
		return err
	}
	alive := func() error {
		if done, err := p.exited(); done {
			return fmt.Errorf("ingest exited: %v\n%s", err, tail(p.logPath, 15))
		}
		return nil
	}
	run, err := s.measureLatency(ctx, alive, rig.cons, rate, total)
	st, stopErr := p.stop()
	if err = errors.Join(err, stopErr); err != nil {
		return err
	}
	run.Name, run.Guarantee = ingestName(guarantee), guarantee
	run.PeakRSSMiB = round(float64(st.PeakRSS)/(1<<20), 1)
	run.CPUSeconds = round(st.CPU().Seconds(), 2)
	run.OtherCPU = round(st.Servers.others(st.CPU()).Seconds(), 2)
	run.Note = busyText(run.OtherCPU, st.Wall.Seconds())
	s.addLatency(run)
	return nil
}

// rawLatency measures the same with go-mysql and franz-go alone: each inserted row of the
// binlog is produced at once as a small record (acks=all, idempotent, default linger). It is
// the floor of what a binlog-to-Kafka pipeline can do on this machine at that moment.
func (s *suite) rawLatency(ctx context.Context, rate int) error {
	total := rate * s.cfg.Seconds
	rig, err := s.newLatencyRig(ctx, s.topic(latencyLabel(rate)+"-raw"), total)
	if err != nil {
		return err
	}
	defer rig.stop()
	from, err := masterStatus(ctx, s.db)
	if err != nil {
		return err
	}
	log.Printf("latency: raw go-mysql -> franz-go, %d rows/s for %ds", rate, s.cfg.Seconds)
	pids := readServicePIDs(s.cfg.svc)
	before := pids.cpu()
	rctx, cancel := context.WithCancel(ctx)
	relayed := make(chan error, 1)
	go func() { relayed <- relay(rctx, s.cfg, s.flavor, from, rig.topic) }()
	alive := func() error {
		select {
		case err := <-relayed:
			relayed <- err
			return fmt.Errorf("raw relay stopped: %v", err)
		default:
			return nil
		}
	}
	run, err := s.measureLatency(ctx, alive, rig.cons, rate, total)
	cancel()
	if rerr := <-relayed; err == nil && rerr != nil && !errors.Is(rerr, context.Canceled) {
		err = rerr
	}
	if err != nil {
		return err
	}
	cpu := pids.cpu().minus(before)
	run.Name, run.Guarantee = nameRawRelay, atLeastOnce
	run.CPUSeconds, run.OtherCPU = round(cpu.Bench.Seconds(), 2), round(cpu.others(0).Seconds(), 2)
	run.Note = busyText(run.OtherCPU, run.Seconds)
	s.addLatency(run)
	return nil
}

func (s *suite) addLatency(run latencyRun) {
	s.res.Latency = append(s.res.Latency, run)
	log.Printf("  %d of %d rows received; p50 %.1f ms, p99 %.1f ms, max %.1f ms; peak RSS %.0f MiB",
		run.Received, run.Rows, run.P50ms, run.P99ms, run.Maxms, run.PeakRSSMiB)
}

// measureLatency waits for the pipeline to deliver, writes the paced rows and waits for
// them; alive reports a pipeline that stopped.
func (s *suite) measureLatency(ctx context.Context, alive func() error, cons *latencyConsumer, rate, total int) (latencyRun, error) {
	if err := s.warmUp(ctx, alive, cons, rate); err != nil {
		return latencyRun{}, err
	}
	w := pacedWriter{db: s.db, table: "latency", first: latencyBase, rate: rate, total: total}
	commits, txns, wall, err := w.run(ctx)
	if err != nil {
		return latencyRun{}, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for cons.count() < total && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	run := latencyRun{TargetRate: rate, Rows: total, Seconds: round(wall.Seconds(), 2),
		Rate: round(float64(total)/wall.Seconds(), 0), TxnRows: round(float64(total)/float64(txns), 1)}
	cons.summarize(commits, &run)
	return run, nil
}

// warmUp writes probe rows until the first reaches the consumer, then rows at the measured
// rate for warmUpTime, and waits for them, so that the measurement is of the steady state:
// the first records to each partition of a new topic can take hundreds of milliseconds.
func (s *suite) warmUp(ctx context.Context, alive func() error, cons *latencyConsumer, rate int) error {
	if err := s.probe(ctx, alive, cons); err != nil {
		return err
	}
	const warmUpTime = 2 * time.Second
	n := min(int(float64(rate)*warmUpTime.Seconds()), latencyBase/2-1)
	w := pacedWriter{db: s.db, table: "latency", first: latencyBase / 2, rate: rate, total: n}
	if _, _, _, err := w.run(ctx); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for cons.probes.Load() < int64(n) {
		if err := alive(); err != nil {
			return fmt.Errorf("during the warm-up: %w", err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("latency warm-up: %d of %d rows arrived within a minute", cons.probes.Load(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// probe writes a row every 200 ms until one reaches the consumer.
func (s *suite) probe(ctx context.Context, alive func() error, cons *latencyConsumer) error {
	deadline := time.Now().Add(2 * time.Minute)
	for id := 1; cons.probes.Load() == 0; id++ {
		if err := alive(); err != nil {
			return fmt.Errorf("during the warm-up: %w", err)
		}
		if time.Now().After(deadline) {
			return errors.New("latency: no record within 2 minutes of starting the pipeline")
		}
		q := fmt.Sprintf("INSERT INTO latency SELECT %s FROM seq_%d_to_%d", rowSelect, id, id)
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("latency warm-up: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

// pacedWriter inserts total rows at rate rows/s: every 10 ms, one transaction with the rows
// that are due (generated by the server, like every bench row).
type pacedWriter struct {
	db    *sql.DB
	table string
	first int // id of the first row
	rate  int
	total int
}

// run writes the rows and returns, for each row (id first+i), the time its COMMIT
// returned, the number of transactions, and the time writing took.
func (w pacedWriter) run(ctx context.Context) ([]int64, int, time.Duration, error) {
	commits := make([]int64, w.total)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	written, txns := 0, 0
	for written < w.total {
		select {
		case <-ctx.Done():
			return nil, txns, 0, ctx.Err()
		case <-tick.C:
		}
		due := min(w.total, int(float64(w.rate)*time.Since(start).Seconds()))
		due = min(due, written+w.rate/10) // catch up at most 100 ms of rows at once
		if due <= written {
			continue
		}
		lo, hi := w.first+written, w.first+due-1
		q := fmt.Sprintf("INSERT INTO %s SELECT %s FROM seq_%d_to_%d", w.table, rowSelect, lo, hi)
		if _, err := w.db.ExecContext(ctx, q); err != nil {
			return nil, txns, 0, fmt.Errorf("latency writer: %w", err)
		}
		now := time.Now().UnixNano()
		for i := written; i < due; i++ {
			commits[i] = now
		}
		written, txns = due, txns+1
	}
	return commits, txns, time.Since(start), nil
}

// latencyConsumer reads the latency topic (read_committed) and notes when each row's record
// was received.
type latencyConsumer struct {
	cl       *kgo.Client
	received []int64 // by row: the time its first record was received (unix ns)
	n        atomic.Int64
	probes   atomic.Int64
}

func newLatencyConsumer(addr, topic string, total int) (*latencyConsumer, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("latency consumer: %w", err)
	}
	return &latencyConsumer{cl: cl, received: make([]int64, total)}, nil
}

// run consumes until ctx is done.
func (c *latencyConsumer) run(ctx context.Context) error {
	for {
		fs := c.cl.PollFetches(ctx)
		now := time.Now().UnixNano()
		if ctx.Err() != nil {
			return nil
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return fmt.Errorf("latency consumer: %w", errs[0].Err)
		}
		fs.EachRecord(func(r *kgo.Record) { c.note(r, now) })
	}
}

// note records the receipt of the row whose key is r.Key ({"id":N}).
func (c *latencyConsumer) note(r *kgo.Record, now int64) {
	k := bytes.TrimSuffix(bytes.TrimPrefix(r.Key, []byte(`{"id":`)), []byte("}"))
	id, err := strconv.Atoi(string(k))
	if err != nil {
		return
	}
	i := id - latencyBase
	if i < 0 {
		c.probes.Add(1) // a probe or warm-up row (duplicates counted too)
		return
	}
	if i < len(c.received) && atomic.LoadInt64(&c.received[i]) == 0 {
		atomic.StoreInt64(&c.received[i], now)
		c.n.Add(1)
	}
}

func (c *latencyConsumer) count() int { return int(c.n.Load()) }

// summarize computes the latency percentiles of the rows received.
func (c *latencyConsumer) summarize(commits []int64, run *latencyRun) {
	lat := make([]float64, 0, len(commits))
	for i, commit := range commits {
		if recv := atomic.LoadInt64(&c.received[i]); recv != 0 && commit != 0 {
			lat = append(lat, float64(recv-commit)/1e6)
		}
	}
	run.Received = len(lat)
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return round(lat[min(len(lat)-1, int(p*float64(len(lat))))], 1) }
	run.P50ms, run.P90ms, run.P99ms, run.Maxms = pct(0.50), pct(0.90), pct(0.99), round(lat[len(lat)-1], 1)
}
