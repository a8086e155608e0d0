package route

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestKeyOverrides(t *testing.T) {
	k, err := NewKeyOverrides([]Transform{
		{SourceTable: "app_db.events", PrimaryKeys: []string{"event_id"}},
		{SourceTable: `app_db.\.*`},
		{SourceTable: `app_db.e\.*, logs.\.*`, PrimaryKeys: []string{"ts", "host"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		db, table string
		want      []string
		ok        bool
	}{
		{"app_db", "events", []string{"event_id"}, true},
		{"APP_DB", "EVENTS", []string{"event_id"}, true},
		// The first match (rule 2, no keys) decides, though rule 3 matches too.
		{"app_db", "elephants", nil, false},
		{"logs", "access", []string{"ts", "host"}, true},
		{"other", "t", nil, false},
	}
	for _, tc := range tests {
		got, ok := k.PrimaryKeys(tc.db, tc.table)
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("PrimaryKeys(%q, %q) = %q, %v; want %q, %v", tc.db, tc.table, got, ok, tc.want, tc.ok)
		}
	}
	got, _ := k.PrimaryKeys("logs", "x")
	got[0] = "changed"
	if again, _ := k.PrimaryKeys("logs", "x"); again[0] != "ts" {
		t.Error("PrimaryKeys returned its internal slice")
	}
}

func TestNewKeyOverridesErrors(t *testing.T) {
	tests := []struct {
		name      string
		in        []Transform
		wantPath  string
		wantError string
	}{
		{"bad pattern", []Transform{{SourceTable: "a.b"}, {SourceTable: "app_db.order.*"}}, "transform[1].source-table", "has 3 parts"},
		{"empty pattern", []Transform{{SourceTable: ""}}, "transform[0].source-table", "is empty"},
		{"empty column", []Transform{{SourceTable: "a.b", PrimaryKeys: []string{"id", " "}}}, "transform[0].primary-keys", "empty column name"},
		{"repeated column", []Transform{{SourceTable: "a.b", PrimaryKeys: []string{"ID", "id"}}}, "transform[0].primary-keys", `lists column "id" twice`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewKeyOverrides(tc.in)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Path() != tc.wantPath || !strings.Contains(err.Error(), tc.wantError) {
				t.Errorf("error = %v, want %s: …%s…", err, tc.wantPath, tc.wantError)
			}
		})
	}
}

func TestSplitKeys(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"id", []string{"id"}},
		{" a , b ", []string{"a", "b"}},
		{"a,b,", []string{"a", "b"}},
		{"a,,b", []string{"a", "", "b"}},
		{"`order id`, `a``b`, c", []string{"order id", "a`b", "c"}},
		{"`", []string{"`"}},
	}
	for _, tc := range tests {
		if got := SplitKeys(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("SplitKeys(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
