//go:build integration

package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/internal/testenv"
)

// TestApplyPurgedPosition starts a pipeline at a binlog file the server no longer has: apply
// must stop with exit code 1 and the documented message (what is missing, and to
// re-snapshot), never jump silently to another position.
func TestApplyPurgedPosition(t *testing.T) {
	name, _ := testenv.Database(t)
	u, _ := testenv.CDCUser()
	host, port, _ := strings.Cut(testenv.MySQLAddr(), ":")
	pipeline := writeFile(t, "pipeline.yaml", fmt.Sprintf(`source:
  type: mysql
  hostname: %s
  port: %s
  username: %s
  password: ${secret_values.mysql-password}
  tables: %s.\.*
  scan.startup.mode: specific-offset
  scan.startup.specific-offset.file: mariadb-bin.000000
  scan.startup.specific-offset.pos: 4
sink:
  type: upsert-kafka
  properties.bootstrap.servers: %s
pipeline:
  name: %s
`, host, port, u, name, testenv.KafkaAddr(), name), 0o644) // its own name: the state topic keeps states by name
	code, _, stderr := runCLIEnv(t, map[string]string{"INGEST_SECRET_MYSQL_PASSWORD": cdcPassword()},
		"apply", pipeline, "--until-caught-up", "--state", t.TempDir())
	if code != exitFailure {
		t.Fatalf("exit code %d, want %d\n%s", code, exitFailure, stderr)
	}
	for _, want := range []string{"mariadb-bin.000000", "is no longer on the server", "re-snapshot"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func cdcPassword() string { _, p := testenv.CDCUser(); return p }

// runCLIEnv runs the command with env as its whole environment.
func runCLIEnv(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	return code, out.String(), errOut.String()
}
