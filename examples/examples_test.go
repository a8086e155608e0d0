package examples

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/secrets"
)

// testSecrets and testVars supply every placeholder the examples use.
var (
	testSecrets = map[string]string{
		"mysql-password":            "example-mysql-pw",
		"kafka-password":            "example-kafka-pw",
		"kafka-sasl-password":       "example-sasl-pw",
		"kafka-truststore-password": "example-truststore-pw",
		"kafka-ak":                  "LTAIexampleAccessKey",
		"kafka-sk":                  "example-access-key-secret",
	}
	testVars = map[string]string{
		"kafka.bootstrap":      "127.0.0.1:9092",
		"mysql.hostname":       "127.0.0.1",
		"mysql.username":       "cdc",
		"mysql.database":       "inventory",
		"rds.hostname":         "rm-example.mysql.rds.aliyuncs.com",
		"apsaramq.bootstrap":   "alikafka-post-cn-example-1.alikafka.aliyuncs.com:9093",
		"apsaramq.instance-id": "alikafka_post-cn-example",
		"apsaramq.truststore":  "/etc/ingest/only.4096.client.truststore.jks",
	}
)

func examples(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*/pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	flink, err := filepath.Glob("flinkcdc-kafka/*.yaml") // published and Flink CDC-style files
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, flink...)
	transform, err := filepath.Glob("flinkcdc-transform/*.yaml") // published jobs that use transform
	if err != nil {
		t.Fatal(err)
	}
	if len(transform) < 3 {
		t.Fatalf("found %d published transform jobs, want at least 3: %v", len(transform), transform)
	}
	files = append(files, transform...)
	if len(files) < 4 {
		t.Fatalf("found %d examples, want at least 4: %v", len(files), files)
	}
	return files
}

func TestExamplesLoad(t *testing.T) {
	res := secrets.NewResolver(
		[]secrets.Provider{&secrets.Map{Values: testSecrets}},
		[]secrets.Provider{&secrets.Map{Values: testVars}},
	)
	for _, file := range examples(t) {
		t.Run(exampleName(file), func(t *testing.T) {
			def, err := pipeline.Load(file, pipeline.LoadOptions{Context: context.Background(), Resolver: res})
			if err != nil {
				t.Fatalf("Load:\n%v", err)
			}
			if def.Pipeline.Name == "" {
				t.Error("pipeline name is empty")
			}
		})
	}
}

// TestExamplesValidateCommand builds the ingest binary and runs
// `ingest validate` on every example, with the secrets in a private file
// and the variables in a vars file.
func TestExamplesValidateCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the ingest binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "ingest")
	build := exec.Command(goTool, "build", "-o", bin, "../cmd/ingest")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	secretsFile := writeMap(t, filepath.Join(dir, "secrets.yaml"), testSecrets)
	varsFile := writeMap(t, filepath.Join(dir, "vars.yaml"), testVars)
	for _, file := range examples(t) {
		t.Run(exampleName(file), func(t *testing.T) {
			cmd := exec.Command(bin, "validate", file, "--secrets", secretsFile, "--vars", varsFile)
			cmd.Env = cleanEnv()
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if errors.As(err, &exit) || err != nil {
				t.Fatalf("ingest validate %s: %v\nstderr:\n%s", file, err, stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), "ok: "+file) {
				t.Errorf("stdout = %q, want it to start with %q", stdout.String(), "ok: "+file)
			}
		})
	}
}

// writeMap writes a YAML map readable by its owner only, as --secrets
// requires.
func writeMap(t *testing.T, path string, m map[string]string) string {
	t.Helper()
	var b strings.Builder
	for k, v := range m {
		b.WriteString(k + ": " + `"` + v + `"` + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// cleanEnv is the environment without INGEST_* variables, so that the
// machine's settings cannot change the result.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "INGEST_") {
			env = append(env, kv)
		}
	}
	return env
}

// exampleName names the subtest of an example file: its directory for a pipeline.yaml,
// else the directory and the file's stem.
func exampleName(file string) string {
	if filepath.Base(file) == "pipeline.yaml" {
		return filepath.Dir(file)
	}
	return strings.TrimSuffix(file, filepath.Ext(file))
}
