//go:build integration

package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/ingestkit/ingest/internal/testenv"
)

// TestAllTypesSameBytes writes the all-types rows once and reads them twice: through the
// initial snapshot (SELECT) into one topic and through the binlog into another. Every key
// must carry byte-identical values on both, and the values must equal the golden file
// (docs/output.md rendered for every type), in both timestamp standards and with
// json.encode.time-as: micros.
func TestAllTypesSameBytes(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		start := gtidPos(t, db)
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, stmt := range []string{
			testenv.AllTypesTable,
			"SET SESSION time_zone = '+05:30'",
			testenv.AllTypesRow1,
			"INSERT INTO alltypes (id) VALUES (2)",
			// FLOAT values whose shortest float32 text has more digits than the text protocol's
			// default FLOAT rendering, and float32 extremes.
			"INSERT INTO alltypes (id, c_float, c_double) VALUES (3, 123.456789, 0.1), (4, 3.4e38, 4.9e-324), (5, 1.17549435e-38, -0.0), (6, 16777217, 1e21)",
			"SET SESSION sql_mode = ''",
			"INSERT INTO alltypes (id, c_date, c_dt, c_dt6, c_ts, c_year, c_set, c_enum, c_bool) VALUES (7, '0000-00-00', '0000-00-00 00:00:00', '2024-00-15 10:00:00', '0000-00-00 00:00:00', 0, '', 'small', 5)",
		} {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}

		for _, variant := range []struct{ name, option string }{
			{"SQL", "json.timestamp-format.standard: SQL"},
			{"ISO-8601", "json.timestamp-format.standard: ISO-8601"},
			{"time-micros", "json.encode.time-as: micros"},
		} {
			t.Run(variant.name, func(t *testing.T) {
				sink := "  " + variant.option + "\n  topic: %s"
				snapTopic, binlogTopic := testenv.Name(t)+"_snap", testenv.Name(t)+"_binlog"
				t.Cleanup(func() {
					_, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), snapTopic, binlogTopic)
				})
				// Two pipelines, each named for its run: a pipeline's state in Kafka is keyed by
				// its name, and a fresh state directory resumes from it.
				snapDef := definitionOn(t, srv, name, "", fmt.Sprintf(sink, snapTopic))
				snapDef.Pipeline.Name = snapTopic
				applyUntilCaughtUp(t, snapDef, t.TempDir())
				binlogDef := definitionOn(t, srv, name, "  scan.startup.mode: specific-offset\n  scan.startup.specific-offset.gtid-set: "+start,
					fmt.Sprintf(sink, binlogTopic))
				binlogDef.Pipeline.Name = binlogTopic
				applyUntilCaughtUp(t, binlogDef, t.TempDir())
				snap, binlog := materialize(consumeAll(t, snapTopic)), materialize(consumeAll(t, binlogTopic))
				if len(snap) != 7 {
					t.Fatalf("snapshot wrote %d keys, want 7", len(snap))
				}
				var lines []string
				for key, v := range snap {
					if binlog[key] != v {
						t.Errorf("key %s:\n snapshot %s\n binlog   %s", key, v, binlog[key])
					}
					lines = append(lines, key+" "+v)
				}
				sort.Strings(lines)
				goldenFile(t, filepath.Join("testdata", "alltypes-"+strings.ToLower(variant.name)+".golden"), strings.Join(lines, "\n")+"\n")
			})
		}
	})
}
