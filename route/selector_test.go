package route

import (
	"strings"
	"testing"
)

type tableCase struct {
	db, table string
	want      bool
}

func TestSelectorMatch(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		cases   []tableCase
	}{
		{
			name:    "all tables of a db (§1.7)",
			pattern: `app_db.\.*`,
			cases: []tableCase{
				{"app_db", "orders", true},
				{"app_db", "x", true},
				{"APP_DB", "Orders", true},
				{"app_db2", "orders", false},
				{"xapp_db", "orders", false},
				{"other", "orders", false},
			},
		},
		{
			name:    "character class and quantifier (§1.7)",
			pattern: `db1.user_table_[0-9]+`,
			cases: []tableCase{
				{"db1", "user_table_1", true},
				{"db1", "user_table_123", true},
				{"DB1", "USER_TABLE_7", true},
				{"db1", "user_table_", false},
				{"db1", "user_table_1a", false},
				{"db1", "user_table", false},
				{"db2", "user_table_1", false},
				{"xdb1", "user_table_1", false},
			},
		},
		{
			name:    "escaped dot in the db part (§1.7)",
			pattern: `db\.*.t`,
			cases: []tableCase{
				{"db", "t", true},
				{"db1", "t", true},
				{"dbfoo", "t", true},
				{"db.x", "t", true},
				{"xdb", "t", false},
				{"db", "tt", false},
			},
		},
		{
			name:    "brackets are a character class (§1.7)",
			pattern: `[app|web].order_\.*`,
			cases: []tableCase{
				{"a", "order_1", true},
				{"p", "order_x", true},
				{"|", "order_x", true},
				{"w", "order_", true},
				{"B", "ORDER_1", true},
				{"app", "order_1", false},
				{"web", "order_1", false},
				{"x", "order_1", false},
			},
		},
		{
			name:    "parentheses are an alternation (§1.7)",
			pattern: `(app|web).order_\.*`,
			cases: []tableCase{
				{"app", "order_1", true},
				{"web", "order_", true},
				{"WEB", "ORDER_X", true},
				{"apweb", "order_1", false},
				{"a", "order_1", false},
				{"app", "orders", false},
				{"app", "xorder_1", false},
			},
		},
		{
			name:    "comma list",
			pattern: `db1.a,db2.b, shop_[0-9]+.orders`,
			cases: []tableCase{
				{"db1", "a", true},
				{"db2", "b", true},
				{"shop_3", "orders", true},
				{"db1", "b", false},
				{"db2", "a", false},
			},
		},
		{
			name:    "escaped comma inside a quantifier",
			pattern: `db.t_[0-9]{1\,2}, db.u`,
			cases: []tableCase{
				{"db", "t_1", true},
				{"db", "t_12", true},
				{"db", "u", true},
				{"db", "t_123", false},
				{"db", "t_", false},
			},
		},
		{
			name:    "escaped comma is a literal comma",
			pattern: `db.a\,b`,
			cases: []tableCase{
				{"db", "a,b", true},
				{"db", "a", false},
				{"db", "b", false},
			},
		},
		{
			name:    "spaces around items and parts are trimmed",
			pattern: "  db1.a ,\t db2 . b  ,",
			cases: []tableCase{
				{"db1", "a", true},
				{"db2", "b", true},
				{"db2 ", " b", false},
			},
		},
		{
			name:    "full match, never a substring",
			pattern: `db.order`,
			cases: []tableCase{
				{"db", "order", true},
				{"DB", "ORDER", true},
				{"db", "orders", false},
				{"db", "my_order", false},
				{"mydb", "order", false},
				{"db2", "order", false},
			},
		},
		{
			name:    "anchored alternation inside a part",
			pattern: `db.a|b`,
			cases: []tableCase{
				{"db", "a", true},
				{"db", "b", true},
				{"db", "ab", false},
			},
		},
		{
			name:    "escaped backslash before a separator",
			pattern: `db\\.t`,
			cases: []tableCase{
				{`db\`, "t", true},
				{"db", "t", false},
			},
		},
		{
			name:    "regex escapes other than \\. are kept",
			pattern: `db.t\d+`,
			cases: []tableCase{
				{"db", "t12", true},
				{"db", "td", false},
			},
		},
		{
			name:    "unicode names",
			pattern: `库.表\.*`,
			cases: []tableCase{
				{"库", "表一", true},
				{"库", "x", false},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSelector(tc.pattern)
			if err != nil {
				t.Fatalf("ParseSelector(%q): %v", tc.pattern, err)
			}
			if s.String() != tc.pattern {
				t.Errorf("String() = %q, want %q", s.String(), tc.pattern)
			}
			for _, c := range tc.cases {
				if got := s.Match(c.db, c.table); got != c.want {
					t.Errorf("Match(%q, %q) = %v, want %v", c.db, c.table, got, c.want)
				}
			}
		})
	}
}

func TestParseSelectorErrors(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		want    []string // substrings of the error
	}{
		{"empty", "", []string{"table pattern is empty", `app_db.\.*`}},
		{"only commas and spaces", " , ,", []string{"table pattern is empty"}},
		{
			name:    "three parts (§1.7)",
			pattern: `app_db.order.*`,
			want: []string{`"app_db.order.*" has 3 parts`, "every unescaped '.' separates db and table",
				`write app_db.order\.* to mean any characters`},
		},
		{"four parts", `a.b.c.d`, []string{"has 4 parts", `write a.b\.c\.d`}},
		{"one part", `orders`, []string{`"orders" has 1 part`, "exactly 2", `write \.*.orders`}},
		{
			name:    "one part with escaped dot",
			pattern: `app_db\.orders`,
			want:    []string{"has 1 part", "write app_db.orders if", `\.*.app_db\.orders`},
		},
		{"one part in a list", `db.a, orders`, []string{`"orders" has 1 part`}},
		{"empty table part", `db.`, []string{`"db." has an empty part`}},
		{"empty db part", `.t`, []string{"has an empty part"}},
		{"empty middle part", `db..t`, []string{"has an empty part"}},
		{"invalid table regex", `db.t[`, []string{`"db.t["`, `table part "t["`, "not a valid regular expression", "missing closing ]"}},
		{"invalid db regex", `(db.t`, []string{`db part "(db"`, "missing closing )"}},
		{"bare star", `db.*`, []string{`table part "*"`, "missing argument to repetition operator"}},
		{"unbalanced parenthesis", `db.a)|(b`, []string{`table part "a)|(b"`, "unexpected )"}},
		{"look-ahead", `db.(?=x)x`, []string{"look-around"}},
		{"back-reference", `db.(a)\1`, []string{"back-references"}},
		{"possessive", `db.a*+`, []string{"possessive"}},
		{"trailing backslash", `db.t\`, []string{`lone '\'`}},
		{"trailing backslash before trim", "db.t\\ ", []string{`lone '\'`}},
		{"second item invalid", `db.a, db.b[`, []string{`"db.b["`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSelector(tc.pattern)
			if err == nil {
				t.Fatalf("ParseSelector(%q) = %v, want an error", tc.pattern, s)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if msg := err.Error(); strings.ToLower(msg[:1]) != msg[:1] {
				t.Errorf("error %q does not start in lower case", msg)
			}
		})
	}
}

func TestSelectorMatchDB(t *testing.T) {
	s, err := ParseSelector(`app_db.\.*, shop_[0-9]+.orders`)
	if err != nil {
		t.Fatal(err)
	}
	for db, want := range map[string]bool{
		"app_db": true, "APP_DB": true, "shop_1": true, "shop_22": true,
		"shop_x": false, "other": false, "app_db2": false,
	} {
		if got := s.MatchDB(db); got != want {
			t.Errorf("MatchDB(%q) = %v, want %v", db, got, want)
		}
	}
}

func TestNilSelector(t *testing.T) {
	var s *Selector
	if s.Match("db", "t") || s.MatchDB("db") || s.String() != "" {
		t.Error("the nil *Selector must match nothing")
	}
}
