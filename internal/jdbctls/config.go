package jdbctls

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ingestkit/ingest/internal/tlsconf"
)

// Settings are the TLS settings of the MySQL connections.
type Settings struct {
	// Config is nil when TLS is off (sslMode DISABLED).
	Config *tls.Config
	// Mode is the sslMode in effect (after mapping the legacy properties).
	Mode Mode
}

// Unverified reports whether the connections use TLS without checking the server's
// certificate (REQUIRED, PREFERRED, or verifyServerCertificate=false): encrypted, but open to
// a man in the middle.
func (s Settings) Unverified() bool { return s.Config != nil && !s.Mode.Verifies() }

// New checks props (keys without the jdbc.properties. prefix) as validate does and builds the
// TLS configuration for a server reached as host, reading the trust and key stores. Errors
// name the property.
func New(props map[string]string, host string) (Settings, error) {
	for k, v := range props {
		if err := CheckKey(k); err != nil {
			return Settings{}, fmt.Errorf("source: %w", err)
		}
		if err := CheckValue(k, v); err != nil {
			return Settings{}, fmt.Errorf("source: jdbc.properties.%s: %w", k, err)
		}
	}
	if ps := Check(props); len(ps) > 0 {
		return Settings{}, fmt.Errorf("source: jdbc.properties.%s %s", ps[0].Key, ps[0].Message)
	}
	s := Settings{Mode: ModeOf(props)}
	if s.Mode == Disabled {
		return s, nil
	}
	cfg, err := build(props, host, s.Mode)
	if err != nil {
		return Settings{}, fmt.Errorf("source: %w", err)
	}
	s.Config = cfg
	return s, nil
}

func build(props map[string]string, host string, mode Mode) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if v, ok := props["tlsVersions"]; ok {
		cfg.MinVersion, cfg.MaxVersion, _ = versions(v)
	} else if v, ok := props["enabledTLSProtocols"]; ok {
		cfg.MinVersion, cfg.MaxVersion, _ = versions(v)
	}
	cert, err := clientCert(props)
	if err != nil {
		return nil, err
	}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	if !mode.Verifies() {
		// Connector/J reads no trust store for these modes; Check refuses one.
		cfg.InsecureSkipVerify = true
		return cfg, nil
	}
	roots, err := rootCAs(props)
	if err != nil {
		return nil, err
	}
	cfg.RootCAs = roots
	if mode == VerifyCA {
		tlsconf.VerifyChainOnly(cfg, "MySQL server")
	}
	return cfg, nil
}

var tlsVersions = map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}

// versions returns the lowest and highest of a comma-separated list of TLS versions.
func versions(list string) (lo, hi uint16, err error) {
	lo, hi = tls.VersionTLS13, tls.VersionTLS12
	for _, p := range strings.Split(list, ",") {
		v, ok := tlsVersions[strings.TrimSpace(p)]
		if !ok {
			return 0, 0, fmt.Errorf("unsupported TLS version %q; supported: TLSv1.2, TLSv1.3", strings.TrimSpace(p))
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi, nil
}

// rootCAs returns the CAs that verify the server: the trust store, or the system's when none
// is given and fallbackToSystemTrustStore is not false (Connector/J's rule).
func rootCAs(props map[string]string) (*x509.CertPool, error) {
	key := "trustCertificateKeyStoreUrl"
	typ := props["trustCertificateKeyStoreType"]
	if _, ok := props["serverSslCert"]; ok {
		key, typ = "serverSslCert", "PEM"
	}
	url, ok := props[key]
	if !ok {
		if b, set := props["fallbackToSystemTrustStore"]; set {
			if fallback, _ := parseBool(b); !fallback {
				return nil, errors.New("jdbc.properties.fallbackToSystemTrustStore is false and no trustCertificateKeyStoreUrl is given: no CA to verify the server's certificate with")
			}
		}
		return nil, nil // the system's roots
	}
	data, file, err := readStore(url)
	if err != nil {
		return nil, fmt.Errorf("jdbc.properties.%s: %w", key, err)
	}
	certs, err := tlsconf.TrustStore(data, detectType(typ, data), props["trustCertificateKeyStorePassword"])
	if err != nil {
		return nil, fmt.Errorf("jdbc.properties.%s %s: %w", key, file, err)
	}
	return tlsconf.Pool(certs), nil
}

// clientCert returns the client certificate of the key store, nil when none is given.
func clientCert(props map[string]string) (*tls.Certificate, error) {
	url, ok := props["clientCertificateKeyStoreUrl"]
	if !ok {
		return nil, nil // ingest has no system-wide key store to fall back to
	}
	data, file, err := readStore(url)
	if err != nil {
		return nil, fmt.Errorf("jdbc.properties.clientCertificateKeyStoreUrl: %w", err)
	}
	pw := props["clientCertificateKeyStorePassword"]
	c, err := tlsconf.KeyStore(data, detectType(props["clientCertificateKeyStoreType"], data), pw, pw)
	if err != nil {
		return nil, fmt.Errorf("jdbc.properties.clientCertificateKeyStoreUrl %s: %w", file, err)
	}
	return c, nil
}

func readStore(url string) (data []byte, file string, err error) {
	file, err = path(url)
	if err != nil {
		return nil, "", err
	}
	data, err = os.ReadFile(file)
	return data, file, err
}

// jksMagic starts every JKS file.
var jksMagic = []byte{0xfe, 0xed, 0xfe, 0xed}

// detectType returns the store type: the one given (upper-cased), or else what the file
// holds. Connector/J's default is JKS, whose Java reader also reads PKCS12 files; ingest
// reads PEM files too when no type is given.
func detectType(typ string, data []byte) string {
	switch {
	case typ != "":
		return strings.ToUpper(strings.TrimSpace(typ))
	case bytes.Contains(data, []byte("-----BEGIN ")):
		return "PEM"
	case bytes.HasPrefix(data, jksMagic):
		return "JKS"
	}
	return "PKCS12"
}
