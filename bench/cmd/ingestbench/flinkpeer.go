package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The Flink CDC peer of the peers part: Flink CDC's MySQL source
// (org.apache.flink:flink-sql-connector-mysql-cdc) writing through flink-connector-kafka's
// upsert-kafka, in a local Flink (a MiniCluster in one JVM) run by a SQL main of ours,
// bench/peers/flink/FlinkPeer.java, that executes
//
//	CREATE TABLE src (...) WITH ('connector' = 'mysql-cdc', ...);
//	CREATE TABLE dst (...) WITH ('connector' = 'upsert-kafka', ...);
//	INSERT INTO dst SELECT * FROM src;
//
// and streams until it is stopped. upsert-kafka with json key and value writes ingest's
// topic shape: the key is the primary key's JSON, the value the flat row's, a delete a
// tombstone, an update one record.

// flinkColumns are the columns of the bench table (tableColumns) as Flink SQL declares them,
// in table order: the types Flink CDC's MySQL source reads them as (TINYINT(1) is a
// BOOLEAN, DATETIME a TIMESTAMP, TIMESTAMP a TIMESTAMP_LTZ, JSON and the strings STRING)
// and ingest's consumer types name (consumer.FlinkTypeOf).
var flinkColumns = [][2]string{
	{"id", "BIGINT NOT NULL"},
	{"account_id", "INT NOT NULL"},
	{"name", "STRING NOT NULL"},
	{"email", "STRING"},
	{"amount", "DECIMAL(12, 2) NOT NULL"},
	{"score", "DOUBLE"},
	{"active", "BOOLEAN NOT NULL"},
	{"status", "STRING NOT NULL"},
	{"created_at", "TIMESTAMP(6) NOT NULL"},
	{"updated_at", "TIMESTAMP_LTZ(3)"},
	{"note", "STRING"},
	{"attrs", "STRING"},
}

// flinkJVM are the JVM options of a Flink run: the heap of Connect's (connectJVM), G1, and
// the --add-opens Flink's distribution gives on Java 17 (env.java.opts.all of its
// config.yaml), which its serializers need.
var flinkJVM = []string{"-Xms256M", "-Xmx2G", "-XX:+UseG1GC", "-Djava.awt.headless=true",
	"--add-exports=java.base/sun.net.util=ALL-UNNAMED", "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
	"--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.net=ALL-UNNAMED",
	"--add-opens=java.base/java.io=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
	"--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
	"--add-opens=java.base/java.text=ALL-UNNAMED", "--add-opens=java.base/java.time=ALL-UNNAMED",
	"--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED"}

// flinkPasswordVar is the placeholder of the MySQL password in a run's statements;
// FlinkPeer replaces it with the value of the environment variable flinkPasswordEnv, so
// that the password is in no file and no log.
const (
	flinkPasswordVar = "${mysql.password}"
	flinkPasswordEnv = "FLINK_PEER_MYSQL_PASSWORD"
)

// flinkConf returns the Flink configuration common to every configuration: one reader
// (Flink's default parallelism), checkpoints every 10 s (what Flink CDC's documentation
// sets: with several readers the source switches from the snapshot to the binlog only
// after a checkpoint, and the sink flushes at each), UTC as the session time zone.
func flinkConf() [][2]string {
	return [][2]string{
		{"parallelism.default", "1"},
		{"execution.checkpointing.interval", "10s"},
		{"table.local-time-zone", "UTC"},
	}
}

// flinkSource returns the mysql-cdc options common to every configuration: the table, the
// CDC user (its grants suffice: the incremental snapshot takes no locks), a random range
// of server ids (one per reader), the server's time zone, and where to start: 'initial'
// (the snapshot, then the binlog) when from is zero, else 'specific-offset' at from.
func flinkSource(c config, table string, serverID uint32, readers int, from binlogPos) [][2]string {
	ids := fmt.Sprint(serverID)
	if readers > 1 {
		ids = fmt.Sprintf("%d-%d", serverID, serverID+uint32(readers)-1)
	}
	out := [][2]string{
		{"connector", "mysql-cdc"},
		{"hostname", c.svc.MySQLHost},
		{"port", strconv.Itoa(c.svc.MySQLPort)},
		{"username", c.svc.CDCUser},
		{"password", flinkPasswordVar},
		{"database-name", benchDB},
		{"table-name", table},
		{"server-id", ids},
		{"server-time-zone", "UTC"},
	}
	if from.File == "" {
		return append(out, [2]string{"scan.startup.mode", "initial"})
	}
	return append(out, [][2]string{
		{"scan.startup.mode", "specific-offset"},
		{"scan.startup.specific-offset.file", from.File},
		{"scan.startup.specific-offset.pos", fmt.Sprint(from.Pos)},
	}...)
}

// flinkSink returns the upsert-kafka options common to every configuration: json key and
// value (the key the primary key's JSON, the value the flat row's), decimals as plain
// numbers (not 1E+1).
func flinkSink(c config, topic string) [][2]string {
	return [][2]string{
		{"connector", "upsert-kafka"},
		{"topic", topic},
		{"properties.bootstrap.servers", c.svc.Kafka},
		{"key.format", "json"},
		{"value.format", "json"},
		{"key.json.encode.decimal-as-plain-number", "true"},
		{"value.json.encode.decimal-as-plain-number", "true"},
	}
}

// readers returns the parallelism of a Flink configuration.
func (p peerConfig) readers() int {
	for _, kv := range merge(flinkConf(), p.Flink) {
		if kv[0] == "parallelism.default" {
			if n, err := strconv.Atoi(kv[1]); err == nil && n > 0 {
				return n
			}
		}
	}
	return 1
}

// flinkSQL returns the statements of a Flink run: the source and sink tables with options
// and INSERT INTO the sink SELECT * FROM the source.
func flinkSQL(source, sink [][2]string) string {
	var b strings.Builder
	table := func(name string, options [][2]string) {
		fmt.Fprintf(&b, "CREATE TABLE %s (\n", name)
		for _, col := range flinkColumns {
			fmt.Fprintf(&b, "  `%s` %s,\n", col[0], col[1])
		}
		b.WriteString("  PRIMARY KEY (`id`) NOT ENFORCED\n) WITH (\n")
		for i, kv := range options {
			sep := ","
			if i == len(options)-1 {
				sep = ""
			}
			fmt.Fprintf(&b, "  %s = %s%s\n", sqlString(kv[0]), sqlString(kv[1]), sep)
		}
		b.WriteString(");\n")
	}
	table("src", source)
	table("dst", sink)
	b.WriteString("INSERT INTO dst SELECT * FROM src;\n")
	return b.String()
}

// sqlString quotes s as a Flink SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// flinkRun is one run of a Flink configuration: its files.
type flinkRun struct {
	name, dir string
	conf      string // flink.properties
	sql       string // job.sql
	tmp       string // java.io.tmpdir: the files Flink leaves when stopped (its RPC jar, the MiniCluster's)
}

// newFlink writes the configuration and statements of one run of a Flink configuration
// into a directory of its own: a snapshot of table when from is zero, else the binlog from
// from on.
func (s *suite) newFlink(p peerConfig, label, table, topic string, from binlogPos) (flinkRun, error) {
	r := flinkRun{name: label, dir: filepath.Join(s.dir, label)}
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return r, err
	}
	r.conf, r.sql, r.tmp = filepath.Join(r.dir, "flink.properties"), filepath.Join(r.dir, "job.sql"), filepath.Join(r.dir, "tmp")
	if err := os.MkdirAll(r.tmp, 0o700); err != nil {
		return r, err
	}
	if err := writeProperties(r.conf, merge(flinkConf(), p.Flink)); err != nil {
		return r, err
	}
	serverID := 1_000_000_000 + rand.Uint32N(1_000_000_000)
	source := merge(flinkSource(s.cfg, table, serverID, p.readers(), from), p.Source)
	sink := merge(flinkSink(s.cfg, topic), p.Sink)
	if err := os.WriteFile(r.sql, []byte(flinkSQL(source, sink)), 0o600); err != nil {
		return r, fmt.Errorf("write %s: %w", r.sql, err)
	}
	return r, nil
}

// peerFlink runs a Flink configuration until want records of this run are in topic,
// measures it and stops it, and removes the files Flink left in its temporary directory.
func (s *suite) peerFlink(ctx context.Context, suiteName, name string, r flinkRun, topic string, want int) (measurement, error) {
	defer os.RemoveAll(r.tmp)
	return s.peerProcess(ctx, suiteName, name, topic, want, func() (*client, error) {
		args := append(slices.Clone(flinkJVM), "-Djava.io.tmpdir="+r.tmp, "-Dlog4j.configurationFile="+filepath.Join(s.cfg.FlinkClasses, "log4j2.properties"),
			"-cp", s.cfg.FlinkClasses+string(os.PathListSeparator)+filepath.Join(s.cfg.FlinkLib, "*"),
			"FlinkPeer", r.conf, r.sql)
		env := append(os.Environ(), flinkPasswordEnv+"="+s.cfg.svc.CDCPass)
		return startClient(ctx, s.cfg.svc, filepath.Join(r.dir, "flink.log"), env, s.cfg.Java, args...)
	})
}

// flinkShownSettings are the settings of a Flink configuration as the results record them:
// the common ones with this configuration's over them, without the run's names and the
// password.
func flinkShownSettings(c config, p peerConfig) map[string]string {
	var cols []string
	for _, col := range flinkColumns {
		cols = append(cols, col[0]+" "+col[1])
	}
	out := map[string]string{
		"jvm":     strings.Join(flinkJVM, " ") + " -Djava.io.tmpdir=<run>/tmp",
		"main":    "FlinkPeer (bench/peers/flink): CREATE TABLE src (<columns>, PRIMARY KEY (id) NOT ENFORCED) WITH (<source: ...>); CREATE TABLE dst (<columns>, PRIMARY KEY (id) NOT ENFORCED) WITH (<sink: ...>); INSERT INTO dst SELECT * FROM src",
		"columns": strings.Join(cols, ", "),
	}
	for _, kv := range merge(flinkConf(), p.Flink) {
		out["flink: "+kv[0]] = kv[1]
	}
	source := merge(flinkSource(c, "<table>", 0, p.readers(), binlogPos{}), p.Source)
	source = append(source, [][2]string{
		{"scan.startup.specific-offset.file", "<catch-up: the binlog file before the changes>"},
		{"scan.startup.specific-offset.pos", "<catch-up: the binlog position before the changes>"},
	}...)
	for _, kv := range source {
		switch kv[0] {
		case "password":
			kv[1] = "<the CDC user's>"
		case "server-id":
			kv[1] = fmt.Sprintf("<random, unique per run: %d id(s), one per reader>", p.readers())
		case "scan.startup.mode":
			kv[1] = "initial (snapshot), specific-offset (catch-up)"
		}
		out["source: "+kv[0]] = kv[1]
	}
	for _, kv := range merge(flinkSink(c, "<run>"), p.Sink) {
		out["sink: "+kv[0]] = kv[1]
	}
	return out
}

// flinkVersions names the versions of Flink CDC, the Kafka connector and Flink in lib.
func flinkVersions(lib string) string {
	jar := func(prefix string) string { return jarVersion(lib, prefix) }
	return fmt.Sprintf("org.apache.flink:flink-sql-connector-mysql-cdc %s (mysql-connector-j %s) with flink-connector-kafka %s (kafka-clients %s) upsert-kafka on Flink %s (local MiniCluster)",
		jar("flink-sql-connector-mysql-cdc"), jar("mysql-connector-j"), jar("flink-connector-kafka"), jar("kafka-clients"), jar("flink-runtime"))
}
