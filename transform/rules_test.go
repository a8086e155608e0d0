package transform

import (
	"testing"
	"time"

	"github.com/ingestkit/ingest/change"
)

func TestRulesApply(t *testing.T) {
	s := &change.Schema{
		Table:   change.TableID{DB: "app", Table: "orders_1"},
		Columns: []change.Column{{Name: "id", SQLType: "int"}, {Name: "name", SQLType: "varchar(10)"}, {Name: "status", SQLType: "varchar(1)"}, {Name: "secret", SQLType: "varchar(10)"}},
		Key:     []int{0},
	}
	proj, err := ParseProjection("id, name, UPPER(name) AS name_u, __table_name__ AS src, status, __data_event_type__ AS op")
	if err != nil {
		t.Fatal(err)
	}
	filter, err := ParseFilter("id > 10 AND status <> 'x'")
	if err != nil {
		t.Fatal(err)
	}
	row := func(id int64, name, status string) change.Row {
		return change.Row{change.IntValue(id), change.StringValue([]byte(name)), change.StringValue([]byte(status)), change.StringValue([]byte("pw"))}
	}
	tests := []struct {
		name string
		soft bool
		in   change.Change
		want string // op and rendered rows, "" for nothing
	}{
		{"insert in", false, change.Change{Op: change.Insert, After: row(11, "a", "y")}, "insert after=[11 a A orders_1 y +I]"},
		{"insert out", false, change.Change{Op: change.Insert, After: row(5, "a", "y")}, ""},
		{"update stays in", false, change.Change{Op: change.Update, Before: row(11, "a", "y"), After: row(11, "b", "y")}, "update before=[11 a A orders_1 y -U] after=[11 b B orders_1 y +U]"},
		{"update leaves", false, change.Change{Op: change.Update, Before: row(11, "a", "y"), After: row(11, "a", "x")}, "delete before=[11 a A orders_1 y -U]"},
		{"update enters", false, change.Change{Op: change.Update, Before: row(11, "a", "x"), After: row(11, "a", "y")}, "insert after=[11 a A orders_1 y +U]"},
		{"update stays out", false, change.Change{Op: change.Update, Before: row(1, "a", "x"), After: row(2, "a", "y")}, ""},
		{"pk change leaves", false, change.Change{Op: change.Update, Before: row(11, "a", "y"), After: row(3, "a", "y")}, "delete before=[11 a A orders_1 y -U]"},
		{"pk change enters", false, change.Change{Op: change.Update, Before: row(3, "a", "y"), After: row(12, "a", "y")}, "insert after=[12 a A orders_1 y +U]"},
		{"delete in", false, change.Change{Op: change.Delete, Before: row(11, "a", "y")}, "delete before=[11 a A orders_1 y -D]"},
		{"delete out", false, change.Change{Op: change.Delete, Before: row(1, "a", "y")}, ""},
		{"soft delete", true, change.Change{Op: change.Delete, Before: row(11, "a", "y")}, "insert after=[11 a A orders_1 y -D]"},
		{"soft delete of a row leaving", true, change.Change{Op: change.Update, Before: row(11, "a", "y"), After: row(11, "a", "x")}, "insert after=[11 a A orders_1 y -U]"},
	}
	for _, tc := range tests {
		rules, err := NewRules([]Rule{{SourceTable: `app.orders_\d+`, Projection: proj, Filter: filter, SoftDelete: tc.soft},
			{SourceTable: `app.\.*`}}, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		tc.in.Schema = s
		b, err := rules.Apply(change.Batch{Changes: []change.Change{tc.in}})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := ""
		if len(b.Changes) == 1 {
			c := b.Changes[0]
			got = c.Op.String()
			if c.Before != nil {
				got += " before=" + renderRow(c.Before)
			}
			if c.After != nil {
				got += " after=" + renderRow(c.After)
			}
			if names := colNames(c.Schema); names != "id name name_u src status op" || c.Schema.Key[0] != 0 {
				t.Errorf("%s: schema %s key %v", tc.name, names, c.Schema.Key)
			}
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRulesFirstMatchDecides(t *testing.T) {
	f, _ := ParseFilter("id > 100")
	// The first rule matches app.t and has no filter: the second's filter does not apply.
	rules, err := NewRules([]Rule{{SourceTable: "app.t"}, {SourceTable: `app.\.*`, Filter: f}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &change.Schema{Table: change.TableID{DB: "app", Table: "t"}, Columns: []change.Column{{Name: "id", SQLType: "int"}}, Key: []int{0}}
	b, err := rules.Apply(change.Batch{Changes: []change.Change{{Schema: s, Op: change.Insert, After: change.Row{change.IntValue(1)}}}})
	if err != nil || len(b.Changes) != 1 {
		t.Fatalf("got %v, %v", b.Changes, err)
	}
	s2 := &change.Schema{Table: change.TableID{DB: "app", Table: "u"}, Columns: s.Columns, Key: s.Key}
	b, err = rules.Apply(change.Batch{Changes: []change.Change{{Schema: s2, Op: change.Insert, After: change.Row{change.IntValue(1)}}}})
	if err != nil || len(b.Changes) != 0 {
		t.Fatalf("app.u: got %v, %v", b.Changes, err)
	}
}

func renderRow(r change.Row) string {
	s := "["
	for i, v := range r {
		if i > 0 {
			s += " "
		}
		s += string(appendText(nil, v))
	}
	return s + "]"
}

func colNames(s *change.Schema) string {
	out := ""
	for i, c := range s.Columns {
		if i > 0 {
			out += " "
		}
		out += c.Name
	}
	return out
}

// BenchmarkProgram measures a projection of 4 computed columns and a filter.
func BenchmarkProgram(b *testing.B) {
	s := &change.Schema{
		Table:   change.TableID{DB: "app", Table: "orders_1"},
		Columns: []change.Column{{Name: "id", SQLType: "int"}, {Name: "name", SQLType: "varchar(10)"}, {Name: "status", SQLType: "varchar(1)"}, {Name: "price", SQLType: "decimal(10,2)"}},
		Key:     []int{0},
	}
	proj, _ := ParseProjection("id, name, UPPER(name) AS name_u, __table_name__ AS src, id * 2 AS id2, CONCAT(name, '-', status) AS tag, status")
	filter, _ := ParseFilter("id > 10 AND status <> 'x'")
	p, err := Compile(proj, filter, s, Options{})
	if err != nil {
		b.Fatal(err)
	}
	c := change.Change{Schema: s, Op: change.Insert, After: change.Row{change.IntValue(42), change.StringValue([]byte("widget")), change.StringValue([]byte("y")), change.DecimalValue([]byte("9.99"))}}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := p.Apply(c); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
