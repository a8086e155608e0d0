package main

import (
	"strings"
	"testing"
)

// TestFlinkColumns checks that the Flink columns are the bench table's, in its order.
func TestFlinkColumns(t *testing.T) {
	var names []string
	for _, def := range strings.Split(tableColumns, ",\n") {
		names = append(names, strings.Fields(def)[0])
	}
	if len(names) != len(flinkColumns) {
		t.Fatalf("%d Flink columns for the table's %d (%v)", len(flinkColumns), len(names), names)
	}
	for i, col := range flinkColumns {
		if col[0] != names[i] {
			t.Errorf("Flink column %d is %s, the table's %s", i, col[0], names[i])
		}
	}
}

// TestFlinkSQL checks the statements of a snapshot and a catch-up run: the startup mode,
// a server id per reader, the configuration's options over the common ones, and the
// password's placeholder in place of the password.
func TestFlinkSQL(t *testing.T) {
	c := config{svc: services{MySQLHost: "127.0.0.1", MySQLPort: 3307, CDCUser: "cdc", CDCPass: "s3cret'", Kafka: "127.0.0.1:9092"}}
	tests := []struct {
		peer      string
		from      binlogPos
		want      []string
		wantNot   []string
		wantFlink string
	}{
		{
			peer: "flink-default",
			want: []string{"'scan.startup.mode' = 'initial'", "'server-id' = '1000',", "'table-name' = 'snap_1000',",
				"'connector' = 'upsert-kafka'", "'key.format' = 'json'", "'value.format' = 'json'", "`amount` DECIMAL(12, 2) NOT NULL,",
				"PRIMARY KEY (`id`) NOT ENFORCED", "INSERT INTO dst SELECT * FROM src;"},
			wantNot:   []string{"specific-offset", "debezium.poll.interval.ms", "linger.ms"},
			wantFlink: "parallelism.default=1",
		},
		{
			peer: "flink-tuned",
			from: binlogPos{File: "mariadb-bin.000007", Pos: 1234},
			want: []string{"'scan.startup.mode' = 'specific-offset'", "'scan.startup.specific-offset.file' = 'mariadb-bin.000007'",
				"'scan.startup.specific-offset.pos' = '1234'", "'server-id' = '1000-1001',", "'debezium.poll.interval.ms' = '50'",
				"'properties.compression.type' = 'lz4'"},
			wantNot:   []string{"'initial'"},
			wantFlink: "parallelism.default=2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.peer, func(t *testing.T) {
			p, ok := findPeer(tt.peer)
			if !ok || p.Kind != peerFlink {
				t.Fatalf("no Flink configuration %s", tt.peer)
			}
			table := "snap_1000"
			sql := flinkSQL(merge(flinkSource(c, table, 1000, p.readers(), tt.from), p.Source), merge(flinkSink(c, "t"), p.Sink))
			for _, w := range append(tt.want, "'password' = '"+flinkPasswordVar+"'") {
				if !strings.Contains(sql, w) {
					t.Errorf("no %q in\n%s", w, sql)
				}
			}
			for _, w := range append(tt.wantNot, c.svc.CDCPass) {
				if strings.Contains(sql, w) {
					t.Errorf("%q in\n%s", w, sql)
				}
			}
			if n := strings.Count(sql, ";\n"); n != 3 {
				t.Errorf("%d statements, want 3:\n%s", n, sql)
			}
			var flink []string
			for _, kv := range merge(flinkConf(), p.Flink) {
				flink = append(flink, kv[0]+"="+kv[1])
			}
			if !strings.Contains(strings.Join(flink, "\n"), tt.wantFlink) {
				t.Errorf("no %s in the configuration %v", tt.wantFlink, flink)
			}
			for k, v := range shownSettings(c, p) {
				if strings.Contains(v, c.svc.CDCPass) {
					t.Errorf("the results would show the password: %s = %s", k, v)
				}
			}
		})
	}
}

// TestPeerTargets judges ingest's rows/s against each Debezium run on every suite and
// against the tuned Flink CDC run on the snapshot only (the others for information), and
// the peak memory of every peer run.
func TestPeerTargets(t *testing.T) {
	ingest := ingestName(atLeastOnce)
	r := &results{Mode: partPeers}
	for _, suite := range []string{peerSnapshot, "catch-up txn=100"} {
		r.Measurements = append(r.Measurements,
			measurement{Suite: suite, Name: ingest, Kind: kindIngest, Rows: 1000, RowsPerSec: 300_000, PeakRSSMiB: 150},
			measurement{Suite: suite, Name: "debezium tuned", Kind: kindPeer, Rows: 1000, RowsPerSec: 30_000, PeakRSSMiB: 2000},
			measurement{Suite: suite, Name: "flink default", Kind: kindPeer, Rows: 1000, RowsPerSec: 5_000, PeakRSSMiB: 1200},
			measurement{Suite: suite, Name: "flink tuned", Kind: kindPeer, Rows: 1000, RowsPerSec: 20_000, PeakRSSMiB: 1400})
	}
	r.evaluatePeers()
	tests := []struct {
		check     string
		met, info bool
	}{
		{"snapshot: ingest vs debezium tuned, rows/s", false, false},         // 10x
		{"catch-up txn=100: ingest vs debezium tuned, rows/s", false, false}, // 10x
		{"snapshot: ingest vs flink default, rows/s", true, true},            // 60x, not judged
		{"catch-up txn=100: ingest vs flink default, rows/s", true, true},
		{"snapshot: ingest vs flink tuned, rows/s", false, false}, // 15x, judged
		{"catch-up txn=100: ingest vs flink tuned, rows/s", true, true},
		{"snapshot: peak RSS, debezium tuned vs ingest", true, false},       // 13.3x
		{"snapshot: peak RSS, flink default vs ingest", false, false},       // 8x
		{"catch-up txn=100: peak RSS, flink tuned vs ingest", false, false}, // 9.3x
	}
	for _, tt := range tests {
		t.Run(tt.check, func(t *testing.T) {
			var found *check
			for i := range r.Checks {
				if r.Checks[i].Name == tt.check {
					found = &r.Checks[i]
				}
			}
			if found == nil {
				t.Fatalf("no check %q", tt.check)
			}
			if found.Met != tt.met || found.Info != tt.info {
				t.Errorf("%+v: want met %v, info %v", *found, tt.met, tt.info)
			}
		})
	}
}
