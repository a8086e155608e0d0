package runner

import (
	"fmt"
	"testing"

	"github.com/ingestkit/ingest/cdc/snapshot"
	"github.com/ingestkit/ingest/upsert"
)

// BenchmarkHandoffState is the state work of one source transaction during the hand-off,
// at 100 and 10,000 finished chunks: what the runner gives the sink with the transaction
// (handoffState) and the state records the sink writes for it, as if every transaction
// were committed on its own. Neither may grow with the chunk count; the first transaction
// of the hand-off, which encodes the chunks once, is not measured.
func BenchmarkHandoffState(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			p := progressWith(n)
			p.Done = true
			r := &run{phases: &phases{snap: snapshot.New(snapshot.Config{Resume: p})}}
			w := upsert.NewStateEncoder("bench", "__ingest_state")
			schema := []byte(`{"format":1,"tables":[{"db":"d","table":"t","versions":[{"at":"file=b.1:4","shape":{"columns":[{"name":"id","type":"int"}]}}]}]}`)
			step := func() {
				st, err := r.handoffState()
				if err != nil {
					b.Fatal(err)
				}
				st.Schema = schema
				if st.SchemaParts, err = r.history.split(schema); err != nil {
					b.Fatal(err)
				}
				w.Encode(&upsert.Checkpoint{Position: []byte("file=mariadb-bin.000001:4;mariadb-gtid=0-1-42"), State: st})
			}
			step() // the hand-off's first transaction: its chunks are encoded and written once
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				step()
			}
		})
	}
}
