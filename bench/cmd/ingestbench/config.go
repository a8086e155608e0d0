package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Parts of the suite that -only selects.
const (
	partSnapshot = "snapshot"
	partCatchup  = "catchup"
	partLatency  = "latency"
	// partPeers is ingest against its peers (make bench-peers, peers.go): never with the
	// other parts, and not among the defaults.
	partPeers = "peers"
	// partCurves is the cost curves (make bench-curves, curves.go): never with the other
	// parts, and not among the defaults.
	partCurves = "curves"
)

// Delivery guarantees, spelled as the pipeline file spells them.
const (
	atLeastOnce = "at-least-once"
	exactlyOnce = "exactly-once"
)

// config is the suite's settings: flags, each defaulting to a BENCH_* environment
// variable, and the service addresses that `scripts/services env` exports.
type config struct {
	Rows        int      // rows of the snapshot table and of each catch-up run (txn 100, 10000)
	SingleRows  int      // rows of the catch-up run with one-row transactions
	Seconds     int      // duration of each streaming-latency run
	Rate        int      // rows/s written during the latency runs
	HighRate    int      // rows/s of the second latency runs; 0: none
	Partitions  int      // partitions of every topic
	Compression string   // properties.compression.type of the pipelines and the raw producer
	Parallelism int      // pipeline.parallelism (0: ingest's default, 1)
	TxnSizes    []int    // catch-up transaction sizes
	Guarantees  []string // delivery guarantees measured
	Parts       []string // parts of the suite to run
	Ingest      string   // the ingest binary
	OutDir      string   // where results are written
	SampleSize  int      // records read back to build the raw producer's input
	KeepTopics  bool     // keep this run's topics at the end
	Repeat      int      // runs of each throughput measurement; the fastest is kept
	Timeout     time.Duration
	Profile     string // a binary like bin/ingest that takes --cpuprofile (see bench/README.md)
	ProfileDir  string // where the profiles go

	Peers        []string // peer configurations of the peers part (peerConfigs)
	PeerLib      string   // the jars of Kafka Connect and Debezium (scripts/bench-peers fetches them)
	FlinkLib     string   // the jars of Flink, Flink CDC and the Kafka connector (scripts/bench-peers fetches them)
	FlinkClasses string   // FlinkPeer.class and log4j2.properties (scripts/bench-peers compiles them)
	PeerTxn      int      // transaction size of the peers part's catch-up
	ConnectPort  int      // Kafka Connect's REST port (listeners)
	Java         string   // the java binary

	Curve curveSettings // the sizes of the curves part

	svc services
}

// services are the addresses of the local test services.
type services struct {
	MySQLHost  string
	MySQLPort  int
	AdminUser  string
	AdminPass  string
	CDCUser    string
	CDCPass    string
	Kafka      string
	KafkaLibs  string
	MariaDBPID string // pid file of mariadbd, for its CPU time (optional)
	KafkaPID   string // pid file of the broker, for its CPU time (optional)
}

// parseConfig reads the flags in args, with defaults from the environment.
func parseConfig(args []string) (config, error) {
	var c config
	var txnSizes, guarantees, parts, peers string
	var curves, curveTables, curveColumns, curveRowBytes, curveTxn string
	fs := flag.NewFlagSet("ingestbench", flag.ContinueOnError)
	fs.IntVar(&c.Rows, "rows", envInt("BENCH_ROWS", 2_000_000), "rows of the snapshot table and of the catch-up runs (BENCH_ROWS)")
	fs.IntVar(&c.SingleRows, "single-rows", envInt("BENCH_SINGLE_ROWS", 0), "rows of the catch-up run of one-row transactions; 0: rows/10 (BENCH_SINGLE_ROWS)")
	fs.IntVar(&c.Seconds, "seconds", envInt("BENCH_SECONDS", 20), "seconds of each streaming-latency run (BENCH_SECONDS)")
	fs.IntVar(&c.Rate, "rate", envInt("BENCH_RATE", 5000), "rows/s written during the latency runs (BENCH_RATE)")
	fs.IntVar(&c.HighRate, "high-rate", envInt("BENCH_HIGH_RATE", 50000), "rows/s of the second latency runs; 0: none (BENCH_HIGH_RATE)")
	fs.IntVar(&c.Partitions, "partitions", envInt("BENCH_PARTITIONS", 6), "partitions of each topic (BENCH_PARTITIONS)")
	fs.StringVar(&c.Compression, "compression", envString("BENCH_COMPRESSION", "lz4"), "Kafka compression of ingest and the raw producer (BENCH_COMPRESSION)")
	fs.IntVar(&c.Parallelism, "parallelism", envInt("BENCH_PARALLELISM", min(runtime.NumCPU(), 4)),
		"pipeline.parallelism, the snapshot's readers; 0: ingest's default, 1 (BENCH_PARALLELISM)")
	fs.StringVar(&txnSizes, "txn-sizes", envString("BENCH_TXN_SIZES", "1,100,10000"), "catch-up transaction sizes (BENCH_TXN_SIZES)")
	fs.StringVar(&guarantees, "guarantees", envString("BENCH_GUARANTEES", atLeastOnce+","+exactlyOnce), "delivery guarantees (BENCH_GUARANTEES)")
	fs.StringVar(&parts, "only", envString("BENCH_ONLY", partSnapshot+","+partCatchup+","+partLatency), "parts to run (BENCH_ONLY)")
	fs.StringVar(&c.Ingest, "ingest", envString("BENCH_INGEST", "bin/ingest"), "the ingest binary (BENCH_INGEST)")
	fs.StringVar(&c.OutDir, "out", envString("BENCH_OUT", "bench/results"), "results directory (BENCH_OUT)")
	fs.IntVar(&c.SampleSize, "sample", envInt("BENCH_SAMPLE", 100_000), "records read back from ingest's topic as the raw producer's input (BENCH_SAMPLE)")
	fs.BoolVar(&c.KeepTopics, "keep-topics", os.Getenv("BENCH_KEEP_TOPICS") != "", "keep this run's topics (BENCH_KEEP_TOPICS)")
	fs.IntVar(&c.Repeat, "repeat", envInt("BENCH_REPEAT", 1), "runs of each throughput measurement, the fastest kept (BENCH_REPEAT)")
	fs.DurationVar(&c.Timeout, "timeout", 15*time.Minute, "limit of each ingest run")
	fs.StringVar(&c.Profile, "profile", envString("BENCH_PROFILE", ""), "run ingest as this binary (bin/ingestprof) with --cpuprofile (BENCH_PROFILE)")
	fs.StringVar(&c.ProfileDir, "profile-dir", envString("BENCH_PROFILE_DIR", ".cache/bench/profiles"), "where -profile writes the profiles (BENCH_PROFILE_DIR)")
	fs.StringVar(&benchDB, "db", envString("BENCH_DB", benchDB), "the bench database, and the start of every topic name (BENCH_DB)")
	fs.StringVar(&peers, "peers", envString("BENCH_PEERS", strings.Join(peerNames(), ",")), "peer configurations of -only peers (BENCH_PEERS)")
	fs.StringVar(&c.PeerLib, "peer-lib", envString("BENCH_PEER_LIB", ".cache/peers/debezium/lib"), "jars of Kafka Connect and Debezium (BENCH_PEER_LIB)")
	fs.StringVar(&c.FlinkLib, "flink-lib", envString("BENCH_FLINK_LIB", ".cache/peers/flink/lib"), "jars of Flink, Flink CDC and the Kafka connector (BENCH_FLINK_LIB)")
	fs.StringVar(&c.FlinkClasses, "flink-classes", envString("BENCH_FLINK_CLASSES", ".cache/peers/flink/classes"), "FlinkPeer.class and its log4j2.properties (BENCH_FLINK_CLASSES)")
	fs.IntVar(&c.PeerTxn, "peer-txn", envInt("BENCH_PEER_TXN", 100), "transaction size of the peers' catch-up (BENCH_PEER_TXN)")
	fs.IntVar(&c.ConnectPort, "connect-port", envInt("BENCH_CONNECT_PORT", 18083), "Kafka Connect's REST port (BENCH_CONNECT_PORT)")
	fs.StringVar(&c.Java, "java", envString("BENCH_JAVA", "java"), "the java binary of the peers (BENCH_JAVA)")
	fs.StringVar(&curves, "curves", envString("BENCH_CURVES", strings.Join(curveNames, ",")), "curves of -only curves (BENCH_CURVES)")
	fs.StringVar(&curveTables, "curve-tables", envString("BENCH_CURVE_TABLES", "1,100,1000,10000"), "tables of the tables curve (BENCH_CURVE_TABLES)")
	fs.IntVar(&c.Curve.Changes, "curve-changes", envInt("BENCH_CURVE_CHANGES", 100_000), "changes of the tables curve's catch-up (BENCH_CURVE_CHANGES)")
	fs.StringVar(&curveColumns, "curve-columns", envString("BENCH_CURVE_COLUMNS", "10,100,1000"), "columns of the columns curve (BENCH_CURVE_COLUMNS)")
	fs.IntVar(&c.Curve.Cells, "curve-cells", envInt("BENCH_CURVE_CELLS", 2_000_000), "rows × columns of each columns point (BENCH_CURVE_CELLS)")
	fs.StringVar(&curveRowBytes, "curve-row-bytes", envString("BENCH_CURVE_ROW_BYTES", "100,1000,10000,100000,1000000"), "payload bytes per row of the row-size curve (BENCH_CURVE_ROW_BYTES)")
	fs.IntVar(&c.Curve.Bytes, "curve-bytes", envInt("BENCH_CURVE_BYTES", 100_000_000), "payload bytes of each row-size point (BENCH_CURVE_BYTES)")
	fs.StringVar(&curveTxn, "curve-txn-sizes", envString("BENCH_CURVE_TXN_SIZES", "1,100,10000,1000000"), "transaction sizes of the transaction curve (BENCH_CURVE_TXN_SIZES)")
	fs.IntVar(&c.Curve.TxnRows, "curve-txn-rows", envInt("BENCH_CURVE_TXN_ROWS", 200_000), "changes of each transaction-size point, at least one transaction (BENCH_CURVE_TXN_ROWS)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.SingleRows <= 0 {
		c.SingleRows = max(c.Rows/10, 1000)
	}
	var err error
	if c.TxnSizes, err = parseInts(txnSizes); err != nil {
		return c, fmt.Errorf("-txn-sizes: %w", err)
	}
	c.Guarantees = splitList(guarantees)
	c.Parts = splitList(parts)
	c.Peers = splitList(peers)
	c.Curve.Curves = splitList(curves)
	for _, l := range []struct {
		flag, s string
		into    *[]int
	}{{"-curve-tables", curveTables, &c.Curve.Tables}, {"-curve-columns", curveColumns, &c.Curve.Columns},
		{"-curve-row-bytes", curveRowBytes, &c.Curve.RowBytes}, {"-curve-txn-sizes", curveTxn, &c.Curve.TxnSizes}} {
		if *l.into, err = parseInts(l.s); err != nil {
			return c, fmt.Errorf("%s: %w", l.flag, err)
		}
	}
	if c.svc, err = loadServices(); err != nil {
		return c, err
	}
	return c, c.check()
}

// latencyRates are the rates of the latency runs: the target's, then the high one.
func (c config) latencyRates() []int {
	if c.HighRate > 0 && c.HighRate != c.Rate {
		return []int{c.Rate, c.HighRate}
	}
	return []int{c.Rate}
}

func (c config) check() error {
	switch {
	case c.Rows < 1000:
		return errors.New("-rows: at least 1000")
	case c.Seconds < 1 || c.Rate < 100 || c.HighRate != 0 && c.HighRate < 100:
		return errors.New("-seconds at least 1, -rate at least 100, -high-rate 0 or at least 100")
	case c.Partitions < 1:
		return errors.New("-partitions: at least 1")
	case c.Repeat < 1:
		return errors.New("-repeat: at least 1")
	case len(c.Guarantees) == 0:
		return errors.New("-guarantees: at least one")
	}
	for _, g := range c.Guarantees {
		if g != atLeastOnce && g != exactlyOnce {
			return fmt.Errorf("-guarantees: %q is not %s or %s", g, atLeastOnce, exactlyOnce)
		}
	}
	for _, p := range c.Parts {
		if p != partSnapshot && p != partCatchup && p != partLatency && p != partPeers && p != partCurves {
			return fmt.Errorf("-only: unknown part %q (snapshot, catchup, latency, peers, curves)", p)
		}
	}
	if c.runs(partCurves) {
		if err := c.checkCurves(); err != nil {
			return err
		}
	}
	if c.runs(partPeers) {
		if err := c.checkPeers(); err != nil {
			return err
		}
	}
	for _, k := range c.TxnSizes {
		if k != 1 && (k < 10 || k%10 != 0) {
			return fmt.Errorf("-txn-sizes: %d is neither 1 nor a multiple of 10", k)
		}
	}
	if _, err := os.Stat(c.Ingest); err != nil {
		return fmt.Errorf("the ingest binary: %w (make build)", err)
	}
	return nil
}

// runs reports whether part is selected.
func (c config) runs(part string) bool {
	for _, p := range c.Parts {
		if p == part {
			return true
		}
	}
	return false
}

// loadServices reads the INGEST_TEST_* variables of `scripts/services env`, with that
// script's defaults.
func loadServices() (services, error) {
	s := services{Kafka: envString("INGEST_TEST_KAFKA", "127.0.0.1:9092"), KafkaLibs: os.Getenv("INGEST_TEST_KAFKA_LIBS"),
		KafkaPID: os.Getenv("INGEST_TEST_KAFKA_PID")}
	addr := envString("INGEST_TEST_MYSQL_ADDR", "127.0.0.1:3307")
	host, port, ok := strings.Cut(addr, ":")
	p, err := strconv.Atoi(port)
	if !ok || err != nil {
		return s, fmt.Errorf("INGEST_TEST_MYSQL_ADDR %q: want host:port", addr)
	}
	s.MySQLHost, s.MySQLPort = host, p
	s.AdminUser, s.AdminPass, _ = strings.Cut(envString("INGEST_TEST_MYSQL_ADMIN", "ingest_admin:admin-pass"), ":")
	s.CDCUser, s.CDCPass, _ = strings.Cut(envString("INGEST_TEST_MYSQL_CDC", "cdc:cdc-pass"), ":")
	if sock := os.Getenv("INGEST_TEST_MARIADB_SOCK"); sock != "" {
		s.MariaDBPID = filepath.Join(filepath.Dir(sock), "mariadbd.pid")
	}
	return s, nil
}

// MySQLAddr is host:port of the server.
func (s services) MySQLAddr() string { return fmt.Sprintf("%s:%d", s.MySQLHost, s.MySQLPort) }

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.ReplaceAll(v, "_", ""))
	if err != nil {
		fmt.Fprintf(os.Stderr, "ingestbench: %s=%q is not a number; using %d\n", name, v, def)
		return def
	}
	return n
}

func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, item := range splitList(s) {
		n, err := strconv.Atoi(strings.ReplaceAll(item, "_", ""))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}
