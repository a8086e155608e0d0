package route

import (
	"errors"
	"strings"
	"testing"
)

func TestFilter(t *testing.T) {
	f, err := NewFilter(`app_db.\.*, shop_[0-9]+.orders`, `app_db.audit_log`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []tableCase{
		{"app_db", "orders", true},
		{"app_db", "audit_log", false},
		{"APP_DB", "AUDIT_LOG", false},
		{"app_db", "audit_log2", true},
		{"shop_1", "orders", true},
		{"shop_22", "orders", true},
		{"shop_x", "orders", false},
		{"other", "orders", false},
	} {
		if got := f.Match(c.db, c.table); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.db, c.table, got, c.want)
		}
	}
	for db, want := range map[string]bool{"app_db": true, "shop_3": true, "other": false} {
		if got := f.MatchDB(db); got != want {
			t.Errorf("MatchDB(%q) = %v, want %v", db, got, want)
		}
	}
}

func TestFilterWithoutExclude(t *testing.T) {
	for _, exclude := range []string{"", "  "} {
		f, err := NewFilter(`db.\.*`, exclude)
		if err != nil {
			t.Fatalf("NewFilter(exclude %q): %v", exclude, err)
		}
		if !f.Match("db", "t") {
			t.Errorf("exclude %q: db.t not matched", exclude)
		}
	}
}

func TestFilterErrors(t *testing.T) {
	tests := []struct {
		tables, exclude string
		wantPath, want  string
	}{
		{"", "", "source.tables", "is empty"},
		{"app_db.order.*", "", "source.tables", `app_db.order\.*`},
		{"db.t", "x", "source.tables.exclude", "has 1 part"},
		{"db.t", "db.t[", "source.tables.exclude", "not a valid regular expression"},
	}
	for _, tc := range tests {
		_, err := NewFilter(tc.tables, tc.exclude)
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("NewFilter(%q, %q) error = %v, want a *FieldError", tc.tables, tc.exclude, err)
			continue
		}
		if fe.Path() != tc.wantPath || fe.Index != -1 || fe.Block != "source" {
			t.Errorf("NewFilter(%q, %q): field %+v, want path %s", tc.tables, tc.exclude, fe, tc.wantPath)
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), tc.wantPath+": ") {
			t.Errorf("NewFilter(%q, %q) error %q, want %q", tc.tables, tc.exclude, err, tc.want)
		}
	}
}
