package binlog

import (
	"slices"
	"testing"

	"github.com/ingestkit/ingest/change"
)

func TestTruncatedTables(t *testing.T) {
	tests := []struct {
		query string
		want  []change.TableID
	}{
		{"TRUNCATE TABLE t", []change.TableID{{DB: "app", Table: "t"}}},
		{"truncate t", []change.TableID{{DB: "app", Table: "t"}}},
		{"/* c */ TRUNCATE TABLE `o``dd`.`t.x`;", []change.TableID{{DB: "o`dd", Table: "t.x"}}},
		{"TRUNCATE TABLE other . t", []change.TableID{{DB: "other", Table: "t"}}},
		{"DROP TABLE t", nil},
		{"TRUNCATE TABLE t, u", nil}, // not MySQL syntax
	}
	for _, tt := range tests {
		if got := truncatedTables("app", tt.query); !slices.Equal(got, tt.want) {
			t.Errorf("truncatedTables(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
}
