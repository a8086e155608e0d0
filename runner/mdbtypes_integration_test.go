//go:build integration

package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/internal/testenv"
)

// TestMariaDBTypesSameBytes is TestAllTypesSameBytes for the types the peers' fixtures found
// wrong: UUID, INET4 and INET6 as keys (chunked in small chunks, so that the snapshot orders
// and bounds them as the server does) and as columns, DECIMAL ZEROFILL, the macce, keybcs2
// and swe7 character sets and a GEOMETRYCOLLECTION, and MariaDB 11's shape of table (ucakey:
// a utf8mb4_uca1400_ai_ci text key with UUID, INET4 and INET6 columns). The snapshot and the
// binlog must write byte-identical records, equal to the one golden file (docs/output.md's
// rendering) on every server of the matrix.
func TestMariaDBTypesSameBytes(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		testenv.Exec(t, db, testenv.MariaDBTypesTables...)
		start := gtidPos(t, db)
		testenv.Exec(t, db, testenv.MariaDBTypesRows...)
		var want int
		for _, tbl := range []string{"mdbtypes", "inet4key", "inet6key", "ucakey"} {
			var n int
			if err := db.QueryRow("SELECT COUNT(*) FROM " + tbl).Scan(&n); err != nil {
				t.Fatal(err)
			}
			want += n
		}

		snapTopic, binlogTopic := testenv.Name(t)+"_snap", testenv.Name(t)+"_binlog"
		t.Cleanup(func() {
			_, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), snapTopic, binlogTopic)
		})
		const chunks = "  scan.incremental.snapshot.chunk.size: 3\n"
		// Two pipelines, each named for its run: a pipeline's state in Kafka is keyed by its
		// name, and a fresh state directory resumes from it.
		snapDef := definitionOn(t, srv, name, chunks, "  topic: "+snapTopic)
		snapDef.Pipeline.Name = snapTopic
		applyUntilCaughtUp(t, snapDef, t.TempDir())
		binlogDef := definitionOn(t, srv, name, "  scan.startup.mode: specific-offset\n  scan.startup.specific-offset.gtid-set: "+start,
			"  topic: "+binlogTopic)
		binlogDef.Pipeline.Name = binlogTopic
		applyUntilCaughtUp(t, binlogDef, t.TempDir())
		snap, binlog := materialize(consumeAll(t, snapTopic)), materialize(consumeAll(t, binlogTopic))
		if len(snap) != want || len(binlog) != want {
			t.Fatalf("snapshot wrote %d keys, binlog %d, want %d", len(snap), len(binlog), want)
		}
		var lines []string
		for key, v := range snap {
			if binlog[key] != v {
				t.Errorf("key %s:\n snapshot %s\n binlog   %s", key, v, binlog[key])
			}
			lines = append(lines, key+" "+v)
		}
		sort.Strings(lines)
		goldenFile(t, filepath.Join("testdata", "mdbtypes.golden"), strings.Join(lines, "\n")+"\n")
	})
}

// TestNullableKeyRefused names a nullable column in transform primary-keys: the snapshot and
// the binlog stream both refuse the table before writing anything, with the same error.
func TestNullableKeyRefused(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE nk (id INT NOT NULL PRIMARY KEY, k INT NULL, v INT)")
	start := gtidPos(t, db)
	testenv.Exec(t, db, "INSERT INTO nk VALUES (1, 10, 1), (2, NULL, 2), (3, NULL, 3)")
	topic := testenv.Name(t)
	t.Cleanup(func() { _, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), topic) })
	transform := fmt.Sprintf("  topic: %s\ntransform:\n  - source-table: %s.nk\n    primary-keys: k", topic, name)
	var msgs []string
	for i, source := range []string{"", "  scan.startup.mode: specific-offset\n  scan.startup.specific-offset.gtid-set: " + start} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		def := definition(t, name, source, transform)
		def.Pipeline.Name = fmt.Sprintf("%s-%d", topic, i) // two pipelines: each its own state in Kafka
		err := Run(ctx, def, Options{StateDir: t.TempDir(), UntilCaughtUp: true})
		cancel()
		var nk *schema.NullableKeyError
		if !errors.As(err, &nk) || nk.Column != "k" || nk.Table.Table != "nk" {
			t.Fatalf("source %q: Run returned %v, want a NullableKeyError for nk.k", source, err)
		}
		msgs = append(msgs, nk.Error())
	}
	if msgs[0] != msgs[1] {
		t.Errorf("snapshot and binlog refuse differently:\n %s\n %s", msgs[0], msgs[1])
	}
	adm := kadm.NewClient(testenv.Kafka(t))
	ends, err := adm.ListEndOffsets(context.Background(), topic)
	if err == nil {
		ends.Each(func(o kadm.ListedOffset) {
			if o.Offset > 0 {
				t.Errorf("%s partition %d has %d records, want none", topic, o.Partition, o.Offset)
			}
		})
	}
}
