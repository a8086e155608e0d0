package upsert

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"math"
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

	// AllowAutoCreateTopics is allow.auto.create.topics, nil when not given. The sink
	// itself does not read it: false stands for sink.topic.auto-create: false, which the
	// pipeline loader sets from it.
	AllowAutoCreateTopics *bool

	offline  bool              // ParsePropertiesOffline: no TLS stores read
	given    map[string]string // the options as given
	opts     []kgo.Opt
	protocol string
	tls      tlsProps
	sasl     struct{ mechanism, jaas, user, pass string }
	inflight int
	backoff  struct{ base, max time.Duration }
}

// property parses one option's value into p. Its error says what is wrong without
// repeating the value.
type property func(p *Properties, v string) error

// properties are the supported options that are not plain numbers (see numbers). Each maps
// onto the franz-go option named in its handler.
var properties = map[string]property{
	"bootstrap.servers": func(p *Properties, v string) error {
		for _, b := range strings.Split(v, ",") {
			if b = strings.TrimSpace(b); b != "" {
				p.Brokers = append(p.Brokers, b)
			}
		}
		if len(p.Brokers) == 0 {
			return errors.New("no broker address; give one or more host:port, separated by commas")
		}
		return nil
	},
	"client.id": func(p *Properties, v string) error {
		if len(v) > 256 {
			return errors.New("at most 256 bytes (franz-go's limit)")
		}
		p.add(kgo.ClientID(v))
		return nil
	},
	"security.protocol": func(p *Properties, v string) error {
		p.protocol = strings.ToUpper(v)
		return oneOf(p.protocol, "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
	},
	"sasl.mechanism": func(p *Properties, v string) error {
		p.sasl.mechanism = strings.ToUpper(v)
		return oneOf(p.sasl.mechanism, saslMechanisms...)
	},
	"sasl.jaas.config": func(p *Properties, v string) error { p.sasl.jaas = v; return nil },
	"sasl.username":    func(p *Properties, v string) error { p.sasl.user = v; return nil },
	"sasl.password":    func(p *Properties, v string) error { p.sasl.pass = v; return nil },

	"ssl.truststore.location":     func(p *Properties, v string) error { p.tls.trustLocation = v; return nil },
	"ssl.truststore.type":         storeTypeProperty(func(p *Properties, v string) { p.tls.trustType = v }),
	"ssl.truststore.password":     func(p *Properties, v string) error { p.tls.trustPassword = v; return nil },
	"ssl.truststore.certificates": func(p *Properties, v string) error { p.tls.trustPEM = v; return nil },
	"ssl.keystore.location":       func(p *Properties, v string) error { p.tls.keyLocation = v; return nil },
	"ssl.keystore.type":           storeTypeProperty(func(p *Properties, v string) { p.tls.keyType = v }),
	"ssl.keystore.password":       func(p *Properties, v string) error { p.tls.keyPassword = v; return nil },
	"ssl.key.password":            func(p *Properties, v string) error { p.tls.keyKeyPassword = v; return nil },
	"ssl.keystore.certificate.chain": func(p *Properties, v string) error {
		p.tls.keyPEMChain = v
		return nil
	},
	"ssl.keystore.key": func(p *Properties, v string) error { p.tls.keyPEMKey = v; return nil },
	"ssl.endpoint.identification.algorithm": func(p *Properties, v string) error {
		p.tls.endpointAlgorithm, p.tls.endpointSet = strings.TrimSpace(v), true
		if v != "" && !strings.EqualFold(v, "https") {
			return errors.New(`valid: https (verify the broker's host name, the default) or "" (verify the certificate chain only)`)
		}
		return nil
	},
	"ssl.enabled.protocols": func(p *Properties, v string) error {
		p.tls.protocols = strings.Split(v, ",")
		for _, name := range p.tls.protocols {
			if tlsVersions[strings.TrimSpace(name)] == 0 {
				return errors.New("valid: a comma-separated list of TLSv1.2 and TLSv1.3")
			}
		}
		return nil
	},
	// ssl.protocol is the protocol of Java's SSLContext: TLSv1.2 caps the connection at
	// TLS 1.2 whatever ssl.enabled.protocols allows; TLS and TLSv1.3 leave the range to it.
	"ssl.protocol": func(p *Properties, v string) error {
		p.tls.protocol = v
		return oneOf(v, "TLS", "TLSv1.2", "TLSv1.3")
	},
	// allow.auto.create.topics=false asks that no topic be created for the pipeline. The sink
	// never lets the broker create topics; it creates missing ones itself unless
	// sink.topic.auto-create is false, which this option sets (the pipeline loader does).
	"allow.auto.create.topics": func(p *Properties, v string) error {
		b, err := parseBool(v)
		p.AllowAutoCreateTopics = &b
		return err
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
			return errors.New("valid: all, -1, 1, 0")
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
			return errors.New("valid: none, gzip, snappy, lz4, zstd")
		}
		p.add(kgo.ProducerBatchCompression(codec))
		if strings.EqualFold(v, "lz4") {
			p.add(kgo.WithCompressor(newLZ4Compressor())) // 64 KiB blocks (compress.go)
		}
		return nil
	},
}

// number is a numeric property: a whole number from lo to hi, handed to set. The bounds
// are those of the franz-go option it maps onto (kgo.ValidateOpts refuses the client
// otherwise; properties_test.go checks that they agree), where they are narrower than Java's.
type number struct {
	lo, hi int64
	set    func(p *Properties, n int64)
	why    string // why the bounds are narrower than Java's, "" when they are not
}

// ms converts a count of milliseconds.
func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

const maxMillis = 1 << 40 // 34 years: any longer is a mistake, and time.Duration holds it

// numbers are the numeric properties.
var numbers = map[string]number{
	"linger.ms": {0, 60_000, func(p *Properties, n int64) { p.add(kgo.ProducerLinger(ms(n))) },
		"ingest's Kafka client (franz-go) lingers at most a minute"},
	"max.request.size": {1024, 1<<30 - 1<<20, func(p *Properties, n int64) { p.MaxRequestSize = int32(n) },
		"ingest's Kafka client (franz-go) writes requests of at most 1 GiB, 1 MiB of which is kept for the request's framing"},
	"buffer.memory": {1, 1 << 62, func(p *Properties, n int64) {
		p.add(kgo.MaxBufferedBytes(int(n)))
		p.bufferMemory = true
	}, ""},
	"request.timeout.ms": {100, math.MaxInt32, func(p *Properties, n int64) { p.add(kgo.ProduceRequestTimeout(ms(n))) },
		"ingest's Kafka client (franz-go) waits at least 100 ms for a produce response"},
	"delivery.timeout.ms": {1000, maxMillis, func(p *Properties, n int64) { p.add(kgo.RecordDeliveryTimeout(ms(n))) },
		"ingest's Kafka client (franz-go) gives a record at least a second"},
	// Sent as int32 milliseconds.
	"transaction.timeout.ms":                {1, math.MaxInt32, func(p *Properties, n int64) { p.TransactionTimeout = ms(n) }, ""},
	"retries":                               {0, math.MaxInt32, func(p *Properties, n int64) { p.add(kgo.RecordRetries(int(n))) }, ""},
	"retry.backoff.ms":                      {0, maxMillis, func(p *Properties, n int64) { p.backoff.base = ms(n) }, ""},
	"retry.backoff.max.ms":                  {0, maxMillis, func(p *Properties, n int64) { p.backoff.max = ms(n) }, ""},
	"max.in.flight.requests.per.connection": {1, 1 << 20, func(p *Properties, n int64) { p.inflight = int(n) }, ""},
	"metadata.max.age.ms": {5000, 3_600_000, func(p *Properties, n int64) { p.add(kgo.MetadataMaxAge(ms(n))) },
		"ingest's Kafka client (franz-go) refreshes metadata at least hourly and at most every 5 s"},
	"connections.max.idle.ms": {100, 900_000, func(p *Properties, n int64) { p.add(kgo.ConnIdleTimeout(ms(n))) },
		"ingest's Kafka client (franz-go) closes idle connections after 100 ms to 15 minutes"},
	"socket.connection.setup.timeout.ms": {1, maxMillis, func(p *Properties, n int64) { p.add(kgo.DialTimeout(ms(n))) }, ""},
}

func (n number) parse(p *Properties, v string) error {
	i, err := strconv.ParseInt(v, 10, 64)
	if err != nil || i < n.lo || i > n.hi {
		if n.why != "" {
			return fmt.Errorf("want a whole number from %d to %d: %s", n.lo, n.hi, n.why)
		}
		return fmt.Errorf("want a whole number from %d to %d", n.lo, n.hi)
	}
	n.set(p, i)
	return nil
}

func storeTypeProperty(set func(p *Properties, v string)) property {
	return func(p *Properties, v string) error {
		set(p, v)
		return oneOf(strings.ToUpper(v), "PEM", "JKS", "PKCS12")
	}
}

// oneOf checks that v is one of valid.
func oneOf(v string, valid ...string) error {
	if slices.Contains(valid, v) {
		return nil
	}
	return errors.New("valid: " + strings.Join(valid, ", "))
}

const javaOnly = "is a Java client option with no equivalent in ingest's Kafka client (franz-go); remove it"

// unsupported are Java producer configs that have no meaning for this sink, with the
// reason and the fix. A key ending in '.' stands for every option it starts.
var unsupported = map[string]string{
	"key.serializer":                     "is not used: the sink writes keys as JSON bytes itself; remove it",
	"value.serializer":                   "is not used: the sink writes values as JSON bytes itself; remove it",
	"partitioner.class":                  "is not used: records are partitioned by murmur2 of the key, as the Java client's default; remove it",
	"partitioner.":                       "is not used: every record is partitioned by murmur2 of its key; remove it",
	"transactional.id":                   "is set by ingest from sink.transactional-id-prefix and pipeline.name; remove it",
	"max.block.ms":                       "has no equivalent: the sink blocks the source while the buffer is full, without a limit; remove it",
	"interceptor.classes":                "is not supported: Java classes cannot run here; remove it",
	"metric.reporters":                   "is not supported: Java classes cannot run here; see docs/metrics.md for ingest's metrics",
	"metrics.":                           javaOnly,
	"auto.include.jmx.reporter":          javaOnly,
	"security.providers":                 "is not supported: Java classes cannot run here; remove it",
	"sasl.login.":                        javaOnly,
	"sasl.client.callback.handler.class": "is not supported: Java classes cannot run here; remove it",
	"sasl.kerberos.":                     "is not supported: ingest has no Kerberos (GSSAPI); use PLAIN or SCRAM",
	"sasl.oauthbearer.":                  "is not supported yet: use PLAIN or SCRAM",
	"ssl.keymanager.algorithm":           "has no equivalent: Go's TLS has no Java key managers; remove it",
	"ssl.trustmanager.algorithm":         "has no equivalent: Go's TLS has no Java trust managers; remove it",
	"ssl.secure.random.implementation":   "has no equivalent: Go's TLS uses crypto/rand; remove it",
	"ssl.cipher.suites":                  "is not supported yet: Go chooses the TLS cipher suites; remove it",
	"ssl.provider":                       "has no equivalent: Go's TLS has no Java providers; remove it",
	"ssl.engine.factory.class":           javaOnly,
	"reconnect.backoff.ms":               "has no equivalent: franz-go has no separate reconnect backoff; use retry.backoff.ms",
	"reconnect.backoff.max.ms":           "has no equivalent: franz-go has no separate reconnect backoff; use retry.backoff.max.ms",
	"send.buffer.bytes":                  "has no equivalent: the operating system sizes socket buffers; remove it",
	"receive.buffer.bytes":               "has no equivalent: the operating system sizes socket buffers; remove it",
	"client.dns.lookup":                  "has no equivalent: Go's resolver decides; remove it",
	"compression.gzip.level":             "is not supported: franz-go uses its codecs' default levels; remove it",
	"compression.lz4.level":              "is not supported: franz-go uses its codecs' default levels; remove it",
	"compression.zstd.level":             "is not supported: franz-go uses its codecs' default levels; remove it",
	"enable.metrics.push":                "is not supported: client metrics are not pushed; remove it",
	// batch.size is Java's per-partition batch target. franz-go has no target separate from
	// its per-batch cap, which also caps single records, so batch.size must not become that
	// cap (records above 16 KiB would fail).
	"batch.size": "has no equivalent: batches are bounded by linger.ms and max.request.size; remove it",
}

// unsupportedReason returns why key is refused, or "".
func unsupportedReason(key string) string {
	if r, ok := unsupported[key]; ok {
		return r
	}
	for k, r := range unsupported {
		if strings.HasSuffix(k, ".") && strings.HasPrefix(key, k) {
			return r
		}
	}
	return ""
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

// PropertyError is a problem with the properties.* options, reported at the option whose
// change fixes it. [ParseProperties] joins one per problem; the pipeline loader places each
// at its option's file position.
type PropertyError struct {
	// Key is the option without the "properties." prefix; "" for a problem of the options
	// as a whole, whose Reason names the options itself.
	Key string
	// Kind says what is wrong: the option's name, its value, or its combination with others.
	Kind PropertyProblem
	// Value is the refused value of a PropertyValue problem; "" for a secret option
	// ([IsSecretProperty]), whose value is never shown.
	Value string
	// Reason says why, and what to do, without the value.
	Reason string
}

// PropertyProblem is the kind of a [PropertyError].
type PropertyProblem uint8

// The kinds of property problems.
const (
	// PropertyUnknown: Key is no producer option this sink knows.
	PropertyUnknown PropertyProblem = iota
	// PropertyUnsupported: Key is a Java producer option with no meaning here; Reason
	// continues the option's name ("is not supported: ...").
	PropertyUnsupported
	// PropertyValue: Key's value is refused.
	PropertyValue
	// PropertyCombination: Key does not fit the other options.
	PropertyCombination
)

func (e *PropertyError) Error() string {
	switch {
	case e.Kind == PropertyUnknown:
		return fmt.Sprintf("properties.%s: unknown Kafka producer option; supported: %s", e.Key, supportedList())
	case e.Kind == PropertyUnsupported:
		return fmt.Sprintf("properties.%s %s", e.Key, e.Reason)
	case e.Kind == PropertyValue && e.Value == "" && IsSecretProperty(e.Key):
		return fmt.Sprintf("properties.%s: invalid value: %s", e.Key, e.Reason)
	case e.Kind == PropertyValue:
		return fmt.Sprintf("properties.%s: invalid value %q: %s", e.Key, e.Value, e.Reason)
	case e.Key == "":
		return e.Reason // it names the options itself
	}
	return fmt.Sprintf("properties.%s: %s", e.Key, e.Reason)
}

// CheckPropertyName returns a *[PropertyError] when key (without the prefix) is not a
// producer option the sink supports, and nil when it is.
func CheckPropertyName(key string) error {
	if reason := unsupportedReason(key); reason != "" {
		return &PropertyError{Key: key, Kind: PropertyUnsupported, Reason: reason}
	}
	if _, ok := properties[key]; ok {
		return nil
	}
	if _, ok := numbers[key]; ok {
		return nil
	}
	return &PropertyError{Key: key, Kind: PropertyUnknown}
}

// ParseProperties parses the properties.* options (keys without the prefix). Every
// option must be one this sink supports, with a value it accepts, and the options must fit
// together and pass franz-go's own validation (kgo.ValidateOpts). The error joins one
// *[PropertyError] per problem; it never contains the value of a secret option (see
// [IsSecretProperty]). bootstrap.servers is required.
func ParseProperties(props map[string]string) (*Properties, error) {
	return parseProperties(props, false)
}

// ParsePropertiesOffline is [ParseProperties] without reading the files the options name
// (TLS trust and key stores): the check of ingest validate and plan, which may run away from
// the machine that holds the stores. The result has no TLS configuration: it must not be
// used to connect.
func ParsePropertiesOffline(props map[string]string) (*Properties, error) {
	return parseProperties(props, true)
}

// CheckProperties checks the properties.* options as [ParsePropertiesOffline] does.
func CheckProperties(props map[string]string) error {
	_, err := parseProperties(props, true)
	return err
}

func parseProperties(props map[string]string, offline bool) (*Properties, error) {
	p := &Properties{MaxRequestSize: DefaultMaxRequestSize, offline: offline, given: props}
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
		return nil, err
	}
	return p, nil
}

func (p *Properties) set(k, v string) error {
	if err := CheckPropertyName(k); err != nil {
		return err
	}
	v = strings.TrimSpace(v)
	var err error
	if n, ok := numbers[k]; ok {
		err = n.parse(p, v)
	} else {
		err = properties[k](p, v)
	}
	if err == nil {
		return nil
	}
	e := &PropertyError{Key: k, Kind: PropertyValue, Value: v, Reason: err.Error()}
	if IsSecretProperty(k) {
		e.Value = ""
	}
	return e
}

func supportedList() string { return strings.Join(PropertyNames(), ", ") }

// PropertyNames returns the properties.* options the sink supports, without the prefix,
// sorted.
func PropertyNames() []string {
	return slices.Sorted(func(yield func(string) bool) {
		for k := range properties {
			if !yield(k) {
				return
			}
		}
		for k := range numbers {
			if !yield(k) {
				return
			}
		}
	})
}

// UnsupportedPropertyNames returns the Java producer configs the sink refuses as having no
// meaning here, sorted; a name ending in '.' stands for every option it starts.
func UnsupportedPropertyNames() []string { return slices.Sorted(maps.Keys(unsupported)) }

// DefaultBufferMemory is buffer.memory when the pipeline does not set it: Java's default.
const DefaultBufferMemory = 32 << 20

// finish checks the options against each other and builds TLS, SASL and the options
// that depend on more than one property.
func (p *Properties) finish() error {
	if len(p.Brokers) == 0 {
		return &PropertyError{Key: "bootstrap.servers", Kind: PropertyCombination, Reason: "required: the Kafka brokers, host:port,..."}
	}
	if err := p.security(); err != nil {
		return err
	}
	if p.Acks != AcksUnset && p.Acks != AcksAll && p.Idempotence != nil && *p.Idempotence {
		return p.combination("enable.idempotence", "true needs acks=all: the idempotent producer needs every in-sync replica to acknowledge")
	}
	if p.inflight > 5 && (p.Idempotence == nil || *p.Idempotence) && (p.Acks == AcksUnset || p.Acks == AcksAll) {
		return p.combination("max.in.flight.requests.per.connection", "at most 5 with an idempotent producer (the default; enable.idempotence=false or acks 1 or 0 turn it off)")
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
	// The client's own validation, which apply meets in kgo.NewClient: validate and plan must
	// refuse what it refuses. The bounds of numbers are meant to make this unreachable.
	if err := kgo.ValidateOpts(append(p.ClientOpts(), p.producerOpts()...)...); err != nil {
		return &PropertyError{Kind: PropertyCombination, Reason: "properties.*: the Kafka client refuses these options: " + err.Error()}
	}
	return nil
}

// combination returns a PropertyCombination error at key.
func (p *Properties) combination(key, reason string) error {
	return &PropertyError{Key: key, Kind: PropertyCombination, Reason: reason}
}

// firstGiven returns the first given option, in name order, that starts with prefix.
func (p *Properties) firstGiven(prefix string) string {
	for _, k := range slices.Sorted(maps.Keys(p.given)) {
		if strings.HasPrefix(k, prefix) {
			return k
		}
	}
	return ""
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
	}
	if !useTLS && p.tls.any() {
		return p.combination(p.firstGiven("ssl."), fmt.Sprintf("ssl.* options are set, but security.protocol is %s; set it to SSL or SASL_SSL, or remove the ssl.* options", p.protocolName()))
	}
	if !useSASL && p.sasl != (struct{ mechanism, jaas, user, pass string }{}) {
		return p.combination(p.firstGiven("sasl."), fmt.Sprintf("sasl.* options are set, but security.protocol is %s; set it to SASL_PLAINTEXT or SASL_SSL, or remove the sasl.* options", p.protocolName()))
	}
	if useTLS {
		if err := p.tls.versions(&tls.Config{}); err != nil {
			return p.combination("ssl.protocol", err.Error())
		}
	}
	if useTLS && !p.offline {
		cfg, err := p.tls.tlsConfig()
		if err != nil {
			return &PropertyError{Kind: PropertyCombination, Reason: err.Error()}
		}
		p.TLS = cfg
		p.add(kgo.DialTLSConfig(cfg))
	}
	if useSASL {
		m, err := saslMechanism(p.sasl.mechanism, p.sasl.jaas, p.sasl.user, p.sasl.pass)
		if err != nil {
			key := "sasl.mechanism"
			switch {
			case p.sasl.jaas != "":
				key = "sasl.jaas.config"
			case p.sasl.mechanism == "":
				key = "security.protocol"
			}
			return p.combination(key, err.Error())
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

// producerOpts returns the acks and idempotence options as the Java client reads the
// properties: acks=all and idempotent by default; acks 1 or 0 without an explicit
// enable.idempotence turn idempotence off; enable.idempotence=false keeps acks=all unless
// acks says otherwise; max.in.flight.requests.per.connection applies without idempotence.
func (p *Properties) producerOpts() []kgo.Opt {
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
	return false, errors.New("valid: true, false")
}
