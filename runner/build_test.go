package runner

import (
	"testing"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/pipeline"
)

// TestChunkKeys: scan.incremental.snapshot.chunk.key-column reaches the snapshot per table,
// in Flink CDC's pattern:column form.
func TestChunkKeys(t *testing.T) {
	yaml := "source:\n  type: mysql\n  hostname: db\n  username: u\n  password: p\n  tables: app.\\.*\n" +
		"  scan.incremental.snapshot.chunk.key-column: 'app.orders:order_id;app.log_\\.*:seq'\n" +
		"sink:\n  type: upsert-kafka\n  properties.bootstrap.servers: 127.0.0.1:9092\n"
	def, err := pipeline.Parse("p.yaml", []byte(yaml), pipeline.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keys := chunkKeys(&def.Source)
	for table, want := range map[string]string{"orders": "order_id", "log_7": "seq", "users": ""} {
		got := keys(change.TableID{DB: "app", Table: table})
		if want == "" && got != nil || want != "" && (len(got) != 1 || got[0] != want) {
			t.Errorf("app.%s: chunk key %q, want %q", table, got, want)
		}
	}
	if chunkKeys(&pipeline.Source{}) != nil {
		t.Error("no option: want the primary key (nil)")
	}
}
