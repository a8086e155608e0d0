//go:build integration

package upsert

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestkit/ingest/internal/testenv"
)

// privateBroker is a Kafka broker of the test's own, started from the test service's jars
// in a temporary directory on free loopback ports, so that a test can restart it or give
// it listeners the shared broker lacks. Its listeners: PLAINTEXT, and SASL_SSL with
// SCRAM-SHA-256 and a certificate for 127.0.0.1 signed by pki's CA.
type privateBroker struct {
	dir, props          string
	plain, sasl, ctrl   int
	proc                *os.Process
	exited              chan struct{} // closed when proc exits
	scramUser, scramPwd string
}

func startPrivateBroker(t *testing.T, pki *testPKI) *privateBroker {
	t.Helper()
	libs := testenv.KafkaLibs()
	if libs == "" {
		t.Fatal("INGEST_TEST_KAFKA_LIBS is not set: run `eval $(scripts/services env)` (the test starts its own broker from those jars)")
	}
	b := &privateBroker{dir: t.TempDir(), scramUser: "ingest", scramPwd: "scram-pass-1"}
	b.plain, b.sasl, b.ctrl = freePort(t), freePort(t), freePort(t)
	keystore := pki.keyStoreFile(t, "JKS", "brokerpass")
	b.props = filepath.Join(b.dir, "server.properties")
	props := fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:%[3]d
listeners=PLAINTEXT://127.0.0.1:%[1]d,SASL_SSL://127.0.0.1:%[2]d,CONTROLLER://127.0.0.1:%[3]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d,SASL_SSL://127.0.0.1:%[2]d
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT
sasl.enabled.mechanisms=SCRAM-SHA-256
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
ssl.keystore.type=JKS
ssl.keystore.location=%[4]s
ssl.keystore.password=brokerpass
ssl.key.password=brokerpass
log.dirs=%[5]s
auto.create.topics.enable=false
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
`, b.plain, b.sasl, b.ctrl, keystore, filepath.Join(b.dir, "data"))
	if err := os.WriteFile(b.props, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(b.java(t, "kafka.tools.StorageTool", "random-uuid"))
	id = id[strings.LastIndexByte(id, '\n')+1:]
	b.java(t, "kafka.tools.StorageTool", "format", "-t", id, "-c", b.props,
		"--add-scram", fmt.Sprintf("SCRAM-SHA-256=[name=%s,password=%s]", b.scramUser, b.scramPwd))
	b.start(t)
	t.Cleanup(func() { b.stop(t) })
	return b
}

// java runs a Kafka tool to completion and returns its output.
func (b *privateBroker) java(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("java", append([]string{"-Xmx256m", "-cp", filepath.Join(testenv.KafkaLibs(), "*")}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("java %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// start starts the broker process and waits until its listeners accept connections.
func (b *privateBroker) start(t *testing.T) {
	t.Helper()
	logPath := filepath.Join(b.dir, "kafka.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	logConfig := filepath.Join(b.dir, "log4j2.yaml")
	if err := os.WriteFile(logConfig, []byte(log4j2), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("java", "-Xms128m", "-Xmx512m", "-XX:+UseG1GC", "-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile="+logConfig, "-cp", filepath.Join(testenv.KafkaLibs(), "*"), "kafka.Kafka", b.props)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b.proc, b.exited = cmd.Process, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(b.exited)
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-b.exited:
			t.Fatalf("private broker exited; log:\n%s", tail(logPath))
		default:
		}
		if started(logPath) && portOpen(b.sasl) && portOpen(b.plain) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("private broker did not start in 90s; log:\n%s", tail(logPath))
}

// stop stops the broker with SIGTERM (a clean shutdown), or SIGKILL after 60s.
func (b *privateBroker) stop(t *testing.T) {
	t.Helper()
	if b.proc == nil {
		return
	}
	_ = b.proc.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(60 * time.Second):
		_ = b.proc.Kill()
		<-b.exited
	}
	b.proc = nil
}

func (b *privateBroker) plainAddr() string { return fmt.Sprintf("127.0.0.1:%d", b.plain) }
func (b *privateBroker) saslAddr() string  { return fmt.Sprintf("127.0.0.1:%d", b.sasl) }

// log4j2 logs the broker's INFO messages ("Kafka Server started") and the client
// library's warnings to the console, as scripts/services does.
const log4j2 = `Configuration:
  Appenders:
    Console:
      name: STDOUT
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        - ref: STDOUT
    Logger:
      - name: kafka
        level: INFO
      - name: org.apache.kafka
        level: WARN
`

func started(log string) bool {
	data, _ := os.ReadFile(log)
	return strings.Contains(string(data), "Kafka Server started")
}

func tail(path string) string {
	data, _ := os.ReadFile(path)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

func portOpen(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err == nil {
		c.Close()
	}
	return err == nil
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
