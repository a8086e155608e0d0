package snapshot

import (
	"errors"
	"fmt"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"

	"github.com/ingestkit/ingest/change"
)

func TestReshaped(t *testing.T) {
	shape := &shapeError{Table: change.TableID{DB: "d", Table: "t"}, Err: errors.New("the binlog has 5 columns, the snapshot 4")}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"shape", shape, true},
		{"wrapped shape", fmt.Errorf("read chunk: %w", shape), true},
		{"dropped column", fmt.Errorf("read: %w", &mysql.MySQLError{Number: errBadField, Message: "Unknown column 'x'"}), true},
		{"dropped column (row connection)", fmt.Errorf("read: %w", &gomysql.MyError{Code: errBadField, Message: "Unknown column 'x'"}), true},
		{"other server error", &mysql.MySQLError{Number: 1146, Message: "Table doesn't exist"}, false},
		{"other error", errors.New("connection refused"), false},
	}
	for _, tc := range tests {
		if got := reshaped(tc.err); got != tc.want {
			t.Errorf("%s: reshaped(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
	if got, want := shape.Error(), "table d.t changed shape during the snapshot: the binlog has 5 columns, the snapshot 4"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

func TestSameKey(t *testing.T) {
	id := chunkKey{{name: "id", typ: keySigned, sqlType: "bigint(20)"}}
	tests := []struct {
		name string
		a, b chunkKey
		want bool
	}{
		{"same", id, chunkKey{{name: "id", index: 3, typ: keySigned, sqlType: "bigint(20)"}}, true},
		{"other column", id, chunkKey{{name: "no", typ: keySigned, sqlType: "bigint(20)"}}, false},
		{"other type", id, chunkKey{{name: "id", typ: keyUnsigned, sqlType: "bigint(20) unsigned"}}, false},
		{"longer", id, append(chunkKey{id[0]}, keyColumn{name: "b", typ: keyText}), false},
	}
	for _, tc := range tests {
		if got := sameKey(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: sameKey = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestGoneBeforeLow: in a resumed run, a delete read before the low watermark whose row is
// narrower or wider than the table now (written before an ADD or DROP COLUMN), or as wide
// but with a column of another type then (dropped and added again; chaos TestSIGKILL found
// it), still records its key for a tombstone when the key is in the span, and one whose key
// cannot be decoded is a shape change.
func TestGoneBeforeLow(t *testing.T) {
	tbl := intTable() // id, v
	s := mustSpan(t, tbl, "10", "20")
	m := &mergeState{span: s, rows: newChunkRows(tbl.desc.Schema, 4), gone: map[string]change.Row{}}
	for _, raw := range [][]any{
		{int64(15)},                          // before ADD COLUMN v: in the span
		{int64(16), int64(1), int64(2)},      // before DROP COLUMN: in the span
		{int64(25)},                          // outside the span
		{int64(17), int64(1), int64(2), nil}, // wider still
		{int64(18), "v was a string then"},   // as wide as now, another type before a DDL
	} {
		if err := m.remove(t.Context(), raw, false); err != nil {
			t.Fatalf("remove %v: %v", raw, err)
		}
	}
	got := map[int64]bool{}
	for _, row := range m.tombstones() {
		got[row[0].Int()] = true
		if len(row) != 2 || !row[1].IsNull() {
			t.Errorf("tombstone image %+v: want the table's width with only the key set", row)
		}
	}
	if len(got) != 4 || !got[15] || !got[16] || !got[17] || !got[18] {
		t.Fatalf("tombstones for %v, want 15, 16, 17 and 18", got)
	}
	err := m.remove(t.Context(), []any{"not an id"}, false)
	if !reshaped(err) {
		t.Fatalf("an undecodable key before a DDL: %v, want a shape error", err)
	}
}
