//go:build integration

package main

import (
	"database/sql"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/internal/testenv"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestQuickstartEmit runs `plan --emit flink-sql` and `--emit json-schema` on the
// quickstart (examples/quickstart) over its live schema, loaded into databases of the
// test's own (named <prefix>demo, <prefix>shop_1, <prefix>shop_2, the prefix removed
// from the output): the merged shards included, the output must equal
// testdata/quickstart.flink.sql and testdata/quickstart.schema.json.
func TestQuickstartEmit(t *testing.T) {
	prefix := "cs_" + testenv.Name(t) + "_"
	schema, err := os.ReadFile("../../examples/quickstart/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	yaml, err := os.ReadFile("../../examples/quickstart/pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dbs := regexp.MustCompile(`\b(demo|shop_[12])\b`)
	root, err := sql.Open("mysql", testenv.AdminDSN("")+"&charset=utf8mb4")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	t.Cleanup(func() {
		for _, d := range []string{"demo", "shop_1", "shop_2"} {
			_, _ = root.Exec("DROP DATABASE IF EXISTS `" + prefix + d + "`")
		}
	})
	if _, err := root.Exec(dbs.ReplaceAllString(string(schema), prefix+"$1")); err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, "pipeline.yaml", strings.NewReplacer(
		`tables: demo.\.*, shop_[0-9]+.orders`, `tables: `+prefix+`demo.\.*, `+prefix+`shop_[0-9]+.orders`,
		`source-table: shop_[0-9]+.orders`, `source-table: `+prefix+`shop_[0-9]+.orders`,
		"port: 3307", "port: "+strings.SplitN(testenv.MySQLAddr(), ":", 2)[1],
	).Replace(string(yaml)), 0o644)
	env := map[string]string{"INGEST_SECRET_MYSQL_PASSWORD": cdcPassword(), "INGEST_VAR_KAFKA_BOOTSTRAP": testenv.KafkaAddr()}
	for _, c := range []struct{ emit, golden string }{
		{"flink-sql", "quickstart.flink.sql"},
		{"json-schema", "quickstart.schema.json"},
	} {
		code, stdout, stderr := runCLIEnv(t, env, "plan", file, "--state", t.TempDir(), "--emit", c.emit)
		if code != exitOK {
			t.Fatalf("plan --emit %s: exit %d\n%s", c.emit, code, stderr)
		}
		got := strings.NewReplacer(prefix, "", testenv.KafkaAddr(), "127.0.0.1:9092").Replace(stdout)
		path := filepath.Join("testdata", c.golden)
		if *updateGolden {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("plan --emit %s differs from %s:\n%s", c.emit, path, got)
		}
	}
}
