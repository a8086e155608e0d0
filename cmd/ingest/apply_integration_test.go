//go:build integration

package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/ingestkit/ingest/state"
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

// TestApplyStoredGTIDBeyondServer stores a position whose GTID the server never wrote: apply
// --until-caught-up must exit 1 naming the stored position, the server's and the state
// directory to remove, where it used to take the position as caught up and exit 0.
func TestApplyStoredGTIDBeyondServer(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
	u, _ := testenv.CDCUser()
	host, port, _ := strings.Cut(testenv.MySQLAddr(), ":")
	pipeline := writeFile(t, "pipeline.yaml", fmt.Sprintf(`source:
  type: mysql
  hostname: %s
  port: %s
  username: %s
  password: ${secret_values.mysql-password}
  tables: %s.\.*
sink:
  type: upsert-kafka
  properties.bootstrap.servers: %s
pipeline:
  name: %s
`, host, port, u, name, testenv.KafkaAddr(), name), 0o644)
	t.Cleanup(func() {
		_, _ = kadm.NewClient(testenv.Kafka(t)).DeleteTopics(context.Background(), name+".t")
	})
	dir := t.TempDir()
	env := map[string]string{"INGEST_SECRET_MYSQL_PASSWORD": cdcPassword()}
	if code, _, stderr := runCLIEnv(t, env, "apply", pipeline, "--until-caught-up", "--state", dir); code != exitOK {
		t.Fatalf("first run: exit code %d\n%s", code, stderr)
	}
	id, cp, err := state.Peek(dir)
	if err != nil || id == nil || cp == nil {
		t.Fatalf("state after the first run: %v %v %v", id, cp, err)
	}
	s, err := state.Open(dir, *id)
	if err != nil {
		t.Fatal(err)
	}
	cp.Position = "mariadb-gtid=0-1-999999999"
	err = s.Save(*cp)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLIEnv(t, env, "apply", pipeline, "--until-caught-up", "--state", dir)
	if code != exitFailure {
		t.Fatalf("exit code %d, want %d\n%s", code, exitFailure, stderr)
	}
	for _, want := range []string{"mariadb-gtid=0-1-999999999", "beyond the server's 0-1-", "gtid_binlog_pos", dir} {
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
