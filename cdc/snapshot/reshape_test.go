package snapshot

import (
	"errors"
	"fmt"
	"testing"

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
