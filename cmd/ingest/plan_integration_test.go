//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/internal/testenv"
)

// planPipeline is a pipeline for the test services whose tables are pattern.
func planPipeline(t *testing.T, pattern string) string {
	u, _ := testenv.CDCUser()
	host, port, _ := strings.Cut(testenv.MySQLAddr(), ":")
	return writeFile(t, "pipeline.yaml", fmt.Sprintf(`source:
  type: mysql
  hostname: %s
  port: %s
  username: %s
  password: ${secret_values.mysql-password}
  tables: %s
sink:
  type: upsert-kafka
  properties.bootstrap.servers: %s
`, host, port, u, pattern, testenv.KafkaAddr()), 0o644)
}

// TestPlanExitCode: plan exits 1 when it found an error (a wrong password) and 0 with
// warnings only (a pattern that matches no table); it says that it was online, and lists
// a failed connection once.
func TestPlanExitCode(t *testing.T) {
	name, _ := testenv.Database(t)
	cases := []struct {
		name, password, pattern string
		code                    int
		want                    []string // in stdout
		once                    string   // in stdout exactly once
	}{
		{"wrong password", "wrong", name + `.\.*`, exitFailure,
			[]string{"# ingest plan (online)", "Problems:\n  error: connect: connect to", "Access denied"}, "Access denied"},
		{"warnings only", cdcPassword(), name + `.nosuch`, exitOK,
			[]string{"# ingest plan (online)", "Problems: none", "Warnings:\n  no table matches source.tables"}, "no table matches source.tables; nothing would be written"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := planPipeline(t, c.pattern)
			env := map[string]string{"INGEST_SECRET_MYSQL_PASSWORD": c.password}
			code, stdout, stderr := runCLIEnv(t, env, "plan", file, "--state", t.TempDir())
			if code != c.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if n := strings.Count(stdout, c.once); n != 1 {
				t.Errorf("%q appears %d times, want once:\n%s", c.once, n, stdout)
			}
			code, stdout, _ = runCLIEnv(t, env, "plan", file, "--state", t.TempDir(), "-o", "json")
			var js struct {
				Pipeline struct{ Mode string }
				Online   struct{ Problems, Warnings []string }
			}
			if err := json.Unmarshal([]byte(stdout), &js); err != nil {
				t.Fatalf("json: %v\n%s", err, stdout)
			}
			if code != c.code || js.Pipeline.Mode != "online" || (len(js.Online.Problems) > 0) != (c.code != exitOK) {
				t.Errorf("json: exit %d, mode %q, problems %q", code, js.Pipeline.Mode, js.Online.Problems)
			}
		})
	}
}
