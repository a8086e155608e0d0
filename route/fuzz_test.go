package route

import (
	"slices"
	"testing"
)

func FuzzParseSelector(f *testing.F) {
	for _, seed := range []string{
		`app_db.\.*`, `db1.user_table_[0-9]+`, `db\.*.t`, `app_db.order.*`, `[app|web].order_\.*`,
		`(app|web).order_\.*`, `a.b, c.d`, `db.t_[0-9]{1\,2}`, `db\\.t`, `db.t\`, "", ",", `\`, `db..t`,
		`a)|(b.c`, `(?i)x.y`,
	} {
		f.Add(seed, "app_db", "orders")
	}
	f.Fuzz(func(t *testing.T, pattern, db, table string) {
		s, err := ParseSelector(pattern)
		if err != nil {
			if s != nil {
				t.Fatalf("ParseSelector(%q) returned both a selector and %v", pattern, err)
			}
			return
		}
		m := s.Match(db, table)
		if m && !s.MatchDB(db) {
			t.Fatalf("%q: Match(%q, %q) but not MatchDB(%q)", pattern, db, table, db)
		}
		if s.String() != pattern {
			t.Fatalf("String() = %q, want %q", s.String(), pattern)
		}
	})
}

func FuzzTableTopics(f *testing.F) {
	for _, seed := range [][2]string{
		{`shop_[0-9]+.orders`, "orders"}, {`db_(\.*).(\.*)_tbl`, "sink_db_$1.sink_table_$2"},
		{`app_(\.*).orders`, "$1_tbl"}, {`(?P<x>a).b`, "${x}"}, {`a.b`, `\$$0\`}, {`a.b`, "$"},
	} {
		f.Add(seed[0], seed[1], "app_db", "orders", false)
	}
	f.Fuzz(func(t *testing.T, source, sink, db, table string, first bool) {
		mode := AllMatch
		if first {
			mode = FirstMatch
		}
		rules := []Rule{{SourceTable: source, SinkTable: sink}, {SourceTable: source, SinkTable: sink, ReplaceSymbol: "<>"}}
		tbl, err := NewTable(rules, mode, "")
		if err != nil {
			return
		}
		topics := tbl.Topics(db, table)
		if len(topics) == 0 || len(topics) > len(rules) {
			t.Fatalf("Topics(%q, %q) = %q", db, table, topics)
		}
		if !slices.Equal(topics, tbl.Topics(db, table)) {
			t.Fatal("Topics is not stable")
		}
		tbl.Collisions([]TableID{{db, table}, {table, db}})
	})
}
