package upsert

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
)

// Acks is the producer config acks.
type Acks int8

// The values of acks. AcksUnset leaves the choice to the delivery guarantee.
const (
	AcksUnset  Acks = iota
	AcksAll         // acks=all or -1
	AcksLeader      // acks=1
	AcksNone        // acks=0
)

// DefaultMaxRequestSize is the Java client's default max.request.size.
const DefaultMaxRequestSize = 1 << 20

// Properties are the sink's properties.* options (Java producer configs without the
// prefix), parsed and checked. The fields the sink combines with its own options are
// exported; the rest is in [Properties.ClientOpts].
type Properties struct {
	bufferMemory bool // buffer.memory was given

	// Brokers is bootstrap.servers, split on ','.
	Brokers []string
	// Acks is acks, AcksUnset when not given.
	Acks Acks
	// Idempotence is enable.idempotence, nil when not given.
	Idempotence *bool
	// MaxRequestSize is max.request.size (default [DefaultMaxRequestSize]): the largest
	// record the sink writes, and franz-go's ProducerBatchMaxBytes.
	MaxRequestSize int32
	// TransactionTimeout is transaction.timeout.ms, 0 when not given.
	TransactionTimeout time.Duration
	// TLS is the connection's TLS configuration, nil for PLAINTEXT and SASL_PLAINTEXT.
	TLS *tls.Config
	// SASL is the SASL mechanism, nil for PLAINTEXT and SSL.
	SASL sasl.Mechanism

	offline  bool // CheckProperties: no TLS stores read
	opts     []kgo.Opt
	protocol string
	tls      tlsProps
	sasl     struct{ mechanism, jaas, user, pass string }
	inflight int
	backoff  struct{ base, max time.Duration }
}

// property parses one option into p.
type property func(p *Properties, v string) error

// properties are the supported options. Each maps onto the franz-go option named in its
// handler; reference/apsaramq-and-alibaba-sdk.md §6 has the table.
var properties = map[string]property{
	"bootstrap.servers": func(p *Properties, v string) error {
		for _, b := range strings.Split(v, ",") {
			if b = strings.TrimSpace(b); b != "" {
				p.Brokers = append(p.Brokers, b)
			}
		}
		if len(p.Brokers) == 0 {
			return errors.New("no broker address")
		}
		return nil
	},
	"client.id":         func(p *Properties, v string) error { p.add(kgo.ClientID(v)); return nil },
	"security.protocol": func(p *Properties, v string) error { p.protocol = strings.ToUpper(v); return nil },
	"sasl.mechanism":    func(p *Properties, v string) error { p.sasl.mechanism = strings.ToUpper(v); return nil },
	"sasl.jaas.config":  func(p *Properties, v string) error { p.sasl.jaas = v; return nil },
	"sasl.username":     func(p *Properties, v string) error { p.sasl.user = v; return nil },
	"sasl.password":     func(p *Properties, v string) error { p.sasl.pass = v; return nil },

	"ssl.truststore.location":     func(p *Properties, v string) error { p.tls.trustLocation = v; return nil },
	"ssl.truststore.type":         func(p *Properties, v string) error { p.tls.trustType = v; return nil },
	"ssl.truststore.password":     func(p *Properties, v string) error { p.tls.trustPassword = v; return nil },
	"ssl.truststore.certificates": func(p *Properties, v string) error { p.tls.trustPEM = v; return nil },
	"ssl.keystore.location":       func(p *Properties, v string) error { p.tls.keyLocation = v; return nil },
	"ssl.keystore.type":           func(p *Properties, v string) error { p.tls.keyType = v; return nil },
	"ssl.keystore.password":       func(p *Properties, v string) error { p.tls.keyPassword = v; return nil },
	"ssl.key.password":            func(p *Properties, v string) error { p.tls.keyKeyPassword = v; return nil },
	"ssl.keystore.certificate.chain": func(p *Properties, v string) error {
		p.tls.keyPEMChain = v
		return nil
	},
	"ssl.keystore.key": func(p *Properties, v string) error { p.tls.keyPEMKey = v; return nil },
	"ssl.endpoint.identification.algorithm": func(p *Properties, v string) error {
		p.tls.endpointAlgorithm, p.tls.endpointSet = strings.TrimSpace(v), true
		return nil
	},
	"ssl.enabled.protocols": func(p *Properties, v string) error { p.tls.protocols = strings.Split(v, ","); return nil },
	"ssl.protocol": func(p *Properties, v string) error {
		if v != "TLS" && tlsVersions[v] == 0 {
			return fmt.Errorf("unsupported value %q; supported: TLS, TLSv1.2, TLSv1.3", v)
		}
		return nil // the version range comes from ssl.enabled.protocols, as in Java
	},

	"acks": func(p *Properties, v string) error {
		switch strings.ToLower(v) {
		case "all", "-1":
			p.Acks = AcksAll
		case "1":
			p.Acks = AcksLeader
		case "0":
			p.Acks = AcksNone
		default:
			return fmt.Errorf("invalid value %q; valid: all, -1, 1, 0", v)
		}
		return nil
	},
	"enable.idempotence": func(p *Properties, v string) error {
		b, err := parseBool(v)
		p.Idempotence = &b
		return err
	},
	"compression.type": func(p *Properties, v string) error {
		codec, ok := compressions[strings.ToLower(v)]
		if !ok {
			return fmt.Errorf("invalid value %q; valid: none, gzip, snappy, lz4, zstd", v)
		}
		p.add(kgo.ProducerBatchCompression(codec))
		if strings.EqualFold(v, "lz4") {
			p.add(kgo.WithCompressor(newLZ4Compressor())) // 64 KiB blocks (compress.go)
		}
		return nil
	},
	"linger.ms": millis(0, func(p *Properties, d time.Duration) { p.add(kgo.ProducerLinger(d)) }),
	"max.request.size": intIn(1024, 1<<30, func(p *Properties, n int) {
		p.MaxRequestSize = int32(n)
	}),
	"buffer.memory": intIn(1, 1<<62, func(p *Properties, n int) { p.add(kgo.MaxBufferedBytes(n)); p.bufferMemory = true }),
	"request.timeout.ms": millis(1, func(p *Properties, d time.Duration) {
		p.add(kgo.ProduceRequestTimeout(d))
	}),
	"delivery.timeout.ms": millis(1, func(p *Properties, d time.Duration) {
		p.add(kgo.RecordDeliveryTimeout(d))
	}),
	"transaction.timeout.ms": millis(1, func(p *Properties, d time.Duration) { p.TransactionTimeout = d }),
	"retries":                intIn(0, 1<<31-1, func(p *Properties, n int) { p.add(kgo.RecordRetries(n)) }),
	"retry.backoff.ms": millis(0, func(p *Properties, d time.Duration) {
		p.backoff.base = d
	}),
	"retry.backoff.max.ms": millis(0, func(p *Properties, d time.Duration) { p.backoff.max = d }),
	"max.in.flight.requests.per.connection": intIn(1, 1<<20, func(p *Properties, n int) {
		p.inflight = n
	}),
	"metadata.max.age.ms": millis(1, func(p *Properties, d time.Duration) { p.add(kgo.MetadataMaxAge(d)) }),
	"connections.max.idle.ms": millis(1, func(p *Properties, d time.Duration) {
		p.add(kgo.ConnIdleTimeout(d))
	}),
	"socket.connection.setup.timeout.ms": millis(1, func(p *Properties, d time.Duration) {
		p.add(kgo.DialTimeout(d))
	}),
}

// unsupported are Java producer configs that have no meaning for this sink, with the reason.
var unsupported = map[string]string{
	"key.serializer":                           "the sink writes JSON bytes itself",
	"value.serializer":                         "the sink writes JSON bytes itself",
	"partitioner.class":                        "the partitioner is always the Java default for keyed records (murmur2)",
	"partitioner.ignore.keys":                  "every record is partitioned by its key",
	"partitioner.adaptive.partitioning.enable": "every record is partitioned by its key",
	"transactional.id":                         "set sink.transactional-id-prefix with sink.delivery-guarantee: exactly-once",
	"allow.auto.create.topics":                 "use sink.topic.auto-create",
	"max.block.ms":                             "the sink blocks the source while the buffer is full, without a limit",
	"interceptor.classes":                      "Java classes cannot run here",
	"metric.reporters":                         "Java classes cannot run here",
	"security.providers":                       "Java classes cannot run here",
	"sasl.login.callback.handler.class":        "Java classes cannot run here",
	"sasl.client.callback.handler.class":       "Java classes cannot run here",
	"sasl.kerberos.service.name":               "GSSAPI (Kerberos) is not supported",
	"ssl.keymanager.algorithm":                 "Go's TLS has no Java key managers",
	"ssl.trustmanager.algorithm":               "Go's TLS has no Java trust managers",
	"ssl.secure.random.implementation":         "Go's TLS uses crypto/rand",
	"ssl.cipher.suites":                        "Go chooses TLS cipher suites itself",
	"ssl.provider":                             "Go's TLS has no Java providers",
	"reconnect.backoff.ms":                     "franz-go has no separate reconnect backoff; use retry.backoff.ms",
	"reconnect.backoff.max.ms":                 "franz-go has no separate reconnect backoff; use retry.backoff.max.ms",
	"send.buffer.bytes":                        "the operating system sizes socket buffers",
	"receive.buffer.bytes":                     "the operating system sizes socket buffers",
	"client.dns.lookup":                        "Go's resolver decides",
	"compression.gzip.level":                   "franz-go uses its codecs' default levels",
	"compression.lz4.level":                    "franz-go uses its codecs' default levels",
	"compression.zstd.level":                   "franz-go uses its codecs' default levels",
	"enable.metrics.push":                      "client metrics are not pushed",
	// batch.size is Java's per-partition batch target. franz-go has no target separate from
	// its per-batch cap, which also caps single records, so batch.size must not become that
	// cap (records above 16 KiB would fail).
	"batch.size": "batches fill up to max.request.size within linger.ms",
}

var compressions = map[string]kgo.CompressionCodec{
	"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
	"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
}

// IsSecretProperty reports whether the value of the property key is a secret that must not
// appear in any output: passwords, private keys and the JAAS configuration.
func IsSecretProperty(key string) bool {
	return strings.HasSuffix(key, ".password") || strings.Contains(key, "jaas") || key == "ssl.keystore.key"
}

// ParseProperties parses the properties.* options (keys without the prefix). Every
// option must be one this sink supports; a known Java option with no meaning here and an
// unknown option are errors that name the option and list the supported ones. Errors
// never contain the value of a secret option (see [IsSecretProperty]).
// bootstrap.servers is required.
func ParseProperties(props map[string]string) (*Properties, error) {
	return parseProperties(props, false)
}

// CheckProperties checks the properties.* options as ParseProperties does, alone and
// together, without reading the files they name (TLS trust and key stores): the check of
// ingest validate and plan, which may run away from the machine that holds the stores.
func CheckProperties(props map[string]string) error {
	_, err := parseProperties(props, true)
	return err
}

func parseProperties(props map[string]string, offline bool) (*Properties, error) {
	p := &Properties{MaxRequestSize: DefaultMaxRequestSize, offline: offline}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(props)) { // deterministic: errors in name order
		if err := p.set(k, props[k]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := p.finish(); err != nil {
		return nil, fmt.Errorf("upsert: %w", err)
	}
	return p, nil
}

func (p *Properties) set(k, v string) error {
	if reason, ok := unsupported[k]; ok {
		return fmt.Errorf("upsert: properties.%s: not supported here (%s); supported: %s", k, reason, supportedList())
	}
	parse, ok := properties[k]
	if !ok {
		return fmt.Errorf("upsert: properties.%s: unknown Kafka producer option; supported: %s", k, supportedList())
	}
	if err := parse(p, strings.TrimSpace(v)); err != nil {
		if IsSecretProperty(k) {
			return fmt.Errorf("upsert: properties.%s: invalid value", k)
		}
		return fmt.Errorf("upsert: properties.%s: %w", k, err)
	}
	return nil
}

func supportedList() string { return strings.Join(PropertyNames(), ", ") }

// PropertyNames returns the properties.* options the sink supports, without the prefix,
// sorted.
func PropertyNames() []string { return slices.Sorted(maps.Keys(properties)) }

// UnsupportedPropertyNames returns the Java producer configs the sink refuses as having no
// meaning here, sorted.
func UnsupportedPropertyNames() []string { return slices.Sorted(maps.Keys(unsupported)) }

// DefaultBufferMemory is buffer.memory when the pipeline does not set it: Java's default.
const DefaultBufferMemory = 32 << 20

// finish checks the options against each other and builds TLS, SASL and the options
// that depend on more than one property.
func (p *Properties) finish() error {
	if len(p.Brokers) == 0 {
		return errors.New("properties.bootstrap.servers: required")
	}
	if err := p.security(); err != nil {
		return err
	}
	if p.Acks != AcksUnset && p.Acks != AcksAll && p.Idempotence != nil && *p.Idempotence {
		return errors.New("properties.enable.idempotence=true needs acks=all")
	}
	if p.inflight > 5 && (p.Idempotence == nil || *p.Idempotence) && (p.Acks == AcksUnset || p.Acks == AcksAll) {
		return errors.New("properties.max.in.flight.requests.per.connection: at most 5 with an idempotent producer")
	}
	// buffer.memory bounds the bytes waiting in the producer, as in Java (32 MiB by default
	// there too): counting records alone lets wide rows fill memory behind a slow broker.
	if !p.bufferMemory {
		p.add(kgo.MaxBufferedBytes(DefaultBufferMemory))
	}
	// Java's max.request.size bounds a request and so every record and batch; franz-go's
	// batch cap is the same bound. A whole request may hold several batches.
	p.add(kgo.ProducerBatchMaxBytes(p.MaxRequestSize))
	if p.MaxRequestSize > 100<<20 {
		p.add(kgo.BrokerMaxWriteBytes(p.MaxRequestSize + 1<<20))
	}
	if p.backoff.base > 0 || p.backoff.max > 0 {
		p.add(kgo.RetryBackoffFn(backoff(p.backoff.base, p.backoff.max)))
	}
	return nil
}

// security checks security.protocol against the ssl.* and sasl.* options, and builds TLS
// and SASL.
func (p *Properties) security() error {
	useTLS, useSASL := false, false
	switch p.protocol {
	case "", "PLAINTEXT":
	case "SSL":
		useTLS = true
	case "SASL_PLAINTEXT":
		useSASL = true
	case "SASL_SSL":
		useTLS, useSASL = true, true
	default:
		return fmt.Errorf("properties.security.protocol: invalid value %q; valid: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", p.protocol)
	}
	if !useTLS && p.tls.any() {
		return fmt.Errorf("properties.ssl.*: set, but security.protocol is %s; use SSL or SASL_SSL", p.protocolName())
	}
	if !useSASL && p.sasl != (struct{ mechanism, jaas, user, pass string }{}) {
		return fmt.Errorf("properties.sasl.*: set, but security.protocol is %s; use SASL_PLAINTEXT or SASL_SSL", p.protocolName())
	}
	if useTLS && !p.offline {
		cfg, err := p.tls.tlsConfig()
		if err != nil {
			return err
		}
		p.TLS = cfg
		p.add(kgo.DialTLSConfig(cfg))
	}
	if useSASL {
		m, err := saslMechanism(p.sasl.mechanism, p.sasl.jaas, p.sasl.user, p.sasl.pass)
		if err != nil {
			return err
		}
		p.SASL = m
		p.add(kgo.SASL(m))
	}
	return nil
}

func (p *Properties) protocolName() string {
	if p.protocol == "" {
		return "PLAINTEXT (the default)"
	}
	return p.protocol
}

func (p *Properties) add(o kgo.Opt) { p.opts = append(p.opts, o) }

// ClientOpts returns the franz-go options for the brokers, security, batching, timeouts and
// retries. It leaves out acks, idempotence and transactions, which the sink decides from
// its delivery guarantee together with [Properties.Acks], [Properties.Idempotence] and
// [Properties.TransactionTimeout].
func (p *Properties) ClientOpts() []kgo.Opt {
	return append([]kgo.Opt{kgo.SeedBrokers(p.Brokers...)}, p.opts...)
}

// ProducerOpts returns the acks and idempotence options as the Java client reads the
// properties: acks=all and idempotent by default; acks 1 or 0 without an explicit
// enable.idempotence turn idempotence off; enable.idempotence=false keeps acks=all unless
// acks says otherwise; max.in.flight.requests.per.connection applies without idempotence.
func (p *Properties) ProducerOpts() []kgo.Opt {
	idempotent := p.Idempotence == nil || *p.Idempotence
	if p.Idempotence == nil && p.Acks != AcksUnset && p.Acks != AcksAll {
		idempotent = false
	}
	opts := []kgo.Opt{kgo.RequiredAcks(p.Acks.kgo())}
	if !idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
		if p.inflight > 0 {
			opts = append(opts, kgo.MaxProduceRequestsInflightPerBroker(p.inflight))
		}
	}
	return opts
}

func (a Acks) kgo() kgo.Acks {
	switch a {
	case AcksLeader:
		return kgo.LeaderAck()
	case AcksNone:
		return kgo.NoAck()
	}
	return kgo.AllISRAcks()
}

// Options parses props and returns every franz-go option they give, with Java's meaning of
// acks and enable.idempotence (see [Properties.ProducerOpts]).
func Options(props map[string]string) ([]kgo.Opt, error) {
	p, err := ParseProperties(props)
	if err != nil {
		return nil, err
	}
	return append(p.ClientOpts(), p.ProducerOpts()...), nil
}

// backoff is an exponential backoff from base to max with ±20% jitter, like the Java
// client's retry.backoff.ms and retry.backoff.max.ms (defaults 100 ms and 1 s).
func backoff(base, maxD time.Duration) func(int) time.Duration {
	if base <= 0 {
		base = 100 * time.Millisecond
	}
	if maxD <= 0 {
		maxD = time.Second
	}
	maxD = max(maxD, base)
	return func(tries int) time.Duration {
		d := base
		for i := 1; i < tries && d < maxD; i++ {
			d *= 2
		}
		d = min(d, maxD)
		return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
	}
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("invalid value %q; valid: true, false", v)
}

// intIn parses an integer in [lo, hi] and hands it to set.
func intIn(lo, hi int, set func(*Properties, int)) property {
	return func(p *Properties, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("invalid value %q; want an integer from %d to %d", v, lo, hi)
		}
		set(p, n)
		return nil
	}
}

// millis parses a count of milliseconds of at least lo and hands it to set as a duration.
func millis(lo int, set func(*Properties, time.Duration)) property {
	return intIn(lo, 1<<40, func(p *Properties, n int) { set(p, time.Duration(n)*time.Millisecond) })
}
