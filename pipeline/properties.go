package pipeline

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ingestkit/ingest/internal/jdbctls"
)

// This file lists the Kafka producer configs (their Java names, as the
// sink's properties.* options) that ingest maps onto its Go client, and
// those that have no meaning here. Any other properties.* option is an
// error: a Java option must never be silently ignored. See
// reference/apsaramq-and-alibaba-sdk.md §6 for the mapping.

// word is a string enum value for enumValue.
type word string

func (w word) String() string { return string(w) }

// producerProperty is a supported producer config.
type producerProperty struct {
	name   string
	check  func(string) error // nil: any value
	secret bool               // a credential
}

var producerProperties = []producerProperty{
	{name: "bootstrap.servers", check: notEmpty},
	{name: "client.id"},
	{name: "security.protocol", check: oneOfWords("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")},
	{name: "sasl.mechanism", check: oneOfWords("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")},
	{name: "sasl.jaas.config", secret: true},
	{name: "sasl.username"},
	{name: "sasl.password", secret: true},
	{name: "ssl.truststore.location"},
	{name: "ssl.truststore.type", check: oneOfWords("PEM", "JKS", "PKCS12")},
	{name: "ssl.truststore.password", secret: true},
	{name: "ssl.truststore.certificates"},
	{name: "ssl.keystore.location"},
	{name: "ssl.keystore.type", check: oneOfWords("PEM", "JKS", "PKCS12")},
	{name: "ssl.keystore.password", secret: true},
	{name: "ssl.keystore.key", secret: true},
	{name: "ssl.keystore.certificate.chain"},
	{name: "ssl.key.password", secret: true},
	{name: "ssl.endpoint.identification.algorithm", check: endpointIdentification},
	{name: "ssl.protocol", check: oneOfWords("TLS", "TLSv1.2", "TLSv1.3")},
	{name: "ssl.enabled.protocols"},
	{name: "acks", check: oneOfWords("all", "-1", "1", "0")},
	{name: "enable.idempotence", check: isBool},
	{name: "compression.type", check: oneOfWords("none", "gzip", "snappy", "lz4", "zstd")},
	{name: "linger.ms", check: intAtLeast(0)},
	{name: "max.request.size", check: intAtLeast(1)},
	{name: "buffer.memory", check: intAtLeast(1)},
	{name: "max.in.flight.requests.per.connection", check: intAtLeast(1)},
	{name: "retries", check: intAtLeast(0)},
	{name: "retry.backoff.ms", check: intAtLeast(0)},
	{name: "retry.backoff.max.ms", check: intAtLeast(0)},
	{name: "request.timeout.ms", check: intAtLeast(1)},
	{name: "delivery.timeout.ms", check: intAtLeast(1)},
	{name: "transaction.timeout.ms", check: intAtLeast(1)},
	{name: "metadata.max.age.ms", check: intAtLeast(0)},
	{name: "connections.max.idle.ms", check: intAtLeast(0)},
	{name: "socket.connection.setup.timeout.ms", check: intAtLeast(1)},
}

const noGoEquivalent = "is a Java client option with no equivalent in ingest's Kafka client; remove it"

// producerRefused are Java producer configs that mean nothing here.
var producerRefused = []refusal{
	{"key.serializer", "is not used: ingest writes keys as JSON bytes itself; remove it"},
	{"value.serializer", "is not used: ingest writes values as JSON bytes itself; remove it"},
	{"partitioner.class", "is not used: records are partitioned by murmur2 of the key, as the Java client's default; remove it"},
	{"partitioner.", noGoEquivalent},
	{"transactional.id", "is set by ingest from sink.transactional-id-prefix and pipeline.name; remove it"},
	{"allow.auto.create.topics", "is not used: ingest creates topics itself; use sink.topic.auto-create"},
	{"batch.size", "has no equivalent: batches are bounded by linger.ms and max.request.size; remove it"},
	{"max.block.ms", noGoEquivalent},
	{"send.buffer.bytes", noGoEquivalent},
	{"receive.buffer.bytes", noGoEquivalent},
	{"client.dns.lookup", noGoEquivalent},
	{"reconnect.backoff.ms", noGoEquivalent},
	{"reconnect.backoff.max.ms", noGoEquivalent},
	{"interceptor.classes", noGoEquivalent},
	{"metric.reporters", noGoEquivalent},
	{"metrics.", noGoEquivalent},
	{"auto.include.jmx.reporter", noGoEquivalent},
	{"security.providers", noGoEquivalent},
	{"sasl.login.", noGoEquivalent},
	{"sasl.kerberos.", "is not supported: ingest has no Kerberos (GSSAPI); use PLAIN or SCRAM"},
	{"sasl.client.callback.handler.class", noGoEquivalent},
	{"sasl.oauthbearer.", "is not supported yet: use PLAIN or SCRAM"},
	{"ssl.keymanager.algorithm", noGoEquivalent},
	{"ssl.trustmanager.algorithm", noGoEquivalent},
	{"ssl.secure.random.implementation", noGoEquivalent},
	{"ssl.provider", noGoEquivalent},
	{"ssl.engine.factory.class", noGoEquivalent},
	{"ssl.cipher.suites", "is not supported yet: Go chooses the TLS cipher suites; remove it"},
}

// producerProperties as a pass-through checker.
var kafkaProperties = passThrough{
	prefix:     "properties.",
	checkKey:   checkProducerKey,
	checkValue: checkProducerValue,
	secret: func(key string) bool {
		p := findProducerProperty(key)
		return p != nil && p.secret
	},
}

// jdbcProperties are the MySQL Connector/J properties ingest honours
// (pipeline/jdbc.go). Any whose name mentions a password is a credential.
var jdbcProperties = passThrough{
	prefix:     "jdbc.properties.",
	checkKey:   checkJDBCKey,
	checkValue: jdbctls.CheckValue,
	secret:     func(key string) bool { return strings.Contains(strings.ToLower(key), "password") },
}

func findProducerProperty(key string) *producerProperty {
	for i := range producerProperties {
		if producerProperties[i].name == key {
			return &producerProperties[i]
		}
	}
	return nil
}

// checkProducerKey checks the name of one properties.* option.
func checkProducerKey(key string) error {
	if reason := refusedReason(producerRefused, key); reason != "" {
		return fmt.Errorf("option %q %s", "properties."+key, reason)
	}
	if findProducerProperty(key) != nil {
		return nil
	}
	names := make([]string, len(producerProperties))
	for i, p := range producerProperties {
		names[i] = "properties." + p.name
	}
	return fmt.Errorf("unknown Kafka producer option %q%s", "properties."+key, didYouMean("properties."+key, names))
}

// checkProducerValue checks the value of a known properties.* option.
func checkProducerValue(key, value string) error {
	if p := findProducerProperty(key); p != nil && p.check != nil {
		return p.check(value)
	}
	return nil
}

func notEmpty(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("must not be empty")
	}
	return nil
}

func oneOfWords(names ...string) func(string) error {
	values := make([]word, len(names))
	for i, n := range names {
		values[i] = word(n)
	}
	return func(s string) error {
		var w word
		return enum(&w, values...).set(s)
	}
}

func intAtLeast(lo int64) func(string) error {
	return func(s string) error {
		var n int64
		return int64Value{&n, lo, math.MaxInt64}.set(s)
	}
}

func isBool(s string) error {
	var b bool
	return boolValue{&b}.set(s)
}

// endpointIdentification accepts "https" (verify the broker's host name,
// the default) or "" (verify the certificate chain only, as ApsaraMQ's
// demos need).
func endpointIdentification(s string) error {
	if s == "" || strings.EqualFold(s, "https") {
		return nil
	}
	return errors.New(`must be "https" or "" (no host name verification)`)
}
