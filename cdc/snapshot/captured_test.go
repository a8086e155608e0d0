package snapshot

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/change"
)

// TestProgressFormat reads stored progress of the older format (no table list) and of the
// current one, and checks what each stands for.
func TestProgressFormat(t *testing.T) {
	for _, c := range []struct {
		name, stored string
		tables       []TableState // after Migrated
		handoff      string       // HandoffPosition; "" when unknown
		migrated     string       // part of Migrated's message; "" for none
	}{
		{
			// What a snapshot of no table stored before: it must not read as a trusted
			// empty set with a position.
			name: "old, no table", stored: `{"done":true}`,
			tables: []TableState{}, migrated: "no hand-off position either",
		},
		{
			name:   "old, chunks",
			stored: `{"chunks":[{"db":"d","table":"b","low":"file=bin.000001:70","high":"file=bin.000001:90","rows":1},{"db":"d","table":"a","low":"file=bin.000001:50","high":"file=bin.000001:60","rows":2}],"done":true}`,
			tables: []TableState{{DB: "d", Table: "a", Done: true}, {DB: "d", Table: "b", Done: true}}, handoff: "file=bin.000001:50",
			migrated: "taking the tables of its chunks as the snapshot's: d.a, d.b",
		},
		{
			name: "old, under way", stored: `{"since":"file=bin.000001:4"}`,
			tables: []TableState{}, migrated: "the resumed snapshot lists the tables again",
		},
		{
			name: "no table matched", stored: `{"done":true,"tables":[],"listed_at":"file=bin.000001:40"}`,
			tables: []TableState{}, handoff: "file=bin.000001:40",
		},
		{
			name:    "compact, with a table captured from its CREATE",
			stored:  `{"done":true,"tables":[{"db":"d","table":"a","done":true},{"db":"d","table":"n","from":"file=bin.000001:700"}],"listed_at":"file=bin.000001:40"}`,
			tables:  []TableState{{DB: "d", Table: "a", Done: true}, {DB: "d", Table: "n", From: "file=bin.000001:700"}},
			handoff: "file=bin.000001:40",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p Progress
			if err := json.Unmarshal([]byte(c.stored), &p); err != nil {
				t.Fatal(err)
			}
			m, msg := p.Migrated()
			if c.migrated == "" && msg != "" || !strings.Contains(msg, c.migrated) {
				t.Errorf("Migrated says %q, want %q", msg, c.migrated)
			}
			if m.Tables == nil || !slices.Equal(m.Tables, c.tables) {
				t.Errorf("tables %#v, want %#v", m.Tables, c.tables)
			}
			pos, ok, err := m.HandoffPosition()
			if err != nil || ok != (c.handoff != "") || ok && pos.String() != c.handoff {
				t.Errorf("HandoffPosition = %v, %v, %v; want %q", pos, ok, err, c.handoff)
			}
			// Once migrated, the progress reads back the same.
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			var again Progress
			if err := json.Unmarshal(b, &again); err != nil || !again.HasTables() {
				t.Fatalf("%s: %v", b, err)
			}
			if _, msg := again.Migrated(); msg != "" {
				t.Errorf("%s migrates again: %s", b, msg)
			}
		})
	}
}

// TestProgressEncoding pins the stored JSON of the fields the captured set added.
func TestProgressEncoding(t *testing.T) {
	for _, c := range []struct {
		p    Progress
		want string
	}{
		{Progress{Since: "file=bin.000001:4"}, `{"since":"file=bin.000001:4","tables":null}`},
		{Progress{Done: true, Tables: []TableState{}, ListedAt: "file=bin.000001:4"}, `{"done":true,"tables":[],"listed_at":"file=bin.000001:4"}`},
		{Progress{Done: true, Tables: []TableState{{DB: "d", Table: "a", Done: true}, {DB: "d", Table: "n", From: "file=bin.000001:9"}}},
			`{"done":true,"tables":[{"db":"d","table":"a","done":true},{"db":"d","table":"n","from":"file=bin.000001:9"}]}`},
	} {
		b, err := json.Marshal(c.p)
		if err != nil || string(b) != c.want {
			t.Errorf("%+v encodes as %s (%v), want %s", c.p, b, err, c.want)
		}
	}
}

func TestProgressCompact(t *testing.T) {
	p := testProgress()
	p.Since = pos(1).String()
	p.Tables = []TableState{{DB: "d", Table: "t", Done: true}, {DB: "d", Table: "n", From: pos(950).String()}}
	p.ListedAt = pos(10).String()
	c := p.Compact()
	if len(c.Chunks) != 0 || c.Since != "" || !c.Done || !slices.Equal(c.Tables, p.Tables) || c.ListedAt != p.ListedAt {
		t.Errorf("Compact = %+v", c)
	}
	if ids := p.TableIDs(); !slices.Equal(ids, []change.TableID{{DB: "d", Table: "t"}}) {
		t.Errorf("TableIDs = %v, want the snapshot's tables only", ids)
	}
	if start, ok, _ := p.HandoffPosition(); !ok || start.String() != pos(50).String() {
		t.Errorf("HandoffPosition = %v, want the smallest low watermark", start)
	}
}

// TestLedgerTables: the listed tables are in every token's progress, done only at the end,
// and a resumed finished progress keeps its set (with the tables captured from CREATE).
func TestLedgerTables(t *testing.T) {
	l := newLedger(nil)
	l.setTables([]change.TableID{{DB: "d", Table: "a"}}, pos(40))
	t1 := l.add(l.begin(), DoneChunk{DB: "d", Table: "a"}, pos(60))
	if p, _ := l.at(t1); p.Done || !slices.Equal(p.Tables, []TableState{{DB: "d", Table: "a"}}) || p.ListedAt != pos(40).String() {
		t.Errorf("at(chunk) = %+v", p)
	}
	if p, _ := l.at(l.finish()); !p.Done || !slices.Equal(p.Tables, []TableState{{DB: "d", Table: "a", Done: true}}) {
		t.Errorf("at(end) = %+v", p)
	}

	empty := newLedger(nil)
	empty.setTables(nil, pos(40))
	if p, _ := empty.at(empty.finish()); p.Tables == nil || len(p.Tables) != 0 || p.ListedAt != pos(40).String() {
		t.Errorf("a snapshot of no table: %+v", p)
	}

	resumed := []TableState{{DB: "d", Table: "a", Done: true}, {DB: "d", Table: "n", From: pos(90).String()}}
	r := newLedger(&Progress{Done: true, Tables: resumed, ListedAt: pos(40).String()})
	if p := r.all(); !slices.Equal(p.Tables, resumed) || !p.Done {
		t.Errorf("resumed all() = %+v", p)
	}
	if ids := r.tableIDs(); !slices.Equal(ids, []change.TableID{{DB: "d", Table: "a"}}) {
		t.Errorf("resumed tableIDs = %v", ids)
	}
}
