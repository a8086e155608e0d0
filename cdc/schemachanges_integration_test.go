//go:build integration

package cdc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
)

// TestSchemaChangeDDL: each SchemaChange tells what its statement did (kind), the statement,
// the position after it (the End position of its transaction) and the shape before it; a
// table created has none. Tables of other databases are not captured and tell nothing.
func TestSchemaChangeDDL(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		other, odb := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT)", "INSERT INTO t VALUES (1, 1)")
		testenv.Exec(t, odb, "CREATE TABLE o (id INT PRIMARY KEY)")
		cfg := testConfig(srv, name)
		cfg.Startup, cfg.StartPosition = StartSpecific, gtidPos(t, db)
		src, r := startSource(t, cfg, nil)
		waitHistory(t, src)
		testenv.Exec(t, db,
			"ALTER TABLE t ADD COLUMN c INT",
			"ALTER TABLE "+other+".o ADD COLUMN x INT",
			"TRUNCATE TABLE "+other+".o",
			"ALTER TABLE t ADD INDEX (a)",
			"TRUNCATE TABLE t",
			"CREATE TABLE u (k INT PRIMARY KEY)",
			"DROP TABLE t",
		)
		got := collect(t, r, func(c change.Change) bool {
			return c.Op == change.SchemaChange && c.DDL != nil && c.DDL.Kind == change.Dropped
		})
		var lines []string
		for i, c := range got.changes {
			if c.Op != change.SchemaChange {
				continue
			}
			d := c.DDL
			if d == nil {
				t.Fatalf("a SchemaChange of %s without its DDL", c.Schema.Table)
			}
			if d.Position != got.ends[i] {
				t.Errorf("%q: position %s, want the End position of its transaction %s", d.Statement, d.Position, got.ends[i])
			}
			prev := "-"
			if d.Previous != nil {
				prev = columns(d.Previous)
			}
			stmt, _, _ := strings.Cut(strings.ReplaceAll(d.Statement, "`", ""), " /*")
			lines = append(lines, fmt.Sprintf("%d %s %s -> %s: %s", d.Kind, c.Schema.Table.Table, prev, columns(c.Schema), stmt))
		}
		want := []string{
			"0 t id,a[id] -> id,a,c[id]: ALTER TABLE t ADD COLUMN c INT",
			"2 t id,a,c[id] -> id,a,c[id]: TRUNCATE TABLE t",
			"0 u - -> k[k]: CREATE TABLE u (k INT PRIMARY KEY)",
			"1 t id,a,c[id] -> id,a,c[id]: DROP TABLE t",
		}
		if strings.Join(lines, "\n") != strings.Join(want, "\n") {
			t.Errorf("schema changes:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	})
}

// columns renders a shape as its column names and, in brackets, its key.
func columns(s *change.Schema) string {
	names := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		names[i] = c.Name
	}
	key := make([]string, len(s.Key))
	for i, k := range s.Key {
		key[i] = s.Columns[k].Name
	}
	return strings.Join(names, ",") + "[" + strings.Join(key, ",") + "]"
}
