//go:build integration

package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/internal/testenv"
)

// TestApplySchemaChangeException: with pipeline.schema.change.behavior EXCEPTION, apply
// stops on a DDL of a captured table with exit code 1 and the statement, run after run.
func TestApplySchemaChangeException(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, a INT)")
	u, _ := testenv.CDCUser()
	host, port, _ := strings.Cut(testenv.MySQLAddr(), ":")
	pipeline := writeFile(t, "pipeline.yaml", fmt.Sprintf(`source:
  type: mysql
  hostname: %s
  port: %s
  username: %s
  password: ${secret_values.mysql-password}
  tables: %s.\.*
  scan.startup.mode: latest-offset
sink:
  type: upsert-kafka
  properties.bootstrap.servers: %s
pipeline:
  name: %s
  schema.change.behavior: exception
`, host, port, u, name, testenv.KafkaAddr(), name), 0o644)
	env := map[string]string{"INGEST_SECRET_MYSQL_PASSWORD": cdcPassword()}
	state := t.TempDir()
	if code, _, stderr := runCLIEnv(t, env, "apply", pipeline, "--until-caught-up", "--state", state); code != 0 {
		t.Fatalf("first apply: exit code %d\n%s", code, stderr)
	}
	const alter = "ALTER TABLE t ADD COLUMN c INT"
	testenv.Exec(t, db, alter)
	for run := 2; run <= 3; run++ {
		code, _, stderr := runCLIEnv(t, env, "apply", pipeline, "--until-caught-up", "--state", state)
		if code != exitFailure {
			t.Fatalf("apply %d: exit code %d, want %d\n%s", run, code, exitFailure, stderr)
		}
		for _, want := range []string{name + ".t", alter, "EXCEPTION", "binlog position"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("apply %d: stderr lacks %q:\n%s", run, want, stderr)
			}
		}
	}
}
