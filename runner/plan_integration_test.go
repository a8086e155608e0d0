//go:build integration

package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/ingestkit/ingest/pipeline"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestPlanGolden(t *testing.T) {
	name, db := definitionDB(t)
	def := definition(t, name, "", "") // default topics
	def.Routes = append(def.Routes, pipeline.Route{SourceTable: name + `.shop_[0-9]+`, SinkTable: "shops"})
	dir := filepath.Join(t.TempDir(), "state")
	rep, err := Plan(context.Background(), def, Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_ = db
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(text.String(), name, "DB")
	got = strings.ReplaceAll(got, dir, "STATE")
	got = regexp.MustCompile(`~\d+ rows`).ReplaceAllString(got, "~N rows")
	goldenFile(t, filepath.Join("testdata", "plan.golden"), got)
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil || !json.Valid(js.Bytes()) {
		t.Fatalf("WriteJSON: %v\n%s", err, js.String())
	}
}

// goldenFile compares got with the file, which -update rewrites.
func goldenFile(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n%s", path, got)
	}
}

// definitionDB makes the plan's demo database: keyed tables, a composite key, a table without
// a key, two shards merged by a route, a text key the snapshot can chunk (general_ci) and
// one it cannot (an accent- and case-sensitive UCA collation).
func definitionDB(t *testing.T) (string, any) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db,
		"CREATE TABLE tags (tag VARCHAR(40) COLLATE utf8mb4_general_ci PRIMARY KEY)",
		"CREATE TABLE words (word VARCHAR(40) COLLATE utf8mb4_uca1400_as_cs PRIMARY KEY)",
		"CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40))",
		"CREATE TABLE order_lines (order_id INT, line_no INT, qty INT, PRIMARY KEY (order_id, line_no))",
		"CREATE TABLE audit (at DATETIME, msg TEXT)",
		"CREATE TABLE shop_1 (id INT PRIMARY KEY)",
		"CREATE TABLE shop_2 (id INT PRIMARY KEY)")
	return name, db
}
