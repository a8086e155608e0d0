package upsert

import (
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The SASL mechanisms the sink supports (sasl.mechanism).
var saslMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// jaasConfig is a parsed sasl.jaas.config: one login module with its options.
type jaasConfig struct {
	module  string
	options map[string]string
}

// The login modules of the Java client (Flink's shaded copies end with the same names).
const (
	plainModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

// saslMechanism builds the SASL mechanism from sasl.mechanism and either sasl.jaas.config
// or the librdkafka-style sasl.username / sasl.password (which Aliyun's examples use).
// Errors never quote the credentials.
func saslMechanism(mechanism, jaas, user, pass string) (sasl.Mechanism, error) {
	if mechanism == "" {
		return nil, errors.New("sasl.mechanism is not set; the Java default GSSAPI (Kerberos) is not supported, use one of " +
			strings.Join(saslMechanisms, ", "))
	}
	if jaas != "" {
		if user != "" || pass != "" {
			return nil, errors.New("give either sasl.jaas.config or sasl.username and sasl.password, not both")
		}
		cfg, err := parseJAAS(jaas)
		if err != nil {
			return nil, err
		}
		if user, pass, err = cfg.credentials(mechanism); err != nil {
			return nil, err
		}
	}
	if user == "" {
		return nil, fmt.Errorf("sasl.mechanism %s needs a username: set sasl.jaas.config (or sasl.username and sasl.password)", mechanism)
	}
	switch mechanism {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("sasl.mechanism: unsupported value %q; supported: %s", mechanism, strings.Join(saslMechanisms, ", "))
}

// credentials checks that the login module fits the mechanism and returns its username and
// password.
func (c *jaasConfig) credentials(mechanism string) (user, pass string, err error) {
	want := plainModule
	if strings.HasPrefix(mechanism, "SCRAM-") {
		want = scramModule
	}
	if !strings.HasSuffix(c.module, want) {
		return "", "", fmt.Errorf("login module %s does not fit sasl.mechanism %s (want %s)", c.module, mechanism, want)
	}
	for k := range c.options {
		switch k {
		case "username", "password":
		default:
			return "", "", fmt.Errorf("unsupported login module option %q (supported: username, password)", k)
		}
	}
	user, okU := c.options["username"]
	pass, okP := c.options["password"]
	if !okU || !okP {
		return "", "", errors.New("the login module needs both username and password")
	}
	return user, pass, nil
}

// parseJAAS parses a JAAS configuration holding one login module, as the Java client
// accepts it in sasl.jaas.config:
//
//	<module class> <required|requisite|sufficient|optional> [name=value ...];
//
// Values are bare words or double-quoted strings in which a backslash escapes the next
// character. Error messages name positions, never values, since values are secrets.
func parseJAAS(s string) (*jaasConfig, error) {
	p := &jaasParser{s: s}
	module := p.word()
	if module == "" {
		return nil, errors.New("missing the login module class")
	}
	switch flag := p.word(); flag {
	case "required", "requisite", "sufficient", "optional":
	case "":
		return nil, fmt.Errorf("missing the control flag after %s", module)
	default:
		return nil, fmt.Errorf("invalid control flag %q after %s", flag, module)
	}
	cfg := &jaasConfig{module: module, options: map[string]string{}}
	for {
		p.space()
		if p.done() {
			return nil, errors.New("missing the closing ';'")
		}
		if p.peek() == ';' {
			p.i++
			break
		}
		name := p.name()
		if name == "" || !p.eat('=') {
			return nil, fmt.Errorf("expected name=value at offset %d", p.i)
		}
		value, err := p.value()
		if err != nil {
			return nil, fmt.Errorf("option %s: %w", name, err)
		}
		if _, dup := cfg.options[name]; dup {
			return nil, fmt.Errorf("option %s is given twice", name)
		}
		cfg.options[name] = value
	}
	if p.space(); !p.done() {
		return nil, errors.New("more than one login module; the sink uses exactly one")
	}
	return cfg, nil
}

type jaasParser struct {
	s string
	i int
}

func (p *jaasParser) done() bool { return p.i >= len(p.s) }
func (p *jaasParser) peek() byte { return p.s[p.i] }

func (p *jaasParser) space() {
	for !p.done() && strings.IndexByte(" \t\r\n", p.peek()) >= 0 {
		p.i++
	}
}

func (p *jaasParser) eat(c byte) bool {
	p.space()
	if !p.done() && p.peek() == c {
		p.i++
		return true
	}
	return false
}

// word reads a run of characters up to space, '=', ';' or '"'.
func (p *jaasParser) word() string {
	p.space()
	start := p.i
	for !p.done() && strings.IndexByte(" \t\r\n=;\"", p.peek()) < 0 {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *jaasParser) name() string { return p.word() }

// value reads a quoted string with backslash escapes, or a bare word.
func (p *jaasParser) value() (string, error) {
	p.space()
	if p.done() {
		return "", errors.New("missing value")
	}
	if p.peek() != '"' {
		v := p.word()
		if v == "" {
			return "", errors.New("missing value")
		}
		return v, nil
	}
	p.i++
	var b strings.Builder
	for !p.done() {
		c := p.peek()
		p.i++
		switch c {
		case '"':
			return b.String(), nil
		case '\\':
			if p.done() {
				return "", errors.New("unterminated quoted value")
			}
			b.WriteByte(p.peek())
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("unterminated quoted value")
}
