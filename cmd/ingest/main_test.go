package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secretValue is the value of every test secret; it must never be printed.
const secretValue = "s3cr3t-VALUE-do-not-print"

const goodPipeline = `
source:
  type: mysql
  hostname: ${mysql.host}
  username: cdc
  password: ${secret_values.mysql-password}
  tables: app.\.*
  jdbc.properties.sslMode: VERIFY_IDENTITY
  jdbc.properties.trustCertificateKeyStoreUrl: /etc/ingest/mysql-ca.jks
  jdbc.properties.trustCertificateKeyStorePassword: ${secret_values.mysql-password}
sink:
  type: upsert-kafka
  properties.bootstrap.servers: 127.0.0.1:9092
  properties.security.protocol: SASL_SSL
  properties.sasl.mechanism: PLAIN
  properties.sasl.jaas.config: org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="${secret_values.kafka-pw}";
  properties.ssl.truststore.password: literal-but-masked
  topic: all-${secret_values.kafka-pw}
`

// invalidPipelines have problems next to, or in, the options that hold
// secrets.
var invalidPipelines = map[string]string{
	"unresolved elsewhere": strings.Replace(goodPipeline, "${mysql.host}", "${missing.host}", 1),
	"secret as port":       strings.Replace(goodPipeline, "  username: cdc", "  port: ${secret_values.mysql-password}\n  username: cdc", 1),
	"secret as pattern":    strings.Replace(goodPipeline, `app.\.*`, `${secret_values.bad-pattern}`, 1),
	"secret as enum":       strings.Replace(goodPipeline, "  username: cdc", "  scan.startup.mode: ${secret_values.mysql-password}\n  username: cdc", 1),
	"secret in unknown":    goodPipeline + "  sink.delivery.guarantee: ${secret_values.kafka-pw}\n",
	"secret as acks":       goodPipeline + "  properties.acks: ${secret_values.kafka-pw}\n",
}

func testEnv(key string) (string, bool) {
	vars := map[string]string{
		"INGEST_SECRET_MYSQL_PASSWORD": secretValue,
		"INGEST_SECRET_KAFKA_PW":       secretValue,
		"INGEST_SECRET_BAD_PATTERN":    secretValue + ".[",
		"INGEST_VAR_MYSQL_HOST":        "127.0.0.1",
	}
	v, ok := vars[key]
	return v, ok
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut, testEnv)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, name, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSecretNeverPrinted(t *testing.T) {
	good := writeFile(t, "pipeline.yaml", goodPipeline, 0o644)
	secretsFile := writeFile(t, "secrets.yaml", "kafka-pw: "+secretValue+"\n", 0o600)
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"validate", []string{"validate", good}, exitOK},
		{"plan text", []string{"plan", good, "--offline"}, exitOK},
		{"plan json", []string{"plan", good, "--offline", "--output", "json"}, exitOK},
		{"plan json log json", []string{"plan", good, "--offline", "-o", "json", "--log-format", "json"}, exitOK},
		{"secrets file", []string{"plan", good, "--offline", "--secrets", secretsFile}, exitOK},
		{"apply", []string{"apply", good, "--state", t.TempDir()}, exitFailure},
		{"apply json logs", []string{"apply", good, "--log-format", "json", "--state", t.TempDir()}, exitFailure},
	}
	for name, content := range invalidPipelines {
		file := writeFile(t, "pipeline.yaml", content, 0o644)
		for _, cmd := range []string{"validate", "plan", "apply"} {
			cases = append(cases, struct {
				name string
				args []string
				code int
			}{name + " " + cmd, []string{cmd, file}, exitInvalid})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, c.args...)
			if code != c.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, secretValue) || strings.Contains(stdout+stderr, "literal-but-masked") {
				t.Errorf("a secret was printed:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
		})
	}
}

func TestPlanMasks(t *testing.T) {
	good := writeFile(t, "pipeline.yaml", goodPipeline, 0o644)
	code, stdout, stderr := runCLI(t, "plan", good, "--offline", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var plan struct {
		Source, Sink []struct {
			Key, Value string
			Secret     bool
		}
	}
	if err := json.Unmarshal([]byte(stdout), &plan); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"password": "******", "jdbc.properties.trustCertificateKeyStorePassword": "******",
		"hostname": "127.0.0.1", "properties.sasl.jaas.config": "******", "topic": "******",
		"properties.ssl.truststore.password": "******", "properties.bootstrap.servers": "127.0.0.1:9092",
	}
	for _, s := range append(plan.Source, plan.Sink...) {
		if w, ok := want[s.Key]; ok {
			if s.Value != w || s.Secret != (w == "******") {
				t.Errorf("%s = %q (secret %v), want %q", s.Key, s.Value, s.Secret, w)
			}
			delete(want, s.Key)
		}
	}
	if len(want) > 0 {
		t.Errorf("options missing from the plan: %v", want)
	}
}

func TestExitCodes(t *testing.T) {
	good := writeFile(t, "pipeline.yaml", goodPipeline, 0o644)
	plaintextSSL := writeFile(t, "plaintext.yaml", strings.Replace(goodPipeline, "security.protocol: SASL_SSL", "security.protocol: PLAINTEXT", 1), 0o644)
	bad := writeFile(t, "bad.yaml", "source: {}\n", 0o644)
	openSecrets := writeFile(t, "secrets.yaml", "a: b\n", 0o644)
	ran := t.TempDir() // the state directory of a pipeline that has run
	if err := os.WriteFile(filepath.Join(ran, "identity.json"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cases := []struct {
		name       string
		args       []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{"validate ok", []string{"validate", good}, exitOK, "ok: " + good + " (1 table pattern, 0 routes, 0 transforms)\n", ""},
		{"validate invalid", []string{"validate", bad}, exitInvalid, "", "bad.yaml:1:1: source: missing required option \"type\""},
		{"missing file", []string{"validate", "/nonexistent/p.yaml"}, exitInvalid, "", "no such file"},
		{"no argument", []string{"validate"}, exitInvalid, "", "accepts 1 arg"},
		{"unknown command", []string{"frobnicate"}, exitInvalid, "", "unknown command"},
		{"unknown flag", []string{"validate", good, "--bogus"}, exitInvalid, "", "unknown flag"},
		{"bad --var", []string{"validate", good, "--var", "novalue"}, exitInvalid, "", "want NAME=VALUE"},
		{"bad --output", []string{"plan", good, "--output", "yaml"}, exitInvalid, "", "want text or json"},
		{"bad --log-format", []string{"validate", good, "--log-format", "xml"}, exitInvalid, "", "want text or json"},
		{"bad --metrics-addr", []string{"apply", good, "--metrics-addr", "9090"}, exitInvalid, "", "want HOST:PORT"},
		{"open secrets file", []string{"validate", good, "--secrets", openSecrets}, exitInvalid, "", "chmod 600"},
		{"--var wins", []string{"validate", good, "--var", "mysql.host=db"}, exitOK, "ok: ", ""},
		{"apply runtime failure", []string{"apply", good, "--until-caught-up", "--state", t.TempDir()}, exitFailure, "", ""},
		// validate runs the sink's whole check of properties.*, as apply does, at the option:
		// ssl.* options without SSL.
		{"validate properties together", []string{"validate", plaintextSSL}, exitInvalid, "",
			"plaintext.yaml:17:39: sink.properties.ssl.truststore.password: ssl.* options are set, but security.protocol is PLAINTEXT"},
		{"apply properties together", []string{"apply", plaintextSSL}, exitInvalid, "",
			"plaintext.yaml:17:39: sink.properties.ssl.truststore.password: ssl.* options are set, but security.protocol is PLAINTEXT"},
		// The metrics address is bound before anything else: these fail without a server.
		{"metrics address in use", []string{"apply", good, "--metrics-addr", busy.Addr().String(), "--state", t.TempDir()},
			exitFailure, "", "--metrics-addr: metrics: listen on " + busy.Addr().String()},
		{"metrics port out of range", []string{"apply", good, "--metrics-addr", ":99999", "--state", t.TempDir()},
			exitFailure, "", "invalid port"},
		{"pprof without metrics", []string{"apply", good, "--pprof"}, exitInvalid, "", "give --metrics-addr too"},
		{"resnapshot without a table", []string{"resnapshot", good}, exitInvalid, "", "requires at least 2 arg"},
		{"resnapshot of a table not captured", []string{"resnapshot", good, "other.t", "--state", t.TempDir()}, exitInvalid, "",
			"table other.t: source.tables does not capture it"},
		{"resnapshot of a bad name", []string{"resnapshot", good, "t", "--state", t.TempDir()}, exitInvalid, "", `table "t": want db.table`},
		{"resnapshot without state", []string{"resnapshot", good, "app.t", "--state", t.TempDir()}, exitFailure, "",
			"no pipeline state here"},
		{"resnapshot requested", []string{"resnapshot", good, "app.t", "app.u", "--state", ran}, exitOK,
			"re-snapshot requested: app.t, app.u; a running `ingest apply` of", ""},
		{"version", []string{"version"}, exitOK, "ingest dev\ngo: go", ""},
		{"--version", []string{"--version"}, exitOK, "ingest dev\ngo: go", ""},
		{"no command", []string{}, exitOK, "Available Commands", ""},
		{"help", []string{"--help"}, exitOK, "Usage:", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, c.args...)
			if code != c.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			if !strings.Contains(stdout, c.wantStdout) {
				t.Errorf("stdout %q does not contain %q", stdout, c.wantStdout)
			}
			if !strings.Contains(stderr, c.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr, c.wantStderr)
			}
		})
	}
}

// TestJSONLogsCoverValidation: with --log-format json, every line on stderr is a JSON record,
// also for an invalid pipeline, and each problem of the file is one record with its place.
func TestJSONLogsCoverValidation(t *testing.T) {
	bad := writeFile(t, "pipeline.yaml", "source:\n  type: mysql\n  hostname: [a\nsink:\n  type: upsert-kafka\n", 0o644)
	unknown := writeFile(t, "pipeline.yaml", goodPipeline+"  sink.no-such-option: 1\n  sink.other-unknown: 2\n", 0o644)
	cases := []struct {
		name    string
		args    []string
		records int
		line    int
	}{
		{"yaml syntax", []string{"validate", bad, "--log-format", "json"}, 1, 3},
		{"two unknown options", []string{"validate", unknown, "--log-format", "json"}, 2, 0},
		{"missing file", []string{"plan", "--offline", filepath.Join(t.TempDir(), "none.yaml"), "--log-format", "json"}, 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, c.args...)
			if code != exitInvalid {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitInvalid, stdout, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			var errs []map[string]any
			for _, l := range lines {
				var rec map[string]any
				if err := json.Unmarshal([]byte(l), &rec); err != nil {
					t.Fatalf("stderr line is not JSON: %q (%v)", l, err)
				}
				if rec["level"] == "ERROR" {
					errs = append(errs, rec)
				}
			}
			if len(errs) != c.records {
				t.Fatalf("%d error records, want %d:\n%s", len(errs), c.records, stderr)
			}
			if c.line != 0 && errs[0]["line"] != float64(c.line) {
				t.Errorf("line = %v, want %d: %v", errs[0]["line"], c.line, errs[0])
			}
		})
	}
}
