package schemachange

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/change"
)

var tbl = change.TableID{DB: "app", Table: "t"}

// shape builds a schema from "name type" pairs; the first column is the key.
func shape(version uint64, cols ...string) *change.Schema {
	s := &change.Schema{Table: tbl, Version: version, Key: []int{0}}
	for _, c := range cols {
		name, typ, _ := strings.Cut(c, " ")
		s.Columns = append(s.Columns, change.Column{Name: name, SQLType: typ})
	}
	return s
}

// row builds a row of string values; "-" is NULL.
func row(vals ...string) change.Row {
	r := make(change.Row, len(vals))
	for i, v := range vals {
		if v != "-" {
			r[i] = change.StringValue([]byte(v))
		}
	}
	return r
}

// render writes a change's after image as name=value pairs of its schema.
func render(c change.Change) string {
	var b strings.Builder
	for i, col := range c.Schema.Columns {
		v := "-"
		if c.After[i].Kind != change.Null {
			v = string(c.After[i].Bytes)
		}
		fmt.Fprintf(&b, "%s=%s ", col.Name, v)
	}
	return strings.TrimSpace(b.String())
}

func ddl(prev *change.Schema, stmt string) *change.DDL {
	return &change.DDL{Statement: stmt, Position: "file=bin.000001:400", Previous: prev}
}

func TestMapperModes(t *testing.T) {
	v1 := shape(1, "id int", "a int", "b int")
	v2 := shape(2, "id int", "a int", "b int", "c int") // ADD COLUMN c
	v3 := shape(3, "id int", "b int", "c int")          // DROP COLUMN a
	v4 := shape(4, "id int", "bb int", "c int")         // RENAME COLUMN b TO bb
	v5 := shape(5, "id int", "bb int", "c varchar(10)") // MODIFY c VARCHAR
	v6 := shape(6, "id int", "c varchar(10)", "bb int") // MODIFY c ... AFTER id
	batches := []change.Batch{
		{Changes: []change.Change{{Schema: v1, Op: change.Insert, After: row("1", "a1", "b1")}}},
		{Changes: []change.Change{{Schema: v2, Op: change.SchemaChange, DDL: ddl(v1, "ADD c")}}},
		{Changes: []change.Change{{Schema: v2, Op: change.Insert, After: row("2", "a2", "b2", "c2")}}},
		{Changes: []change.Change{{Schema: v3, Op: change.SchemaChange, DDL: ddl(v2, "DROP a")},
			{Schema: v3, Op: change.Insert, After: row("3", "b3", "c3")}}},
		{Changes: []change.Change{{Schema: v4, Op: change.SchemaChange, DDL: ddl(v3, "RENAME b")},
			{Schema: v4, Op: change.Update, Before: row("3", "b3", "c3"), After: row("3", "bb3", "c3")}}},
		{Changes: []change.Change{{Schema: v5, Op: change.SchemaChange, DDL: ddl(v4, "MODIFY c")},
			{Schema: v5, Op: change.Insert, After: row("5", "bb5", "c5")}}},
		{Changes: []change.Change{{Schema: v6, Op: change.SchemaChange, DDL: ddl(v5, "MODIFY c AFTER id")},
			{Schema: v6, Op: change.Insert, After: row("6", "c6", "bb6")}}},
	}
	tests := []struct {
		mode Mode
		want []string
	}{
		{Evolve, []string{
			"id=1 a=a1 b=b1",
			"id=2 a=a2 b=b2 c=c2",
			"id=3 b=b3 c=c3",
			"id=3 bb=bb3 c=c3",
			"id=5 bb=bb5 c=c5",
			"id=6 c=c6 bb=bb6",
		}},
		{Lenient, []string{
			"id=1 a=a1 b=b1",
			"id=2 a=a2 b=b2 c=c2",
			"id=3 a=- b=b3 c=c3",
			"id=3 a=- b=- c=c3 bb=bb3",
			"id=5 a=- b=- c=c5 bb=bb5",
			"id=6 a=- b=- c=c6 bb=bb6",
		}},
		{Ignore, []string{
			"id=1 a=a1 b=b1",
			"id=2 a=a2 b=b2",
			"id=3 a=- b=b3",
			"id=3 a=- b=-",
			"id=5 a=- b=-",
			"id=6 a=- b=-",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			m, err := New(tt.mode, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range batches {
				out, err := m.Apply(b)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range out.Changes {
					if c.Op != change.SchemaChange {
						got = append(got, render(c))
					}
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			// The source's rows are left as they were.
			if b := batches[3].Changes[1]; b.Schema != v3 || len(b.After) != 3 {
				t.Errorf("the source batch was modified: %+v", b)
			}
		})
	}
}

func TestMapperBeforeImage(t *testing.T) {
	v1 := shape(1, "id int", "a int")
	v2 := shape(2, "id int", "b int", "a int")
	m, _ := New(Ignore, nil)
	out, err := m.Apply(change.Batch{Changes: []change.Change{
		{Schema: v2, Op: change.SchemaChange, DDL: ddl(v1, "ADD b FIRST")},
		{Schema: v2, Op: change.Update, Before: row("1", "b0", "a0"), After: row("1", "b1", "a1")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := out.Changes[1]
	if got := string(c.Before[1].Bytes) + "," + string(c.After[1].Bytes); got != "a0,a1" || len(c.Before) != 2 {
		t.Errorf("before/after = %q (%d columns), want the start's columns", got, len(c.Before))
	}
	if c.Schema.Key[0] != 0 || c.Schema.Columns[1].Name != "a" {
		t.Errorf("schema = %+v", c.Schema)
	}
}

func TestMapperException(t *testing.T) {
	v1 := shape(1, "id int", "a int")
	v2 := shape(2, "id int", "a int", "c int")
	m, _ := New(Exception, nil)
	created := change.Batch{Changes: []change.Change{{Schema: v1, Op: change.SchemaChange, DDL: ddl(nil, "CREATE TABLE t")},
		{Schema: v1, Op: change.Insert, After: row("1", "a")}}}
	if _, err := m.Apply(created); err != nil {
		t.Fatalf("a created table: %v", err)
	}
	_, err := m.Apply(change.Batch{Changes: []change.Change{{Schema: v2, Op: change.SchemaChange, DDL: ddl(v1, "ALTER TABLE t ADD c INT")}}})
	var refused *RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("err = %v, want a RefusedError", err)
	}
	for _, want := range []string{"app.t", `"ALTER TABLE t ADD c INT"`, "file=bin.000001:400", "EXCEPTION"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestMapperKeyChange(t *testing.T) {
	v1 := shape(1, "id int", "v int")
	v2 := shape(2, "id int", "v int")
	v2.Key = []int{0, 1}
	for _, mode := range []Mode{Lenient, Ignore} {
		m, _ := New(mode, nil)
		_, err := m.Apply(change.Batch{Changes: []change.Change{{Schema: v2, Op: change.SchemaChange, DDL: ddl(v1, "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (id, v)")}}})
		var kc *KeyChangedError
		if !errors.As(err, &kc) || !strings.Contains(err.Error(), "(id) to (id, v)") {
			t.Errorf("%s: err = %v, want a KeyChangedError", mode, err)
		}
	}
	m, _ := New(Evolve, nil)
	if _, err := m.Apply(change.Batch{Changes: []change.Change{{Schema: v2, Op: change.SchemaChange, DDL: ddl(v1, "x")}}}); err != nil {
		t.Errorf("EVOLVE: %v", err)
	}
}

// TestMapperRestart: the written shape survives a restart through Encode and New, so rows
// read after it (a snapshot of the current shape, say) still get the start's columns.
func TestMapperRestart(t *testing.T) {
	v1 := shape(1, "id int", "a int")
	v2 := shape(7, "id int", "a int", "c int")
	for _, tt := range []struct {
		mode Mode
		want string
	}{{Ignore, "id=1 a=a1"}, {Lenient, "id=1 a=a1 c=c1"}} {
		m, _ := New(tt.mode, nil)
		if _, err := m.Apply(change.Batch{Changes: []change.Change{{Schema: v1, Op: change.Insert, After: row("0", "a0")}}}); err != nil {
			t.Fatal(err)
		}
		stored := m.Encode()
		if string(stored) != string(m.Encode()) || &stored[0] != &m.Encode()[0] {
			t.Fatal("Encode is not the same slice while nothing changed")
		}
		m2, err := New(tt.mode, stored)
		if err != nil {
			t.Fatal(err)
		}
		out, err := m2.Apply(change.Batch{Changes: []change.Change{{Schema: v2, Op: change.Insert, After: row("1", "a1", "c1")}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := render(out.Changes[0]); got != tt.want {
			t.Errorf("%s after a restart: %s, want %s", tt.mode, got, tt.want)
		}
	}
	if _, err := New(Ignore, []byte(`{"format":2}`)); err == nil {
		t.Error("an unknown format was accepted")
	}
	if _, err := New(Ignore, []byte(`{"format":1,"tables":[{"db":"a","table":"t","columns":[{"name":"x"}],"key":["id"]}]}`)); err == nil {
		t.Error("a key column that is not a column was accepted")
	}
	if m, _ := New(Evolve, []byte("garbage")); m.Encode() != nil {
		t.Error("EVOLVE keeps written shapes")
	}
}

// TestMapperDropTruncate: a table dropped or truncated has no new shape: LENIENT and IGNORE
// pass it (its rows keep the written shape), EXCEPTION refuses it.
func TestMapperDropTruncate(t *testing.T) {
	v1 := shape(1, "id int", "a int")
	last := shape(0, "id int", "a int")
	last.Key = nil // the shape before a DDL may not resolve its key
	for _, kind := range []change.DDLKind{change.Dropped, change.Truncated} {
		b := change.Batch{Changes: []change.Change{
			{Schema: v1, Op: change.Insert, After: row("1", "a1")},
			{Schema: last, Op: change.SchemaChange, DDL: &change.DDL{Kind: kind, Statement: "DROP/TRUNCATE", Position: "p", Previous: last}},
		}}
		for _, mode := range []Mode{Evolve, Lenient, Ignore} {
			m, _ := New(mode, nil)
			if _, err := m.Apply(b); err != nil {
				t.Errorf("%s, kind %d: %v", mode, kind, err)
			}
		}
		m, _ := New(Exception, nil)
		_, err := m.Apply(b)
		var refused *RefusedError
		if !errors.As(err, &refused) || refused.Kind != kind {
			t.Errorf("EXCEPTION, kind %d: %v, want a refusal", kind, err)
		}
	}
}
