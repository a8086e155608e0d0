//go:build integration

package upsert

import (
	"context"
	"fmt"
	"maps"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ingestkit/ingest/change"
)

// TestSASLSCRAMOverTLS starts a private broker with a SASL_SSL listener (SCRAM-SHA-256, a
// certificate made by the test) and writes through it with the Java-style properties: a
// JKS trust store made by keytool, then a PEM one, and a quoted JAAS configuration. A wrong password is a fatal error that does not show the password.
func TestSASLSCRAMOverTLS(t *testing.T) {
	pki := newTestPKI(t, []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)})
	b := startPrivateBroker(t, pki)
	jaas := func(pwd string) string {
		return `org.apache.kafka.common.security.scram.ScramLoginModule required username="` + b.scramUser +
			`" password="` + strings.ReplaceAll(pwd, `"`, `\"`) + `";`
	}
	// Trust stores: a JKS store made by keytool (Java's default type), and the CA as PEM.
	stores := []map[string]string{
		{"ssl.truststore.location": pki.trustStoreFile(t, "JKS", "changeit"), "ssl.truststore.password": "changeit"},
		{"ssl.truststore.location": pki.caPEM, "ssl.truststore.type": "PEM"},
	}
	props := func(pwd string, store map[string]string) map[string]string {
		p := map[string]string{
			"bootstrap.servers": b.saslAddr(), "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256",
			"sasl.jaas.config": jaas(pwd), "request.timeout.ms": "10000",
		}
		maps.Copy(p, store)
		return p
	}
	var inputs []Input
	for i := range 20 {
		inputs = append(inputs, seqTxn(i))
	}
	var cfg Config
	for i, store := range stores {
		topic := fmt.Sprintf("scram_%d_%s", i, strings.ToLower(t.Name()[len(t.Name())-4:]))
		var got acks
		cfg = baseConfig(t, topic, ExactlyOnce)
		p, err := ParseProperties(props(b.scramPwd, store))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Properties = p
		cfg.Acked = got.add
		if err := runSink(t, cfg, inputs); err != nil {
			t.Fatalf("trust store %v: %v", store, err)
		}
		if got.last() != "20" {
			t.Errorf("trust store %v: last checkpoint %q, want 20", store, got.last())
		}
		// Read back over the plaintext listener.
		t.Setenv("INGEST_TEST_KAFKA", b.plainAddr())
		checkExactlyOnce(t, topic, 20)
	}

	bad, err := ParseProperties(props("wrong-secret", stores[1]))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Properties, cfg.Guarantee = bad, AtLeastOnce
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in := make(chan Input, 1)
	in <- Input{Batch: change.Batch{Changes: inputs[0].Changes, End: true, Position: []byte("x")}}
	close(in)
	err = s.Run(ctx, in)
	if err == nil || IsRetryable(err) || strings.Contains(err.Error(), "wrong-secret") {
		t.Fatalf("wrong password: got %v, want a fatal error without the password", err)
	}
	t.Logf("wrong password: %v", err)

	// TLS without SASL against the SASL_SSL listener: the broker closes each connection at
	// the first request. Start says so, instead of retrying forever.
	noSASL := map[string]string{"bootstrap.servers": b.saslAddr(), "security.protocol": "SSL", "request.timeout.ms": "10000"}
	maps.Copy(noSASL, stores[1])
	plain, err := ParseProperties(noSASL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Properties = plain
	s, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = s.Start(ctx)
	if err == nil || !strings.Contains(err.Error(), "security.protocol") || IsRetryable(err) {
		t.Fatalf("no SASL: got %v, want a fatal error naming security.protocol", err)
	}
	t.Logf("no SASL: %v (after %s)", err, time.Since(began).Round(time.Millisecond))
}
