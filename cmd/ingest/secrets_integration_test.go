//go:build integration

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/ingestkit/ingest/aliyun/aliyuntest"
	"github.com/ingestkit/ingest/internal/testenv"
)

// The secret-leak test (issue 17): a secret resolved into each of username, hostname, port,
// the database of source.tables, bootstrap.servers, the SASL username, the ApsaraMQ
// AccessKey ID and the topic, each with its right and a wrong value. The built binary runs
// validate, plan, apply (logs, errors, /metrics) and tail; no value may appear in what they
// print, in /metrics, nor in any file under the state directories.

// leakPipeline is the Kafka pipeline: every secret of the source and sink in place.
const leakPipeline = `pipeline:
  name: %[1]s
source:
  type: mysql
  hostname: ${secret_values.mysql-host}
  port: ${secret_values.mysql-port}
  username: ${secret_values.mysql-user}
  password: ${secret_values.mysql-pw}
  tables: ${secret_values.db}.\.*
  connect.timeout: 2s
  connect.max-retries: 1
sink:
  type: upsert-kafka
  properties.bootstrap.servers: ${secret_values.bootstrap}
  topic: ${secret_values.topic}
%[2]s`

// saslSink turns on SASL/SCRAM-SHA-256 with a secret username and password, against the test
// broker's SASL listener (scripts/services), where the test creates the user.
const saslSink = `  properties.security.protocol: SASL_PLAINTEXT
  properties.sasl.mechanism: SCRAM-SHA-256
  properties.sasl.jaas.config: org.apache.kafka.common.security.scram.ScramLoginModule required username="${secret_values.sasl-user}" password="${secret_values.sasl-pw}";
`

// apsaraSink points the sink at the fake ApsaraMQ OpenAPI server with a secret AccessKey.
const apsaraSink = `  aliyun.kafka.instanceId: %s
  aliyun.kafka.endpoint: %s
  aliyun.kafka.regionId: %s
  aliyun.kafka.accessKeyId: ${secret_values.ak-id}
  aliyun.kafka.accessKeySecret: ${secret_values.ak-secret}
`

// leakHarness runs the binary and collects everything it printed.
type leakHarness struct {
	t       *testing.T
	bin     string
	dir     string   // pipelines, secrets files, state directories
	env     []string // the binary's whole environment
	printed []string // "label: output" of every run and every /metrics scrape
}

// buildCLI builds the ingest binary into a temporary directory.
func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ingest")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// secretsFile writes the secrets to a new chmod 600 file and returns its path.
func (h *leakHarness) secretsFile(label string, values map[string]string) string {
	var b strings.Builder
	for k, v := range values {
		fmt.Fprintf(&b, "%s: %q\n", k, v)
	}
	path := filepath.Join(h.dir, label+".secrets.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		h.t.Fatal(err)
	}
	return path
}

// run runs the binary with args. With stopAfter > 0 a process still running then gets
// SIGTERM (apply that retries, tail that waits); every run is killed after 60s.
func (h *leakHarness) run(label string, stopAfter time.Duration, args ...string) (code int, stdout, stderr string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Env, cmd.Dir = h.env, h.dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	if stopAfter > 0 {
		timer := time.AfterFunc(stopAfter, func() { _ = cmd.Process.Signal(syscall.SIGTERM) })
		defer timer.Stop()
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		h.t.Fatalf("%s: %v", label, err)
	}
	h.printed = append(h.printed, label+" stdout: "+out.String(), label+" stderr: "+errOut.String())
	return code, out.String(), errOut.String()
}

// applyScraping runs apply with --metrics-addr until /metrics shows want, keeps that page,
// then stops the run with SIGTERM.
func (h *leakHarness) applyScraping(label, want string, args ...string) (stderr string) {
	h.t.Helper()
	addr := freeAddr(h.t)
	done := make(chan string, 1)
	var proc *os.Process
	started := make(chan struct{})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, h.bin, append(args, "--metrics-addr", addr)...)
		cmd.Env, cmd.Dir = h.env, h.dir
		var errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &errOut, &errOut
		if err := cmd.Start(); err != nil {
			close(started)
			done <- err.Error()
			return
		}
		proc = cmd.Process
		close(started)
		_ = cmd.Wait()
		done <- errOut.String()
	}()
	<-started
	var page string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !strings.Contains(page, want); {
		time.Sleep(200 * time.Millisecond)
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			page = string(b)
		}
	}
	if proc != nil {
		_ = proc.Signal(syscall.SIGTERM)
	}
	stderr = <-done
	h.printed = append(h.printed, label+" /metrics: "+page, label+" output: "+stderr)
	if !strings.Contains(page, want) {
		h.t.Fatalf("%s: /metrics never showed %s:\n%s\n%s", label, want, page, stderr)
	}
	return stderr
}

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// assertNoSecret fails for each value found in what was printed. Values listed as
// distinctive are looked for in the state directories too (short or common values such
// as a port number may occur in numbers there).
func (h *leakHarness) assertNoSecret(values map[string]string, distinctive func(string) bool) {
	h.t.Helper()
	for name, v := range values {
		for _, p := range h.printed {
			label, text, _ := strings.Cut(p, ": ")
			if strings.HasSuffix(label, "/metrics") && !distinctive(v) {
				continue // sample values are numbers
			}
			if strings.Contains(text, v) {
				h.t.Errorf("secret %s (%q) printed by %s:\n%s", name, v, label, text)
			}
		}
		if !distinctive(v) {
			continue
		}
		_ = filepath.WalkDir(h.dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.Contains(path, string(filepath.Separator)+"state-") {
				return err
			}
			b, err := os.ReadFile(path)
			if err == nil && bytes.Contains(b, []byte(v)) {
				h.t.Errorf("secret %s (%q) stored in %s:\n%s", name, v, path, b)
			}
			return err
		})
	}
}

func randomToken(t *testing.T) string {
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func TestSecretsNeverLeak(t *testing.T) {
	start := time.Now()
	tok := randomToken(t)
	db, conn := testenv.Database(t)
	testenv.Exec(t, conn, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))", "INSERT INTO t VALUES (1,'a'),(2,'b')")
	user, pw := "u_"+tok, "pw_"+tok
	testenv.Exec(t, conn, "CREATE USER '"+user+"'@'%' IDENTIFIED BY '"+pw+"'",
		"GRANT SELECT, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '"+user+"'@'%'")
	t.Cleanup(func() { _, _ = conn.Exec("DROP USER IF EXISTS '" + user + "'@'%'") })
	mysqlHost, mysqlPort, _ := strings.Cut(testenv.MySQLAddr(), ":")
	kafkaHost, kafkaPort, _ := strings.Cut(testenv.KafkaAddr(), ":")
	if mysqlHost != "127.0.0.1" || kafkaHost != "127.0.0.1" {
		t.Skip("the hostname secret is localhost: the test services must listen on 127.0.0.1")
	}
	topic := "topic_" + tok
	adm := kadm.NewClient(testenv.Kafka(t))
	t.Cleanup(func() { _, _ = adm.DeleteTopics(context.Background(), topic, "ali_"+topic, "sasl_"+topic) })
	saslHost, saslPort, _ := strings.Cut(testenv.KafkaSASLAddr(), ":")
	if saslHost != "127.0.0.1" {
		t.Skip("the SASL bootstrap secret is localhost: the test broker's SASL listener must be on 127.0.0.1")
	}
	saslUser, saslPw := "sasl_"+tok, "saslpw_"+tok
	createSCRAMUser(t, adm, saslUser, saslPw)

	srv := aliyuntest.NewServer()
	defer srv.Close()
	akID, akSecret := "LTAIsec"+tok, "aksecret"+tok
	srv.AddCredential(akID, akSecret, "")
	srv.SetOnCreate(func(name string, partitions int, compact bool) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := "compact"
		resp, err := adm.CreateTopic(ctx, int32(partitions), 1, map[string]*string{"cleanup.policy": &c}, name)
		if err == nil {
			err = resp.Err
		}
		return err
	})

	h := &leakHarness{t: t, bin: buildCLI(t), dir: t.TempDir()}
	certFile := filepath.Join(h.dir, "fake-openapi.pem")
	if err := os.WriteFile(certFile, srv.CertificatePEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	h.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.dir, "SSL_CERT_FILE=" + certFile}
	t.Logf("binary built after %s", time.Since(start).Round(time.Millisecond))

	good := map[string]string{
		"mysql-host": "localhost", "mysql-port": mysqlPort, "mysql-user": user, "mysql-pw": pw, "db": db,
		"bootstrap": "localhost:" + kafkaPort, "topic": topic,
		"sasl-bootstrap": "localhost:" + saslPort, "sasl-user": saslUser, "sasl-pw": saslPw,
		"ak-id": akID, "ak-secret": akSecret,
	}
	pipelineFile := func(label, name, extra string) string {
		path := filepath.Join(h.dir, label+".yaml")
		if err := os.WriteFile(path, []byte(fmt.Sprintf(leakPipeline, name, extra)), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	kafkaP := pipelineFile("kafka", "leak-k-"+tok, "")
	saslP := pipelineFile("sasl", "leak-s-"+tok, saslSink)
	apsaraP := pipelineFile("apsara", "leak-a-"+tok,
		fmt.Sprintf(apsaraSink, aliyuntest.InstanceID, srv.Host(), aliyuntest.RegionID))
	// The ApsaraMQ pipeline writes to its own topic; the SASL one too, through the SASL listener.
	replaceIn(t, apsaraP, "${secret_values.topic}", "ali_${secret_values.topic}")
	replaceIn(t, saslP, "${secret_values.topic}", "sasl_${secret_values.topic}")
	replaceIn(t, saslP, "${secret_values.bootstrap}", "${secret_values.sasl-bootstrap}")

	t.Run("right values", func(t *testing.T) {
		h.t = t
		secretsF := h.secretsFile("good", good)
		state := filepath.Join(h.dir, "state-good")
		if code, out, errOut := h.run("validate", 0, "--secrets", secretsF, "validate", kafkaP); code != 0 {
			t.Fatalf("validate: exit %d\n%s%s", code, out, errOut)
		}
		code, out, errOut := h.run("plan", 0, "--secrets", secretsF, "plan", kafkaP, "--state", state)
		if code != 0 || !strings.Contains(out, "Problems: none") || !strings.Contains(out, "${secret_values.db}.t") {
			t.Fatalf("plan: exit %d\n%s%s", code, out, errOut)
		}
		h.run("plan json", 0, "--secrets", secretsF, "plan", "-o", "json", kafkaP, "--state", state)
		logs := h.applyScraping("apply", `ingest_records_written_total{pipeline="leak-k-`,
			"--secrets", secretsF, "apply", kafkaP, "--state", state)
		if !strings.Contains(logs, "stopped; position stored") {
			t.Errorf("apply did not stop cleanly:\n%s", logs)
		}
		code, out, errOut = h.run("tail", 0, "--secrets", secretsF, "tail", "--pipeline", kafkaP, topic)
		if code != 0 || !strings.Contains(out, `{"id":2,"v":"b"}`) {
			t.Errorf("tail: exit %d\n%s%s", code, out, errOut)
		}
		// Restart from the stored state: the identity's hashes match, the checkpoint's
		// hidden table names come back.
		testenv.Exec(t, conn, "INSERT INTO t VALUES (3,'c')")
		if code, _, errOut := h.run("apply again", 0, "--secrets", secretsF, "apply", kafkaP, "--state", state, "--until-caught-up"); code != 0 ||
			!strings.Contains(errOut, "resuming from the stored state") {
			t.Errorf("apply again: exit %d\n%s", code, errOut)
		}
		idFile, err := os.ReadFile(filepath.Join(state, "identity.json"))
		if err != nil || !bytes.Contains(idFile, []byte(`"source":"sha256:`)) || !bytes.Contains(idFile, []byte(`"tables":"sha256:`)) {
			t.Errorf("identity.json = %s (%v), want hashed source and tables", idFile, err)
		}
		aliState := filepath.Join(h.dir, "state-ali")
		if code, out, errOut := h.run("apsara plan", 0, "--secrets", secretsF, "plan", apsaraP, "--state", aliState); code != 0 {
			t.Errorf("apsara plan: exit %d\n%s%s", code, out, errOut)
		}
		if code, _, errOut := h.run("apsara apply", 0, "--secrets", secretsF, "apply", apsaraP, "--state", aliState, "--until-caught-up"); code != 0 {
			t.Errorf("apsara apply: exit %d\n%s", code, errOut)
		}
		if srv.CallCount("CreateTopic") == 0 {
			t.Error("the ApsaraMQ pipeline created no topic through the OpenAPI")
		}
		saslState := filepath.Join(h.dir, "state-sasl")
		if code, out, errOut := h.run("sasl plan", 0, "--secrets", secretsF, "plan", saslP, "--state", saslState); code != 0 {
			t.Errorf("sasl plan: exit %d\n%s%s", code, out, errOut)
		}
		if code, _, errOut := h.run("sasl apply", 0, "--secrets", secretsF, "apply", saslP, "--state", saslState, "--until-caught-up"); code != 0 {
			t.Errorf("sasl apply: exit %d\n%s", code, errOut)
		}
		if code, out, errOut := h.run("sasl tail", 0, "--secrets", secretsF, "tail", "--pipeline", saslP, "sasl_"+topic); code != 0 || !strings.Contains(out, `{"id":3,"v":"c"}`) {
			t.Errorf("sasl tail: exit %d\n%s%s", code, out, errOut)
		}
		h.assertNoSecret(good, func(v string) bool { return strings.Contains(v, tok) || v == db })
	})

	// Each wrong value, with what its failure must say: the realistic error, with the
	// placeholder where the value was.
	wrong := []struct {
		name, value, pipeline string
		want                  []string
		tail                  bool
	}{
		{"mysql-user", "nouser_" + tok, kafkaP, []string{"Access denied for user '${secret_values.mysql-user}'"}, false},
		{"mysql-host", "nohost-" + tok + ".invalid", kafkaP, []string{"lookup ${secret_values.mysql-host}"}, false},
		{"mysql-port", strings.TrimPrefix(freeAddr(t), "127.0.0.1:"), kafkaP, []string{"127.0.0.1:${secret_values.mysql-port}", "refused"}, false},
		{"db", "nodb_" + tok, kafkaP, []string{"no table matches source.tables"}, false},
		{"bootstrap", "nokafka-" + tok + ".invalid:" + kafkaPort, kafkaP, []string{"lookup ${secret_values.bootstrap}"}, true},
		{"topic", "bad topic " + tok, kafkaP, []string{"${secret_values.topic}", "INVALID_TOPIC"}, true},
		{"sasl-user", "nosasl_" + tok, saslP, []string{"SASL", "authentication"}, false},
		{"ak-id", "LTAIwrong" + tok, apsaraP, []string{"InvalidAccessKeyId"}, false},
	}
	for _, w := range wrong {
		t.Run("wrong "+w.name, func(t *testing.T) {
			h.t, h.printed = t, nil
			// A pipeline.name of its own: at-least-once keeps a copy of its state in Kafka, and a
			// run with a fresh state directory resumes from the right run's copy (with nothing
			// left to write) instead of failing on the wrong value.
			w.pipeline = renamedPipeline(t, w.pipeline, "wrong-"+w.name)
			values := map[string]string{}
			for k, v := range good {
				values[k] = v
			}
			values[w.name] = w.value
			if w.name == "ak-id" {
				values["topic"] = "fresh_" + tok // a topic to create, through the OpenAPI
			}
			secretsF := h.secretsFile("wrong-"+w.name, values)
			state := filepath.Join(h.dir, "state-wrong-"+w.name)
			h.run("validate", 0, "--secrets", secretsF, "validate", w.pipeline)
			h.run("plan", 0, "--secrets", secretsF, "plan", w.pipeline, "--state", state)
			h.run("plan json", 0, "--secrets", secretsF, "plan", "-o", "json", w.pipeline, "--state", state)
			code, _, _ := h.run("apply", 6*time.Second, "--secrets", secretsF, "apply", w.pipeline, "--state", state, "--until-caught-up")
			if code == 0 && w.name != "db" && w.name != "bootstrap" {
				t.Errorf("apply with a wrong %s: exit 0", w.name)
			}
			if w.tail {
				h.run("tail", 5*time.Second, "--secrets", secretsF, "tail", "--pipeline", w.pipeline, values["topic"])
			}
			printed := strings.Join(h.printed, "\n")
			for _, want := range w.want {
				if !strings.Contains(printed, want) {
					t.Errorf("no %q in the output:\n%s", want, printed)
				}
			}
			h.assertNoSecret(values, func(v string) bool { return strings.Contains(v, tok) || v == db })
		})
	}
	t.Logf("done in %s", time.Since(start).Round(time.Millisecond))
}

// replaceIn replaces the first old in the file at path by new.
func replaceIn(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err == nil {
		err = os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// createSCRAMUser creates a SCRAM-SHA-256 user on the test broker and drops it after the test.
func createSCRAMUser(t *testing.T, adm *kadm.Client, user, password string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: kadm.ScramSha256, Iterations: 4096, Password: password}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("create the SCRAM user on the test broker: %v", err)
	}
	t.Cleanup(func() {
		_, _ = adm.AlterUserSCRAMs(context.Background(), []kadm.DeleteSCRAM{{User: user, Mechanism: kadm.ScramSha256}}, nil)
	})
}

// renamedPipeline writes a copy of the pipeline file at path whose pipeline.name has suffix
// added, and returns the copy's path.
func renamedPipeline(t *testing.T, path, suffix string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, ok := bytes.Cut(b, []byte("\n  name: "))
	if !ok {
		t.Fatalf("%s: no pipeline.name line", path)
	}
	name, tail, _ := bytes.Cut(rest, []byte("\n"))
	var out bytes.Buffer
	out.Write(head)
	fmt.Fprintf(&out, "\n  name: %s-%s\n", name, suffix)
	out.Write(tail)
	copyPath := strings.TrimSuffix(path, ".yaml") + "-" + suffix + ".yaml"
	if err := os.WriteFile(copyPath, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return copyPath
}
