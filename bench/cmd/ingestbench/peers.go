package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The peers part (-only peers, make bench-peers): ingest against Debezium's MariaDB
// connector in Kafka Connect standalone and against Flink CDC's MySQL source in a local
// Flink (flinkpeer.go), on the same table and the same binlog, in rounds that alternate the
// clients; see bench/README.md (section Peers).

// kindPeer is the kind of a peer's measurement.
const kindPeer = "peer"

// Names of the peers part's suites.
const (
	peerSnapshot = "snapshot"
	peerCatchup  = "catch-up"
)

// Kinds of peer.
const (
	peerDebezium = "debezium" // Debezium's MariaDB connector in Kafka Connect standalone
	peerFlink    = "flink"    // Flink CDC's MySQL source and upsert-kafka in a local Flink
)

// Which suites a peer configuration's rows/s is judged on against targetPeerX (its peak
// memory is judged on every suite).
const (
	rateAllSuites    = ""         // every suite
	rateSnapshotOnly = "snapshot" // the snapshot only (the others are for information)
	rateNone         = "none"     // none (every rows/s ratio is for information)
)

// peerConfig is one configuration of a peer: what it adds to the common settings of
// connectWorker and connectConnector (Debezium) or of flinkConf, flinkSource and flinkSink
// (Flink CDC).
type peerConfig struct {
	Name      string      // as -peers names it
	Run       string      // the measurement's name
	Kind      string      // peerDebezium or peerFlink
	Worker    [][2]string // Debezium: worker.properties settings
	Connector [][2]string // Debezium: connector.properties settings
	Flink     [][2]string // Flink: configuration (flink.properties)
	Source    [][2]string // Flink: options of the mysql-cdc source table
	Sink      [][2]string // Flink: options of the upsert-kafka sink table
	// RateTarget is the suites whose rows/s is judged against targetPeerX (rateAllSuites,
	// rateSnapshotOnly, rateNone).
	RateTarget string
}

// peerConfigs are the peer configurations the peers part knows: Debezium and Flink CDC
// with their defaults, and with the throughput settings a user would reasonably set.
// Issue 22 sets the rows/s target against each Debezium configuration on every suite and
// against the tuned Flink CDC run on the snapshot; the memory target against each.
var peerConfigs = []peerConfig{
	{Name: "debezium-default", Run: "debezium default", Kind: peerDebezium},
	{
		Name: "debezium-tuned", Run: "debezium tuned", Kind: peerDebezium,
		Worker: [][2]string{
			{"plugin.discovery", "service_load"}, // no scan of the class path at start
			{"producer.linger.ms", "20"},
			{"producer.batch.size", "524288"},
			{"producer.compression.type", "lz4"}, // ingest's default
			{"producer.max.in.flight.requests.per.connection", "5"},
		},
		Connector: [][2]string{
			{"max.batch.size", "8192"},  // default 2048
			{"max.queue.size", "32768"}, // default 8192
			{"snapshot.fetch.size", "10000"},
			{"poll.interval.ms", "50"}, // default 500
			{"schema.history.internal.store.only.captured.tables.ddl", "true"},
		},
	},
	{Name: "flink-default", Run: "flink default", Kind: peerFlink, RateTarget: rateNone},
	{
		Name: "flink-tuned", Run: "flink tuned", Kind: peerFlink, RateTarget: rateSnapshotOnly,
		Flink: [][2]string{
			{"parallelism.default", "2"}, // two snapshot readers (one per CPU here)
			{"pipeline.object-reuse", "true"},
		},
		Source: [][2]string{
			{"debezium.poll.interval.ms", "50"},               // default 500: idle at each chunk's end
			{"debezium.max.batch.size", "8192"},               // default 2048
			{"debezium.max.queue.size", "32768"},              // default 8192
			{"scan.incremental.snapshot.chunk.size", "32768"}, // default 8096 rows
		},
		Sink: [][2]string{
			{"properties.linger.ms", "20"},
			{"properties.batch.size", "524288"},
			{"properties.compression.type", "lz4"}, // ingest's default
		},
	},
}

// rateJudged reports whether the rows/s of the peer run named run is judged against
// targetPeerX on suite (a run of no known configuration is).
func rateJudged(suite, run string) bool {
	for _, p := range peerConfigs {
		if p.Run == run {
			switch p.RateTarget {
			case rateNone:
				return false
			case rateSnapshotOnly:
				return suite == peerSnapshot
			}
			return true
		}
	}
	return true
}

// usesPeer reports whether a configuration of kind is among names.
func usesPeer(names []string, kind string) bool {
	for _, n := range names {
		if p, ok := findPeer(n); ok && p.Kind == kind {
			return true
		}
	}
	return false
}

func peerNames() []string {
	var out []string
	for _, p := range peerConfigs {
		out = append(out, p.Name)
	}
	return out
}

func findPeer(name string) (peerConfig, bool) {
	for _, p := range peerConfigs {
		if p.Name == name {
			return p, true
		}
	}
	return peerConfig{}, false
}

// checkPeers checks the settings of the peers part.
func (c config) checkPeers() error {
	if len(c.Parts) != 1 {
		return errors.New("-only peers: not with other parts")
	}
	if len(c.Peers) == 0 {
		return errors.New("-peers: at least one")
	}
	for _, p := range c.Peers {
		if _, ok := findPeer(p); !ok {
			return fmt.Errorf("-peers: unknown configuration %q (%s)", p, strings.Join(peerNames(), ", "))
		}
	}
	if c.PeerTxn != 1 && (c.PeerTxn < 10 || c.PeerTxn%10 != 0) {
		return fmt.Errorf("-peer-txn: %d is neither 1 nor a multiple of 10", c.PeerTxn)
	}
	if usesPeer(c.Peers, peerDebezium) {
		jars, err := filepath.Glob(filepath.Join(c.PeerLib, "*.jar"))
		if err != nil || len(jars) == 0 {
			return fmt.Errorf("-peer-lib %s: no jars (scripts/bench-peers fetches them)", c.PeerLib)
		}
	}
	if usesPeer(c.Peers, peerFlink) {
		jars, err := filepath.Glob(filepath.Join(c.FlinkLib, "*.jar"))
		if err != nil || len(jars) == 0 {
			return fmt.Errorf("-flink-lib %s: no jars (scripts/bench-peers fetches them)", c.FlinkLib)
		}
		if _, err := os.Stat(filepath.Join(c.FlinkClasses, "FlinkPeer.class")); err != nil {
			return fmt.Errorf("-flink-classes: %w (scripts/bench-peers compiles bench/peers/flink/FlinkPeer.java)", err)
		}
	}
	return nil
}

// connectJVM are the JVM options connect-standalone.sh and kafka-run-class.sh give.
var connectJVM = []string{"-Xms256M", "-Xmx2G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
	"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15",
	"-Djava.awt.headless=true"}

// connectWorker returns the worker settings common to every configuration: the broker,
// the converters that give ingest's topic shape (JSON without schemas), a REST port of the
// bench's own and the offsets file.
func connectWorker(c config, offsets string) [][2]string {
	return [][2]string{
		{"bootstrap.servers", c.svc.Kafka},
		{"key.converter", "org.apache.kafka.connect.json.JsonConverter"},
		{"value.converter", "org.apache.kafka.connect.json.JsonConverter"},
		{"key.converter.schemas.enable", "false"},
		{"value.converter.schemas.enable", "false"},
		{"offset.storage.file.filename", offsets},
		{"listeners", fmt.Sprintf("http://127.0.0.1:%d", c.ConnectPort)},
	}
}

// connectConnector returns the connector settings common to every configuration: the
// settings that give ingest's topic shape (a flat row value, a tombstone for a delete,
// decimals as strings), the capture of one table, and what the bench's server needs (no
// snapshot locks: the CDC user has neither RELOAD nor LOCK TABLES; a server id of its own).
func connectConnector(c config, name, prefix, table string, serverID uint32) [][2]string {
	return [][2]string{
		{"name", name},
		{"connector.class", "io.debezium.connector.mariadb.MariaDbConnector"},
		{"tasks.max", "1"},
		{"database.hostname", c.svc.MySQLHost},
		{"database.port", fmt.Sprint(c.svc.MySQLPort)},
		{"database.user", c.svc.CDCUser},
		{"database.password", c.svc.CDCPass},
		{"database.server.id", fmt.Sprint(serverID)},
		{"topic.prefix", prefix},
		{"database.include.list", benchDB},
		{"table.include.list", benchDB + "." + table},
		{"snapshot.mode", "initial"},
		{"snapshot.locking.mode", "none"},
		{"include.schema.changes", "false"},
		{"decimal.handling.mode", "string"},
		{"tombstones.on.delete", "true"},
		{"schema.history.internal.kafka.bootstrap.servers", c.svc.Kafka},
		{"schema.history.internal.kafka.topic", prefix + ".schemahistory"},
		{"transforms", "unwrap"},
		{"transforms.unwrap.type", "io.debezium.transforms.ExtractNewRecordState"},
		{"transforms.unwrap.drop.tombstones", "false"},
		{"transforms.unwrap.delete.tombstone.handling.mode", "delete-to-tombstone"},
	}
}

// merge returns base with the settings of over replacing or added.
func merge(base, over [][2]string) [][2]string {
	out := slices.Clone(base)
	for _, kv := range over {
		i := slices.IndexFunc(out, func(b [2]string) bool { return b[0] == kv[0] })
		if i >= 0 {
			out[i] = kv
		} else {
			out = append(out, kv)
		}
	}
	return out
}

func writeProperties(path string, kvs [][2]string) error {
	var b strings.Builder
	b.WriteString("# generated by ingestbench (-only peers)\n")
	for _, kv := range kvs {
		fmt.Fprintf(&b, "%s=%s\n", kv[0], kv[1])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// shownSettings are the settings of a configuration as the results record them: the
// common ones with this configuration's over them, without the run's names and the
// password.
func shownSettings(c config, p peerConfig) map[string]string {
	if p.Kind == peerFlink {
		return flinkShownSettings(c, p)
	}
	out := map[string]string{"jvm": strings.Join(connectJVM, " ")}
	for _, kv := range merge(connectWorker(c, "<run>/offsets"), p.Worker) {
		out["worker: "+kv[0]] = kv[1]
	}
	for _, kv := range merge(connectConnector(c, "<run>", "<run>", "<table>", 0), p.Connector) {
		switch kv[0] {
		case "database.password":
			kv[1] = "<the CDC user's>"
		case "database.server.id":
			kv[1] = "<random, unique per run>"
		}
		out["connector: "+kv[0]] = kv[1]
	}
	return out
}

// peerVersions names the versions of the peers the configurations run (Debezium and
// Kafka Connect, Flink CDC and Flink) and of Java.
func peerVersions(ctx context.Context, c config) string {
	var parts []string
	if usesPeer(c.Peers, peerDebezium) {
		jar := func(prefix string) string { return jarVersion(c.PeerLib, prefix) }
		parts = append(parts, fmt.Sprintf("io.debezium:debezium-connector-mariadb %s (mariadb-java-client %s, mysql-binlog-connector-java %s) in org.apache.kafka:connect-runtime %s standalone",
			jar("debezium-connector-mariadb"), jar("mariadb-java-client"), jar("mysql-binlog-connector-java"), jar("connect-runtime")))
	}
	if usesPeer(c.Peers, peerFlink) {
		parts = append(parts, flinkVersions(c.FlinkLib))
	}
	java := "unknown"
	if out, err := execOutput(ctx, c.Java, "-version"); err == nil {
		java, _, _ = strings.Cut(strings.TrimSpace(out), "\n")
	}
	return strings.Join(append(parts, java), "; ")
}

// jarVersion returns the version in the name of the jar of lib named prefix-<version>.jar.
func jarVersion(lib, prefix string) string {
	m, _ := filepath.Glob(filepath.Join(lib, prefix+"-[0-9]*.jar"))
	if len(m) == 0 {
		return "unknown"
	}
	return strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m[0]), prefix+"-"), ".jar")
}

// peerClient is one of the clients the peers part alternates: ingest, or a peer
// configuration.
type peerClient struct {
	run  string      // the measurement's name
	peer *peerConfig // nil for ingest
}

func (pc peerClient) label() string {
	if pc.peer == nil {
		return "ingest"
	}
	return pc.peer.Name
}

// peerRuns keeps the runs of every client of one suite, the fastest of each.
type peerRuns struct {
	order []string
	runs  map[string]*fastest
	kind  map[string]string
}

func (p *peerRuns) add(m measurement) {
	if p.runs == nil {
		p.runs, p.kind = map[string]*fastest{}, map[string]string{}
	}
	f, ok := p.runs[m.Name]
	if !ok {
		f = &fastest{}
		p.runs[m.Name] = f
		p.order = append(p.order, m.Name)
	}
	f.add(m)
}

// peers measures the snapshot of the bench table of N rows and the catch-up on N changes
// written while the client is stopped, for ingest (at-least-once, -parallelism readers) and
// each peer configuration, in -repeat rounds that alternate them (each round starts with
// the next client).
func (s *suite) peers(ctx context.Context) error {
	n := s.cfg.Rows
	if err := dropOtherSnapTables(ctx, s.db, n, n/4); err != nil {
		return err
	}
	if err := ensureSnapTable(ctx, s.db, n); err != nil {
		return err
	}
	if avg, err := tableBytes(ctx, s.db, snapTable(n)); err == nil {
		s.res.Table.AvgRowBytes = avg
	}
	s.res.Mode = partPeers
	s.res.PeerVersions = peerVersions(ctx, s.cfg)
	s.res.PeerSettings = map[string]map[string]string{}
	clients := []peerClient{{run: ingestName(atLeastOnce)}}
	for _, name := range s.cfg.Peers {
		p, _ := findPeer(name)
		clients = append(clients, peerClient{run: p.Run, peer: &p})
		s.res.PeerSettings[p.Run] = shownSettings(s.cfg, p)
	}
	txn := s.cfg.PeerTxn
	rows := max(txn, n/txn*txn)
	catchupSuite := fmt.Sprintf("%s txn=%d", peerCatchup, txn)
	var snap, catchup peerRuns
	defer func() { // the runs so far, also when one failed
		for _, pr := range []peerRuns{snap, catchup} {
			for _, c := range clients { // ingest first
				if f, ok := pr.runs[c.run]; ok {
					s.res.add(f.result())
				}
			}
		}
	}()
	for round := range s.cfg.Repeat {
		for i := range clients {
			cl := clients[(i+round)%len(clients)]
			m, err := s.peerSnapshot(ctx, cl, round, n)
			if err != nil {
				return fmt.Errorf("snapshot, %s: %w", cl.run, err)
			}
			snap.add(m)
		}
		for i := range clients {
			cl := clients[(i+round)%len(clients)]
			m, err := s.peerCatchup(ctx, cl, catchupSuite, round, txn, rows)
			if err != nil {
				return fmt.Errorf("catch-up, %s: %w", cl.run, err)
			}
			catchup.add(m)
		}
	}
	return nil
}

// peerTopic returns the topic.prefix of a peer's run and the topic it writes table to
// (Debezium's <prefix>.<database>.<table>; a Flink run's sink table is given the same
// name), and records the topics of the run (with Debezium's schema history) for deletion.
func (s *suite) peerTopic(p peerConfig, label, table string) (prefix, topic string) {
	prefix = topicPrefix() + s.runID + "." + label
	topic = prefix + "." + benchDB + "." + table
	s.topics = append(s.topics, topic)
	if p.Kind == peerDebezium {
		s.topics = append(s.topics, prefix+".schemahistory")
	}
	return prefix, topic
}

// peerSnapshot runs one snapshot of snap_N by one client and measures it.
func (s *suite) peerSnapshot(ctx context.Context, cl peerClient, round, n int) (measurement, error) {
	label := fmt.Sprintf("psnap-%s-r%d", cl.label(), round+1)
	table := snapTable(n)
	log.Printf("%s: %s, round %d", peerSnapshot, cl.run, round+1)
	if cl.peer == nil {
		spec := s.spec(label, table, atLeastOnce, "initial")
		return s.peerIngest(ctx, peerSnapshot, cl.run, spec, n, nil)
	}
	prefix, topic := s.peerTopic(*cl.peer, label, table)
	if err := s.kafka.createTopic(ctx, topic, true); err != nil {
		return measurement{}, err
	}
	if cl.peer.Kind == peerFlink {
		r, err := s.newFlink(*cl.peer, label, table, topic, binlogPos{})
		if err != nil {
			return measurement{}, err
		}
		return s.peerFlink(ctx, peerSnapshot, cl.run, r, topic, n)
	}
	conn, err := s.newConnect(*cl.peer, label, prefix, table)
	if err != nil {
		return measurement{}, err
	}
	return s.peerConnect(ctx, peerSnapshot, cl.run, conn, topic, n)
}

// peerCatchup writes rows changes in transactions of txn rows into a new table while the
// client is stopped, then starts it and measures how long it takes to carry them all.
// Ingest and a Flink CDC peer start at the binlog position before the changes
// (specific-offset); a Debezium peer is run once before (it snapshots the table's one row
// and streams an update of it, so that its offsets file holds a binlog position) and
// stopped.
func (s *suite) peerCatchup(ctx context.Context, cl peerClient, suiteName string, round, txn, rows int) (measurement, error) {
	label := fmt.Sprintf("pcatch-%s-r%d", cl.label(), round+1)
	table := strings.ReplaceAll(fmt.Sprintf("pcatch_%s_r%d", cl.label(), round+1), "-", "_")
	if err := recreateTable(ctx, s.db, table); err != nil {
		return measurement{}, err
	}
	log.Printf("%s: %s, round %d", suiteName, cl.run, round+1)
	write := func() error {
		start := time.Now()
		txns, err := writeWorkload(ctx, s.db, table, txn, rows)
		if err != nil {
			return err
		}
		log.Printf("  wrote %s changes in %d transactions in %v", thousands(float64(rows)), txns, time.Since(start).Round(time.Millisecond))
		return nil
	}
	if cl.peer == nil {
		from, err := masterStatus(ctx, s.db)
		if err != nil {
			return measurement{}, err
		}
		if err := write(); err != nil {
			return measurement{}, err
		}
		spec := s.spec(label, table, atLeastOnce, "specific-offset")
		spec.From = from
		return s.peerIngest(ctx, suiteName, cl.run, spec, rows, nil)
	}
	prefix, topic := s.peerTopic(*cl.peer, label, table)
	if err := s.kafka.createTopic(ctx, topic, true); err != nil {
		return measurement{}, err
	}
	if cl.peer.Kind == peerFlink {
		from, err := masterStatus(ctx, s.db)
		if err != nil {
			return measurement{}, err
		}
		r, err := s.newFlink(*cl.peer, label, table, topic, from)
		if err != nil {
			return measurement{}, err
		}
		if err := write(); err != nil {
			return measurement{}, err
		}
		return s.peerFlink(ctx, suiteName, cl.run, r, topic, rows)
	}
	conn, err := s.newConnect(*cl.peer, label, prefix, table)
	if err != nil {
		return measurement{}, err
	}
	if err := s.primeConnect(ctx, conn, table, topic); err != nil {
		return measurement{}, err
	}
	if err := write(); err != nil {
		return measurement{}, err
	}
	return s.peerConnect(ctx, suiteName, cl.run, conn, topic, rows)
}

// peerIngest runs ingest until caught up and measures it as the peers are measured (the
// curves part's runs too), into a compacted topic with topicConfig's configs over the
// suite's.
func (s *suite) peerIngest(ctx context.Context, suiteName, name string, spec pipelineSpec, want int, topicConfig map[string]string) (measurement, error) {
	file, err := writePipeline(s.dir, s.cfg, spec)
	if err != nil {
		return measurement{}, err
	}
	if err := s.kafka.createTopicWith(ctx, spec.Topic, true, "compact", topicConfig); err != nil {
		return measurement{}, err
	}
	args := []string{"apply", file, "--state", filepath.Join(s.dir, spec.Name+".state"), "--log-format", "json", "--until-caught-up"}
	env := append(os.Environ(), "INGEST_SECRET_MYSQL_PASSWORD="+s.cfg.svc.CDCPass, "INGEST_VAR_KAFKA_BOOTSTRAP="+s.cfg.svc.Kafka)
	p, err := startClient(ctx, s.cfg.svc, filepath.Join(s.dir, spec.Name+".log"), env, s.cfg.Ingest, args...)
	if err != nil {
		return measurement{}, err
	}
	a, err := s.kafka.watch(ctx, spec.Topic, p.start, want, s.cfg.Timeout, p)
	u := p.usage()
	if err != nil {
		_ = p.stop()
		return measurement{}, err
	}
	if err := p.wait(s.cfg.Timeout); err != nil {
		return measurement{}, err
	}
	return s.clientMeasurement(suiteName, name, kindIngest, want, p, a, u), nil
}

// connectRun is one peer configuration's Kafka Connect run: its files.
type connectRun struct {
	name, dir string
	worker    string // worker.properties
	connector string // connector.properties
}

// newConnect writes the properties of one run of a peer configuration into a directory
// of its own (the offsets file stays there between the runs of a catch-up).
func (s *suite) newConnect(p peerConfig, label, prefix, table string) (connectRun, error) {
	r := connectRun{name: label, dir: filepath.Join(s.dir, label)}
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return r, err
	}
	r.worker, r.connector = filepath.Join(r.dir, "worker.properties"), filepath.Join(r.dir, "connector.properties")
	serverID := 1_000_000_000 + uint32(time.Now().UnixNano()%1_000_000_000)
	if err := writeProperties(r.worker, merge(connectWorker(s.cfg, filepath.Join(r.dir, "offsets")), p.Worker)); err != nil {
		return r, err
	}
	return r, writeProperties(r.connector, merge(connectConnector(s.cfg, label, prefix, table, serverID), p.Connector))
}

// startConnect starts Kafka Connect standalone on a run's files, logging beside them.
func (s *suite) startConnect(ctx context.Context, r connectRun, logName string) (*client, error) {
	args := append(slices.Clone(connectJVM), "-cp", filepath.Join(s.cfg.PeerLib, "*"),
		"org.apache.kafka.connect.cli.ConnectStandalone", r.worker, r.connector)
	return startClient(ctx, s.cfg.svc, filepath.Join(r.dir, logName), os.Environ(), s.cfg.Java, args...)
}

// peerConnect runs a peer until want records of this run are in topic, measures it and
// stops it.
func (s *suite) peerConnect(ctx context.Context, suiteName, name string, r connectRun, topic string, want int) (measurement, error) {
	return s.peerProcess(ctx, suiteName, name, topic, want, func() (*client, error) { return s.startConnect(ctx, r, "connect.log") })
}

// peerProcess runs a peer's process (started by start) until want records of this run are
// in topic, measures it and stops it.
func (s *suite) peerProcess(ctx context.Context, suiteName, name, topic string, want int, start func() (*client, error)) (measurement, error) {
	p, err := start()
	if err != nil {
		return measurement{}, err
	}
	a, err := s.kafka.watch(ctx, topic, p.start, want, s.cfg.Timeout, p)
	u := p.usage()
	if serr := p.stop(); err == nil && serr != nil {
		log.Printf("warning: %v", serr)
	}
	if err != nil {
		return measurement{}, err
	}
	return s.clientMeasurement(suiteName, name, kindPeer, want, p, a, u), nil
}

// primeConnect runs a peer once on a catch-up table before its changes are written: it
// inserts one row, waits for the peer's snapshot record of it, updates it, waits for the
// streamed record, and stops the peer, which then stores the binlog position in its offsets
// file.
func (s *suite) primeConnect(ctx context.Context, r connectRun, table, topic string) error {
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s SELECT %s FROM seq_0_to_0", table, rowSelect)); err != nil {
		return fmt.Errorf("insert the first row of %s: %w", table, err)
	}
	p, err := s.startConnect(ctx, r, "connect-prime.log")
	if err != nil {
		return err
	}
	_, err = s.kafka.watch(ctx, topic, p.start, 1, s.cfg.Timeout, p)
	if err == nil {
		if _, err = s.db.ExecContext(ctx, fmt.Sprintf("UPDATE %s SET %s WHERE id = 0", table, updateSet)); err == nil {
			_, err = s.kafka.watch(ctx, topic, p.start, 2, s.cfg.Timeout, p)
		}
	}
	if serr := p.stop(); err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("prime %s: %w", r.name, err)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "offsets")); err != nil {
		return fmt.Errorf("prime %s: no offsets stored: %w", r.name, err)
	}
	return nil
}

// clientMeasurement turns a client's run into a measurement: its time is from the start of
// the process to the last record of the run in Kafka (the broker's LogAppendTime), its CPU
// is the process tree's when that record had arrived.
func (s *suite) clientMeasurement(suiteName, name, kind string, rows int, p *client, a arrival, u usage) measurement {
	m := newMeasurement(suiteName, name, kind, rows, a.Bytes, a.Last.Sub(p.start))
	if d := a.Last.Sub(a.First).Seconds(); d > 0 {
		m.RowsPerSecFromFirst = round(float64(rows)/d, 0)
	}
	m.Guarantee = atLeastOnce
	m.StartupSec = round(a.First.Sub(p.start).Seconds(), 2)
	m.PeakRSSMiB = round(float64(p.peak())/(1<<20), 1)
	m.CPUSeconds = round(u.cpu.Seconds(), 2)
	m.MariaDBCPU, m.KafkaCPU = round(u.servers.MariaDB.Seconds(), 2), round(u.servers.Kafka.Seconds(), 2)
	m.OtherCPU = round(u.servers.others(u.cpu).Seconds(), 2)
	m.Note = busyNote(m)
	if a.Records != rows {
		m.Note = strings.TrimPrefix(m.Note+"; ", "; ") + fmt.Sprintf("%d records in the topic", a.Records)
	}
	log.Printf("  %s rows in %.2fs: %s rows/s (%s from the first record, %.2fs after the start), peak RSS %.0f MiB, CPU %.1fs%s",
		thousands(float64(rows)), m.Seconds, thousands(m.RowsPerSec), thousands(m.RowsPerSecFromFirst), m.StartupSec,
		m.PeakRSSMiB, m.CPUSeconds, noteSuffix(m.Note))
	return m
}
