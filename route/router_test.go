package route

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

type topicCase struct {
	db, table string
	want      []string
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{
		"ALL_MATCH": AllMatch, "all_match": AllMatch, "First_Match": FirstMatch, "FIRST_MATCH": FirstMatch,
	} {
		got, err := ParseMode(in)
		if err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "ANY", "ALL-MATCH", " ALL_MATCH"} {
		if _, err := ParseMode(in); err == nil || !strings.Contains(err.Error(), `"ALL_MATCH" and "FIRST_MATCH"`) {
			t.Errorf("ParseMode(%q) error = %v, want one listing the valid values", in, err)
		}
	}
	if AllMatch.String() != "ALL_MATCH" || FirstMatch.String() != "FIRST_MATCH" || Mode(7).String() != "Mode(7)" {
		t.Error("Mode.String")
	}
	var zero Mode
	if zero != AllMatch {
		t.Error("the zero Mode must be AllMatch, the Flink CDC default")
	}
}

// pipelineRules are the routes of the example in docs/pipeline.md.
var pipelineRules = []Rule{
	{SourceTable: `shop_[0-9]+.orders`, SinkTable: "orders", Description: "merge the sharded order tables"},
	{SourceTable: `app_db.\.*`, SinkTable: "ods_<>", ReplaceSymbol: "<>"},
}

func TestTableTopics(t *testing.T) {
	tests := []struct {
		name  string
		rules []Rule
		mode  Mode
		topic string
		cases []topicCase
	}{
		{
			name:  "no routes: default topic db.table",
			cases: []topicCase{{"app_db", "orders", []string{"app_db.orders"}}},
		},
		{
			name:  "sharded merge and replace-symbol",
			rules: pipelineRules,
			cases: []topicCase{
				{"shop_1", "orders", []string{"orders"}},
				{"shop_22", "orders", []string{"orders"}},
				{"shop_x", "orders", []string{"shop_x.orders"}},
				{"shop_1", "orders_archive", []string{"shop_1.orders_archive"}},
				{"app_db", "users", []string{"ods_users"}},
				{"app_db", "orders", []string{"ods_orders"}},
				{"other", "t", []string{"other.t"}},
			},
		},
		{
			name:  "source-table is case-sensitive (3.6)",
			rules: pipelineRules,
			cases: []topicCase{
				{"SHOP_1", "orders", []string{"SHOP_1.orders"}},
				{"App_Db", "users", []string{"App_Db.users"}},
			},
		},
		{
			name:  "topic option sends everything to one topic",
			rules: pipelineRules,
			topic: "everything",
			cases: []topicCase{
				{"shop_1", "orders", []string{"everything"}},
				{"other", "t", []string{"everything"}},
			},
		},
		{
			name: "ALL_MATCH fans out in rule order without duplicates",
			rules: []Rule{
				{SourceTable: "app_db.orders", SinkTable: "orders_a"},
				{SourceTable: `app_db.\.*`, SinkTable: "all_<>", ReplaceSymbol: "<>"},
				{SourceTable: "app_db.orders", SinkTable: "orders_a"},
				{SourceTable: "app_db.orders", SinkTable: "orders_b"},
			},
			cases: []topicCase{
				{"app_db", "orders", []string{"orders_a", "all_orders", "orders_b"}},
				{"app_db", "users", []string{"all_users"}},
				{"x", "orders", []string{"x.orders"}},
			},
		},
		{
			name: "FIRST_MATCH takes the first matching rule",
			mode: FirstMatch,
			rules: []Rule{
				{SourceTable: "app_db.orders", SinkTable: "orders_a"},
				{SourceTable: `app_db.\.*`, SinkTable: "all_<>", ReplaceSymbol: "<>"},
			},
			cases: []topicCase{
				{"app_db", "orders", []string{"orders_a"}},
				{"app_db", "users", []string{"all_users"}},
				{"x", "y", []string{"x.y"}},
			},
		},
		{
			name:  "comma list with spaces and a trailing comma",
			rules: []Rule{{SourceTable: " shop_1.orders ,shop_2.orders, ", SinkTable: "orders"}},
			cases: []topicCase{
				{"shop_1", "orders", []string{"orders"}},
				{"shop_2", "orders", []string{"orders"}},
				{"shop_3", "orders", []string{"shop_3.orders"}},
			},
		},
		{
			name: "commas become '|' even inside parentheses, as in Java",
			rules: []Rule{
				{SourceTable: "app_db.(orders,users)", SinkTable: "$1"},
				{SourceTable: "db.t(_x,)", SinkTable: "t"},
			},
			cases: []topicCase{
				{"app_db", "orders", []string{"orders"}},
				{"app_db", "users", []string{"users"}},
				{"db", "t", []string{"t"}},
				{"db", "t_x", []string{"t"}},
				{"db", "t_y", []string{"db.t_y"}},
			},
		},
		{
			name: "unescaped dot is literal, escaped dot is any character",
			rules: []Rule{
				{SourceTable: `a.\.*`, SinkTable: "literal"},
				{SourceTable: `b\.\.*`, SinkTable: "any"},
			},
			cases: []topicCase{
				{"a", "x", []string{"literal"}},
				{"ab", "x", []string{"ab.x"}},
				{"b", "x", []string{"any"}},
				{"bc", "x", []string{"any"}},
			},
		},
		{
			name:  "capture groups (doc example)",
			rules: []Rule{{SourceTable: `db_(\.*).(\.*)_tbl`, SinkTable: "sink_db_$1.sink_table_$2"}},
			cases: []topicCase{
				{"db_x", "y_tbl", []string{"sink_db_x.sink_table_y"}},
				{"db_", "_tbl", []string{"sink_db_.sink_table_"}},
				{"db_x", "y", []string{"db_x.y"}},
			},
		},
		{
			name:  "$1 followed by _ reads group 1 like Java",
			rules: []Rule{{SourceTable: `app_(\.*).orders`, SinkTable: "$1_tbl"}},
			cases: []topicCase{{"app_cn", "orders", []string{"cn_tbl"}}},
		},
		{
			name:  "$10 with one group is group 1 then 0",
			rules: []Rule{{SourceTable: `shop_([0-9]+).orders`, SinkTable: "orders_$10"}},
			cases: []topicCase{{"shop_7", "orders", []string{"orders_70"}}},
		},
		{
			name: "$12 with twelve groups is group 12",
			rules: []Rule{{
				SourceTable: `(d)(b).(t)(a)(b)(l)(e)(_)(1)(2)(3)(4)`,
				SinkTable:   "$12-$1-$123",
			}},
			cases: []topicCase{{"db", "table_1234", []string{"4-d-43"}}},
		},
		{
			name:  "named group",
			rules: []Rule{{SourceTable: `shop_(?P<shard>[0-9]+).(?<tbl>\.*)`, SinkTable: "${tbl}_${shard}"}},
			cases: []topicCase{{"shop_7", "orders", []string{"orders_7"}}},
		},
		{
			name:  "$0 is the whole table ID",
			rules: []Rule{{SourceTable: `db.t`, SinkTable: "copy_$0"}},
			cases: []topicCase{{"db", "t", []string{"copy_db.t"}}},
		},
		{
			name:  "backslash escapes in sink-table",
			rules: []Rule{{SourceTable: `db.(t)`, SinkTable: `a\$1\\b\c$1`}},
			cases: []topicCase{{"db", "t", []string{`a$1\bct`}}},
		},
		{
			name:  "unmatched optional group inserts nothing",
			rules: []Rule{{SourceTable: `db.t(_x)?`, SinkTable: "x$1y"}},
			cases: []topicCase{
				{"db", "t", []string{"xy"}},
				{"db", "t_x", []string{"x_xy"}},
			},
		},
		{
			name:  "alternation expands against the whole-ID match",
			rules: []Rule{{SourceTable: `db.a, db.a_\.*`, SinkTable: "all_a"}},
			cases: []topicCase{
				{"db", "a", []string{"all_a"}},
				{"db", "a_x", []string{"all_a"}},
			},
		},
		{
			name:  "replace-symbol keeps $ literal and replaces every occurrence",
			rules: []Rule{{SourceTable: `(db).\.*`, SinkTable: "$1_<>_<>", ReplaceSymbol: "<>"}},
			cases: []topicCase{{"db", "t", []string{"$1_t_t"}}},
		},
		{
			name:  "replace-symbol absent from sink-table",
			rules: []Rule{{SourceTable: `db.\.*`, SinkTable: "fixed", ReplaceSymbol: "<>"}},
			cases: []topicCase{{"db", "t", []string{"fixed"}}},
		},
		{
			name:  "dots in sink-table are kept",
			rules: []Rule{{SourceTable: `app_db.orders`, SinkTable: "ods.app.orders"}},
			cases: []topicCase{{"app_db", "orders", []string{"ods.app.orders"}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl, err := NewTable(tc.rules, tc.mode, tc.topic)
			if err != nil {
				t.Fatalf("NewTable: %v", err)
			}
			for _, c := range tc.cases {
				// Twice: the second call is served from the cache.
				for range 2 {
					if got := tbl.Topics(c.db, c.table); !slices.Equal(got, c.want) {
						t.Errorf("Topics(%q, %q) = %q, want %q", c.db, c.table, got, c.want)
					}
				}
			}
		})
	}
}

func TestNewTableErrors(t *testing.T) {
	tests := []struct {
		name      string
		rules     []Rule
		wantPath  string
		wantParts []string
	}{
		{"empty source-table", []Rule{{SourceTable: " ", SinkTable: "x"}}, "route[0].source-table", []string{"has no table pattern"}},
		{"only commas", []Rule{{SourceTable: " , ,", SinkTable: "x"}}, "route[0].source-table", []string{"has no table pattern"}},
		{"empty sink-table", []Rule{{SourceTable: "a.b", SinkTable: ""}}, "route[0].sink-table", []string{"is empty"}},
		{
			name:      "invalid source regex",
			rules:     []Rule{{SourceTable: "a.b", SinkTable: "x"}, {SourceTable: "db.t[", SinkTable: "x"}},
			wantPath:  "route[1].source-table",
			wantParts: []string{`"db.t[" becomes the regular expression "db\.t["`, "missing closing ]", "unescaped '.' separates db and table"},
		},
		{"unbalanced parenthesis", []Rule{{SourceTable: "db.a)|(b", SinkTable: "x"}}, "route[0].source-table", []string{"unexpected )"}},
		{"group out of range", []Rule{{SourceTable: "db.(t)", SinkTable: "$2"}}, "route[0].sink-table", []string{"$2", "has 1 capture group"}},
		{"no groups", []Rule{{SourceTable: "db.t", SinkTable: "x_$1"}}, "route[0].sink-table", []string{"$1", "has 0 capture groups"}},
		{"dangling dollar", []Rule{{SourceTable: "db.t", SinkTable: "x$"}}, "route[0].sink-table", []string{`write \$`}},
		{"dollar before a letter", []Rule{{SourceTable: "db.t", SinkTable: "$x"}}, "route[0].sink-table", []string{`write \$`}},
		{"empty group name", []Rule{{SourceTable: "db.t", SinkTable: "${}"}}, "route[0].sink-table", []string{"without a group name"}},
		{"unclosed name", []Rule{{SourceTable: "db.(?P<a_b>t)", SinkTable: "${a_b}"}}, "route[0].sink-table", []string{"without a closing '}'"}},
		{"name starting with a digit", []Rule{{SourceTable: "db.t", SinkTable: "${9a}"}}, "route[0].sink-table", []string{"starts with a digit"}},
		{"unknown name", []Rule{{SourceTable: "db.(?P<a>t)", SinkTable: "${b}"}}, "route[0].sink-table", []string{`"b"`, "no group of that name"}},
		{"trailing backslash", []Rule{{SourceTable: "db.t", SinkTable: `x\`}}, "route[0].sink-table", []string{`lone '\'`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTable(tc.rules, AllMatch, "")
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("NewTable error = %v, want a *FieldError", err)
			}
			if fe.Path() != tc.wantPath || !strings.HasPrefix(err.Error(), tc.wantPath+": ") {
				t.Errorf("error %q: path %q, want %q", err, fe.Path(), tc.wantPath)
			}
			for _, w := range tc.wantParts {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if _, err := NewTable(nil, Mode(5), ""); err == nil {
		t.Error("NewTable accepted an unknown mode")
	}
}

func TestTableConcurrentTopics(t *testing.T) {
	tbl, err := NewTable(pipelineRules, AllMatch, "")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				db := []string{"shop_1", "app_db", "other"}[(g+i)%3]
				if got := tbl.Topics(db, "orders"); len(got) != 1 {
					t.Errorf("Topics(%q, orders) = %q", db, got)
				}
			}
		})
	}
	wg.Wait()
}

func TestCollisions(t *testing.T) {
	shards := []TableID{{"shop_1", "orders"}, {"shop_22", "orders"}, {"shop_x", "orders"}, {"app_db", "users"}}
	tests := []struct {
		name   string
		rules  []Rule
		mode   Mode
		topic  string
		tables []TableID
		want   []Collision
	}{
		{
			name:   "sharded merge",
			rules:  pipelineRules,
			tables: shards,
			want:   []Collision{{Topic: "orders", Sources: []TableID{{"shop_1", "orders"}, {"shop_22", "orders"}}}},
		},
		{
			name:   "no routes, no collisions",
			tables: shards,
		},
		{
			name:   "duplicates count once",
			tables: []TableID{{"a", "b"}, {"a", "b"}},
		},
		{
			name:   "route onto another table's default topic",
			rules:  []Rule{{SourceTable: "legacy.orders", SinkTable: "app_db.orders"}},
			tables: []TableID{{"legacy", "orders"}, {"app_db", "orders"}},
			want:   []Collision{{Topic: "app_db.orders", Sources: []TableID{{"app_db", "orders"}, {"legacy", "orders"}}}},
		},
		{
			name: "fan-out collides on every shared topic",
			rules: []Rule{
				{SourceTable: `app_db.\.*`, SinkTable: "all"},
				{SourceTable: `app_db.(a|b)`, SinkTable: "ab"},
			},
			tables: []TableID{{"app_db", "b"}, {"app_db", "a"}, {"app_db", "c"}},
			want: []Collision{
				{Topic: "ab", Sources: []TableID{{"app_db", "a"}, {"app_db", "b"}}},
				{Topic: "all", Sources: []TableID{{"app_db", "a"}, {"app_db", "b"}, {"app_db", "c"}}},
			},
		},
		{
			name:   "topic option",
			topic:  "one",
			tables: []TableID{{"b", "t"}, {"a", "t"}},
			want:   []Collision{{Topic: "one", Sources: []TableID{{"a", "t"}, {"b", "t"}}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl, err := NewTable(tc.rules, tc.mode, tc.topic)
			if err != nil {
				t.Fatal(err)
			}
			got := tbl.Collisions(tc.tables)
			if !slices.EqualFunc(got, tc.want, func(a, b Collision) bool {
				return a.Topic == b.Topic && slices.Equal(a.Sources, b.Sources)
			}) {
				t.Errorf("Collisions = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTableIDString(t *testing.T) {
	if got := (TableID{DB: "app_db", Table: "orders"}).String(); got != "app_db.orders" {
		t.Errorf("String() = %q", got)
	}
}
