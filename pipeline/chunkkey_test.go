package pipeline

import (
	"strings"
	"testing"
)

// TestChunkKeyColumns: scan.incremental.snapshot.chunk.key-column in Flink CDC's per-table
// form gives each table the column of the last entry whose pattern matches it; a bare
// column is every table's.
func TestChunkKeyColumns(t *testing.T) {
	tests := []struct {
		value string
		table string // db.table
		want  string // "" for none
	}{
		{`app.orders:id;app.log_\.*:seq`, "app.orders", "id"},
		{`app.orders:id;app.log_\.*:seq`, "app.log_2024", "seq"},
		{`app.orders:id;app.log_\.*:seq`, "app.users", ""},
		{`app.orders:id;app.log_\.*:seq`, "other.orders", ""},
		{`app.\.*:a; app.orders : b ;`, "app.orders", "b"},
		{`app.\.*:a; app.orders : b ;`, "app.users", "a"},
		{`order_id`, "app.orders", "order_id"},
		{`order_id`, "shop.items", "order_id"},
	}
	for _, tc := range tests {
		src := strings.Replace(minimal, "  tables: app.\\.*\n", "  tables: app.\\.*\n  scan.incremental.snapshot.chunk.key-column: '"+tc.value+"'\n", 1)
		def, err := Parse("p.yaml", []byte(src), testOptions())
		if err != nil {
			t.Fatalf("%s: %v", tc.value, err)
		}
		db, table, _ := strings.Cut(tc.table, ".")
		got, ok := def.Source.ChunkKeyColumn(db, table)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: %s gets %q, %v; want %q", tc.value, tc.table, got, ok, tc.want)
		}
	}
}
