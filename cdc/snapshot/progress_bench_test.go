package snapshot

import (
	"fmt"
	"testing"

	"github.com/ingestkit/ingest/cdc/binlogpos"
)

// BenchmarkProgressAt is the progress of one more finished chunk at 100 and 10,000
// finished chunks: what the runner asks for at every chunk's end. It must not grow with
// the chunk count.
func BenchmarkProgressAt(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			l := newLedger(nil)
			var token []byte
			for i := 0; i < n; i++ {
				id := l.begin()
				token = l.add(id, DoneChunk{DB: "d", Table: "t", Low: "f:4", High: "f:5", Rows: 2}, binlogpos.Position{File: "f", Offset: uint32(5 + i)})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := l.at(token); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
