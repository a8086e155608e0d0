package upsert

import (
	"testing"
	"time"

	"github.com/ingestkit/ingest/change"
)

// benchSchema and benchRow are a typical order row: 12 columns, ~300 bytes of JSON.
var benchSchema = &change.Schema{
	Table: change.TableID{DB: "shop", Table: "orders"},
	Columns: []change.Column{{Name: "id"}, {Name: "customer_id"}, {Name: "status"}, {Name: "total"},
		{Name: "currency"}, {Name: "note"}, {Name: "weight"}, {Name: "paid"}, {Name: "created_at"},
		{Name: "updated_at"}, {Name: "shipped_on"}, {Name: "attrs"}},
	Key:     []int{0},
	Version: 1,
}

func benchRow(i int64) change.Row {
	return change.Row{
		change.IntValue(i), change.UintValue(uint64(i % 9973)), change.StringValue([]byte("shipped")),
		change.DecimalValue([]byte("1234.50")), change.StringValue([]byte("EUR")),
		change.StringValue([]byte("leave at the door, ring twice \"please\"")), change.Float64Value(12.75),
		change.BoolValue(true), change.DateTimeValue(2024, 5, 1, 4, 30, 0, 0),
		change.TimestampValue(1714537800123000 + i), change.DateValue(2024, 5, 2),
		change.JSONValue([]byte(`{"gift":true,"tags":["a","b"]}`)),
	}
}

// BenchmarkEncode measures encoding of updates (key + value) into records.
func BenchmarkEncode(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts EncodeOptions
	}{
		{"plain", EncodeOptions{}},
		{"headers", EncodeOptions{TableHeaders: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			enc := NewEncoder(tc.opts)
			rows := make([]change.Change, 1024)
			for i := range rows {
				rows[i] = change.Change{Schema: benchSchema, Op: change.Update, Before: benchRow(int64(i)), After: benchRow(int64(i))}
			}
			msgs := make([]Message, 0, 4)
			var size int64
			commit := time.Unix(1714537800, 0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var err error
				msgs, err = enc.Encode(msgs[:0], &rows[i%len(rows)], commit)
				if err != nil {
					b.Fatal(err)
				}
				size += int64(len(msgs[0].Key) + len(msgs[0].Value))
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(size)/float64(b.N), "bytes/row")
		})
	}
}

// BenchmarkAppendString measures JSON string escaping of text typical of each case: plain
// text, an e-mail, and a JSON document (a JSON column, about a quarter quotes).
func BenchmarkAppendString(b *testing.B) {
	for _, tc := range []struct{ name, s string }{
		{"plain", "3f2a9c41d0b7e85a3f2a9c41d0b7e85a3f2a9c41d0b7e85a"},
		{"email", "user123456@example.com"},
		{"json-doc", `{"color":"green","size":17,"tags":["a","t7"]}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := []byte(tc.s)
			dst := make([]byte, 0, 256)
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				dst = appendString(dst[:0], s)
			}
		})
	}
}
