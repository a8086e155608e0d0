package upsert

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
)

func props(kv ...string) map[string]string {
	m := map[string]string{"bootstrap.servers": "127.0.0.1:9092"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// client builds a client from opts (no I/O happens before the first request) so that the
// test can read the effective option values back.
func client(t *testing.T, opts []kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatalf("kgo.NewClient: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name  string
		props map[string]string
		check func(t *testing.T, cl *kgo.Client)
	}{
		{"defaults", props(), func(t *testing.T, cl *kgo.Client) {
			want(t, cl, kgo.SeedBrokers, []string{"127.0.0.1:9092"})
			want(t, cl, kgo.RequiredAcks, kgo.AllISRAcks())
			want(t, cl, kgo.DisableIdempotentWrite, false)
			want(t, cl, kgo.ProducerBatchMaxBytes, int32(DefaultMaxRequestSize))
		}},
		{"servers list", props("bootstrap.servers", " a:1, b:2 ,"), func(t *testing.T, cl *kgo.Client) {
			want(t, cl, kgo.SeedBrokers, []string{"a:1", "b:2"})
		}},
		{"acks 1 turns idempotence off", props("acks", "1"), func(t *testing.T, cl *kgo.Client) {
			want(t, cl, kgo.RequiredAcks, kgo.LeaderAck())
			want(t, cl, kgo.DisableIdempotentWrite, true)
		}},
		{"acks 0 with inflight", props("acks", "0", "max.in.flight.requests.per.connection", "3"), func(t *testing.T, cl *kgo.Client) {
			want(t, cl, kgo.RequiredAcks, kgo.NoAck())
			want(t, cl, kgo.MaxProduceRequestsInflightPerBroker, 3)
		}},
		{"acks -1", props("acks", "-1", "enable.idempotence", "false"), func(t *testing.T, cl *kgo.Client) {
			want(t, cl, kgo.RequiredAcks, kgo.AllISRAcks())
			want(t, cl, kgo.DisableIdempotentWrite, true)
		}},
		{"tuning", props("client.id", "me", "linger.ms", "0", "max.request.size", "2097152",
			"request.timeout.ms", "30000", "delivery.timeout.ms", "120000", "retries", "7",
			"metadata.max.age.ms", "60000", "connections.max.idle.ms", "540000", "buffer.memory", "33554432",
			"socket.connection.setup.timeout.ms", "5000", "retry.backoff.ms", "50", "retry.backoff.max.ms", "800"),
			func(t *testing.T, cl *kgo.Client) {
				want(t, cl, kgo.ClientID, "me")
				want(t, cl, kgo.ProducerLinger, time.Duration(0))
				want(t, cl, kgo.ProducerBatchMaxBytes, int32(2097152))
				want(t, cl, kgo.ProduceRequestTimeout, 30*time.Second)
				want(t, cl, kgo.RecordDeliveryTimeout, 2*time.Minute)
				want(t, cl, kgo.RecordRetries, int64(7))
				want(t, cl, kgo.MetadataMaxAge, time.Minute)
				want(t, cl, kgo.ConnIdleTimeout, 9*time.Minute)
				want(t, cl, kgo.MaxBufferedBytes, 33554432)
				want(t, cl, kgo.DialTimeout, 5*time.Second)
			}},
		{"huge max.request.size", props("max.request.size", "209715200"), func(t *testing.T, cl *kgo.Client) {
			want(t, cl, kgo.ProducerBatchMaxBytes, int32(209715200))
			want(t, cl, kgo.BrokerMaxWriteBytes, int32(209715200+1<<20))
		}},
		{"sasl plain", props("security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN",
			"sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p\"w";`),
			func(t *testing.T, cl *kgo.Client) { wantSASL(t, cl, "PLAIN") }},
		{"sasl scram 512 shaded module", props("security.protocol", "sasl_plaintext", "sasl.mechanism", "SCRAM-SHA-512",
			"sasl.jaas.config", `org.apache.flink.kafka.shaded.org.apache.kafka.common.security.scram.ScramLoginModule required username=u password="p";`),
			func(t *testing.T, cl *kgo.Client) { wantSASL(t, cl, "SCRAM-SHA-512") }},
		{"sasl username", props("security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "SCRAM-SHA-256",
			"sasl.username", "u", "sasl.password", "p"),
			func(t *testing.T, cl *kgo.Client) { wantSASL(t, cl, "SCRAM-SHA-256") }},
		{"compression", props("compression.type", "zstd"), func(t *testing.T, cl *kgo.Client) {
			codecs := cl.OptValue(kgo.ProducerBatchCompression).([]kgo.CompressionCodec)
			if len(codecs) != 1 || codecs[0] != kgo.ZstdCompression() {
				t.Errorf("codecs %v", codecs)
			}
		}},
		{"tls system roots", props("security.protocol", "SSL"), func(t *testing.T, cl *kgo.Client) {
			cfg := cl.OptValue(kgo.DialTLSConfig).(*tls.Config)
			if cfg == nil || cfg.RootCAs != nil || cfg.InsecureSkipVerify {
				t.Errorf("tls config %+v", cfg)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := Options(tc.props)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, client(t, opts))
		})
	}
}

func want(t *testing.T, cl *kgo.Client, opt, v any) {
	t.Helper()
	got := cl.OptValue(opt)
	if strings.TrimSpace(fmtAny(got)) != strings.TrimSpace(fmtAny(v)) {
		t.Errorf("%T option: got %v, want %v", opt, got, v)
	}
}

func fmtAny(v any) string { return strings.ReplaceAll(strings.TrimSpace(sprint(v)), "\n", " ") }

func wantSASL(t *testing.T, cl *kgo.Client, name string) {
	t.Helper()
	ms, _ := cl.OptValue(kgo.SASL).([]sasl.Mechanism)
	if len(ms) != 1 || ms[0].Name() != name {
		t.Errorf("SASL mechanisms %v, want %s", ms, name)
	}
}

func TestPropertiesErrors(t *testing.T) {
	const secret = "s3cr3t-value"
	bad := []struct {
		name  string
		props map[string]string
		want  string
	}{
		{"no servers", map[string]string{}, "properties.bootstrap.servers: required"},
		{"unknown", props("lingerr.ms", "5"), "properties.lingerr.ms: unknown Kafka producer option; supported: acks, allow.auto.create.topics, bootstrap.servers"},
		{"batch size", props("batch.size", "16384"), "properties.batch.size has no equivalent: batches are bounded by linger.ms and max.request.size"},
		{"no meaning", props("partitioner.class", "x"), "properties.partitioner.class is not used: records are partitioned by murmur2"},
		{"transactional id", props("transactional.id", "x"), "sink.transactional-id-prefix"},
		{"bad acks", props("acks", "2"), `properties.acks: invalid value "2"`},
		{"bad linger", props("linger.ms", "-1"), `properties.linger.ms: invalid value "-1"`},
		{"bad compression", props("compression.type", "brotli"), "valid: none, gzip, snappy, lz4, zstd"},
		{"bad protocol", props("security.protocol", "TLS"), `security.protocol: invalid value "TLS"`},
		{"idempotence needs acks all", props("acks", "1", "enable.idempotence", "true"), "needs acks=all"},
		{"inflight with idempotence", props("max.in.flight.requests.per.connection", "6"), "at most 5"},
		{"sasl without protocol", props("sasl.mechanism", "PLAIN"), "properties.sasl.mechanism: sasl.* options are set, but security.protocol is PLAINTEXT"},
		{"ssl without protocol", props("security.protocol", "SASL_PLAINTEXT", "ssl.truststore.location", "/x",
			"sasl.mechanism", "PLAIN", "sasl.username", "u"), "properties.ssl.truststore.location: ssl.* options are set, but security.protocol is SASL_PLAINTEXT"},
		{"no mechanism", props("security.protocol", "SASL_SSL", "sasl.jaas.config", secret), "GSSAPI"},
		{"gssapi", props("security.protocol", "SASL_SSL", "sasl.mechanism", "GSSAPI", "sasl.username", "u"), `properties.sasl.mechanism: invalid value "GSSAPI": valid: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512`},
		{"module mismatch", props("security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN",
			"sasl.jaas.config", `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="`+secret+`";`),
			"does not fit sasl.mechanism PLAIN"},
		{"jaas unterminated", props("security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN",
			"sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="`+secret),
			"option password: unterminated quoted value"},
		{"jaas no semicolon", props("security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN",
			"sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="`+secret+`"`),
			"missing the closing ';'"},
		{"jaas bad flag", props("security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN",
			"sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule must username="u";`), `invalid control flag "must"`},
		{"jaas no password", props("security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN",
			"sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u";`), "needs both username and password"},
		{"jaas two modules", props("security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN",
			"sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="`+secret+`"; x required;`),
			"more than one login module"},
		{"jaas and username", props("security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN", "sasl.username", "u",
			"sasl.jaas.config", secret), "not both"},
		{"missing truststore", props("security.protocol", "SSL", "ssl.truststore.location", "/nonexistent/t.jks"),
			"properties.ssl.truststore.location: open /nonexistent/t.jks"},
		{"bad store type", props("security.protocol", "SSL", "ssl.truststore.location", "properties_test.go",
			"ssl.truststore.type", "BKS"), `properties.ssl.truststore.type: invalid value "BKS": valid: PEM, JKS, PKCS12`},
		{"bad endpoint algorithm", props("security.protocol", "SSL", "ssl.endpoint.identification.algorithm", "ldaps"),
			`properties.ssl.endpoint.identification.algorithm: invalid value "ldaps"`},
		{"bad tls version", props("security.protocol", "SSL", "ssl.enabled.protocols", "TLSv1.1"), `properties.ssl.enabled.protocols: invalid value "TLSv1.1"`},
		{"bad bool", props("enable.idempotence", "yes"), `invalid value "yes"`},
		{"secret value not printed", props("ssl.truststore.password", secret), "properties.ssl.truststore.password: ssl.* options are set"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseProperties(tc.props)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("error shows a secret: %v", err)
			}
		})
	}
}

func TestParseJAAS(t *testing.T) {
	cfg, err := parseJAAS(" org.apache.kafka.common.security.plain.PlainLoginModule  required\n username=\"a\\\\b\" password=\"x\\\"y;z\"  ;  ")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.options["username"] != `a\b` || cfg.options["password"] != `x"y;z` {
		t.Errorf("options %q", cfg.options)
	}
}

// TestTrustStores loads trust stores of every type, made by keytool, and checks that the
// resulting configuration trusts a certificate signed by the CA.
func TestTrustStores(t *testing.T) {
	pki := newTestPKI(t, []string{"broker.example"}, nil)
	tests := []struct {
		name  string
		props map[string]string
	}{
		{"PEM", props("ssl.truststore.type", "PEM", "ssl.truststore.location", pki.caPEM)},
		{"PEM inline", props("ssl.truststore.type", "PEM", "ssl.truststore.certificates", readFile(t, pki.caPEM))},
		{"JKS", props("ssl.truststore.location", pki.trustStoreFile(t, "JKS", "changeit"), "ssl.truststore.password", "changeit")},
		{"PKCS12", props("ssl.truststore.type", "pkcs12", "ssl.truststore.location", pki.trustStoreFile(t, "PKCS12", "changeit"),
			"ssl.truststore.password", "changeit")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.props["security.protocol"] = "SSL"
			p, err := ParseProperties(tc.props)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pki.cert.Verify(x509Opts(p.TLS.RootCAs, "broker.example")); err != nil {
				t.Errorf("the trust store does not trust the CA's certificate: %v", err)
			}
		})
	}
	t.Run("wrong password", func(t *testing.T) {
		path := pki.trustStoreFile(t, "JKS", "changeit")
		_, err := ParseProperties(props("security.protocol", "SSL", "ssl.truststore.location", path, "ssl.truststore.password", "nope!!"))
		if err == nil || strings.Contains(err.Error(), "nope!!") || !strings.Contains(err.Error(), "wrong password") {
			t.Errorf("got %v", err)
		}
	})
}

// TestKeyStores loads the client certificate from key stores of every type.
func TestKeyStores(t *testing.T) {
	pki := newTestPKI(t, []string{"broker.example"}, nil)
	for _, typ := range []string{"PEM", "JKS", "PKCS12"} {
		t.Run(typ, func(t *testing.T) {
			pr := props("security.protocol", "SSL", "ssl.keystore.type", typ)
			if typ == "PEM" {
				pr["ssl.keystore.location"] = pki.certPEM
			} else {
				pr["ssl.keystore.location"] = pki.keyStoreFile(t, typ, "storepass")
				pr["ssl.keystore.password"] = "storepass"
			}
			p, err := ParseProperties(pr)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.TLS.Certificates) != 1 || len(p.TLS.Certificates[0].Certificate) < 1 {
				t.Fatalf("certificates %v", p.TLS.Certificates)
			}
			if got := p.TLS.Certificates[0].Certificate[0]; string(got) != string(pki.cert.Raw) {
				t.Error("the leaf is not the test certificate")
			}
		})
	}
	t.Run("inline PEM", func(t *testing.T) {
		keyPEM := readFile(t, pki.certPEM)
		p, err := ParseProperties(props("security.protocol", "SSL", "ssl.keystore.type", "PEM",
			"ssl.keystore.certificate.chain", keyPEM, "ssl.keystore.key", keyPEM))
		if err != nil || len(p.TLS.Certificates) != 1 {
			t.Fatalf("got %v", err)
		}
	})
}

// TestEndpointIdentification connects to a TLS listener whose certificate names
// broker.example (not 127.0.0.1): the default check refuses it, an empty
// ssl.endpoint.identification.algorithm accepts it, and a certificate from another CA is
// refused either way.
func TestEndpointIdentification(t *testing.T) {
	pki := newTestPKI(t, []string{"broker.example"}, nil)
	other := newTestPKI(t, []string{"broker.example"}, nil)
	addr := tlsListener(t, pki)
	dial := func(caFile string, algorithm *string) error {
		pr := props("security.protocol", "SSL", "ssl.truststore.type", "PEM", "ssl.truststore.location", caFile)
		if algorithm != nil {
			pr["ssl.endpoint.identification.algorithm"] = *algorithm
		}
		p, err := ParseProperties(pr)
		if err != nil {
			return err
		}
		cfg := p.TLS.Clone()
		cfg.ServerName = "127.0.0.1" // as kgo fills it from the broker address
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
		if err == nil {
			conn.Close()
		}
		return err
	}
	empty, https := "", "https"
	if err := dial(pki.caPEM, nil); err == nil {
		t.Error("default: connected despite the host name mismatch")
	}
	if err := dial(pki.caPEM, &https); err == nil {
		t.Error("https: connected despite the host name mismatch")
	}
	if err := dial(pki.caPEM, &empty); err != nil {
		t.Errorf("empty algorithm: %v", err)
	}
	if err := dial(other.caPEM, &empty); err == nil || !strings.Contains(err.Error(), "verify broker certificate") {
		t.Errorf("empty algorithm, untrusted CA: got %v", err)
	}
}

func tlsListener(t *testing.T, pki *testPKI) string {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(pki.certPEM, pki.certPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).HandshakeContext(ctx)
			c.Close()
		}
	}()
	t.Cleanup(func() { cancel(); ln.Close(); <-done })
	return ln.Addr().String()
}

// TestCheckProperties: the offline check refuses what ParseProperties refuses, except for
// the TLS stores it does not read.
func TestCheckProperties(t *testing.T) {
	missingStore := props("security.protocol", "SSL", "ssl.truststore.location", "/nonexistent/truststore.jks",
		"ssl.truststore.type", "JKS", "ssl.truststore.password", "pw")
	if err := CheckProperties(missingStore); err != nil {
		t.Errorf("CheckProperties read the truststore: %v", err)
	}
	if _, err := ParseProperties(missingStore); err == nil {
		t.Error("ParseProperties accepted a truststore that does not exist")
	}
	for _, bad := range []map[string]string{
		props("ssl.truststore.location", "/x.jks"), // PLAINTEXT
		props("security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN",
			"sasl.jaas.config", `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";`),
		props("batch.size", "16384"),
	} {
		if err := CheckProperties(bad); err == nil {
			t.Errorf("CheckProperties(%v) passed", bad)
		}
	}
}

// probeContext are options some numeric properties need beside them to be valid at all.
var probeContext = map[string][]string{
	"max.in.flight.requests.per.connection": {"acks", "1"},
}

// applyOpts are the franz-go options of every client that apply builds from p: the sink's
// producer under each delivery guarantee, and the plain clients (state reader, plan, tail).
func applyOpts(p *Properties) map[string][]kgo.Opt {
	all := map[string][]kgo.Opt{"plain": append(p.ClientOpts(), p.producerOpts()...)}
	for g := AtLeastOnce; g <= None; g++ {
		s := &Sink{cfg: Config{Properties: p, Guarantee: g, TransactionalID: "ingest-test"}}
		all[g.String()] = s.clientOpts()
	}
	return all
}

// TestNumbersAgreeWithClient: the bounds of every numeric property are values that franz-go
// accepts in every client apply makes, and the values just outside them are refused by
// ParseProperties, so that validate refuses no less than apply.
func TestNumbersAgreeWithClient(t *testing.T) {
	for key, n := range numbers {
		for _, v := range []int64{n.lo, n.hi} {
			p, err := ParseProperties(props(append(probeContext[key], key, strconv.FormatInt(v, 10))...))
			if err != nil {
				t.Errorf("%s=%d is within its bounds but refused: %v", key, v, err)
				continue
			}
			for client, opts := range applyOpts(p) {
				if err := kgo.ValidateOpts(opts...); err != nil {
					t.Errorf("%s=%d: franz-go refuses the %s client: %v", key, v, client, err)
				}
			}
		}
		for _, v := range []int64{n.lo - 1, n.hi + 1} {
			_, err := ParseProperties(props(append(probeContext[key], key, strconv.FormatInt(v, 10))...))
			var pe *PropertyError
			if !errors.As(err, &pe) || pe.Key != key || pe.Kind != PropertyValue {
				t.Errorf("%s=%d is outside its bounds: got %v, want a value error", key, v, err)
			}
		}
	}
}

// TestApplyRefusalsAtValidate: the settings that validate used to pass and apply refused
// (kgo.NewClient) are refused by the offline check, at their option. The bounds of numbers
// are not arbitrary: without them the client's own validation refuses the same values, and
// finish reports that too.
func TestApplyRefusalsAtValidate(t *testing.T) {
	for _, tc := range []struct{ key, value string }{
		{"connections.max.idle.ms", "50"},
		{"metadata.max.age.ms", "100"},
		{"linger.ms", "120000"},
		{"request.timeout.ms", "50"},
		{"delivery.timeout.ms", "500"},
		{"max.request.size", "1073741824"},
		{"client.id", strings.Repeat("x", 257)},
	} {
		for name, check := range map[string]func(map[string]string) error{
			"offline": CheckProperties,
			"apply":   func(m map[string]string) error { _, err := ParseProperties(m); return err },
		} {
			err := check(props(tc.key, tc.value))
			var pe *PropertyError
			if !errors.As(err, &pe) || pe.Key != tc.key {
				t.Errorf("%s: %s=%s: got %v, want an error at the option", name, tc.key, tc.value, err)
			}
		}
		n, ok := numbers[tc.key]
		if !ok {
			continue
		}
		p := &Properties{MaxRequestSize: DefaultMaxRequestSize, offline: true, Brokers: []string{"127.0.0.1:9092"}}
		v, _ := strconv.ParseInt(tc.value, 10, 64)
		n.set(p, v) // past the bounds
		if err := p.finish(); err == nil || !strings.Contains(err.Error(), "the Kafka client refuses") {
			t.Errorf("%s=%s without the bounds: finish returned %v, want franz-go's refusal", tc.key, tc.value, err)
		}
	}
}

func TestSSLProtocol(t *testing.T) {
	for _, tc := range []struct {
		protocol, enabled string
		min, max          uint16
		err               string
	}{
		{"TLSv1.2", "", tls.VersionTLS12, tls.VersionTLS12, ""},
		{"TLSv1.3", "", tls.VersionTLS12, tls.VersionTLS13, ""},
		{"TLS", "", tls.VersionTLS12, tls.VersionTLS13, ""},
		{"TLSv1.2", "TLSv1.3", 0, 0, "properties.ssl.protocol: TLSv1.2 allows none of the versions"},
		{"SSLv3", "", 0, 0, `properties.ssl.protocol: invalid value "SSLv3": valid: TLS, TLSv1.2, TLSv1.3`},
	} {
		m := props("security.protocol", "SSL", "ssl.protocol", tc.protocol)
		if tc.enabled != "" {
			m["ssl.enabled.protocols"] = tc.enabled
		}
		p, err := ParseProperties(m)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: got %v, want %q", m, err, tc.err)
			}
			if CheckProperties(m) == nil {
				t.Errorf("%v: the offline check passes what apply refuses", m)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		if p.TLS.MinVersion != tc.min || p.TLS.MaxVersion != tc.max {
			t.Errorf("%v: TLS versions %x-%x, want %x-%x", m, p.TLS.MinVersion, p.TLS.MaxVersion, tc.min, tc.max)
		}
	}
	if err := CheckProperties(props("ssl.protocol", "TLSv1.2")); err == nil {
		t.Error("ssl.protocol without security.protocol SSL passed")
	}
}

func TestAllowAutoCreateTopics(t *testing.T) {
	p, err := ParseProperties(props("allow.auto.create.topics", "FALSE"))
	if err != nil {
		t.Fatal(err)
	}
	if p.AllowAutoCreateTopics == nil || *p.AllowAutoCreateTopics {
		t.Errorf("AllowAutoCreateTopics = %v, want false", p.AllowAutoCreateTopics)
	}
	if _, err := ParseProperties(props("allow.auto.create.topics", "no")); err == nil {
		t.Error("allow.auto.create.topics: no passed")
	}
}
