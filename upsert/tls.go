package upsert

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ingestkit/ingest/internal/tlsconf"
)

// tlsProps are the ssl.* properties.
type tlsProps struct {
	trustLocation, trustType, trustPassword, trustPEM string
	keyLocation, keyType, keyPassword, keyKeyPassword string
	keyPEMChain, keyPEMKey                            string
	endpointAlgorithm                                 string
	endpointSet                                       bool
	protocols                                         []string
	protocol                                          string // ssl.protocol
}

// any reports whether any ssl.* option is set.
func (tp *tlsProps) any() bool {
	return tp.endpointSet || len(tp.protocols) > 0 || tp.protocol != "" || tp.trustLocation != "" || tp.trustType != "" ||
		tp.trustPassword != "" || tp.trustPEM != "" || tp.keyLocation != "" || tp.keyType != "" ||
		tp.keyPassword != "" || tp.keyKeyPassword != "" || tp.keyPEMChain != "" || tp.keyPEMKey != ""
}

// tlsConfig builds the TLS configuration of a broker connection from the ssl.* properties.
func (tp *tlsProps) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if err := tp.versions(cfg); err != nil {
		return nil, err
	}
	roots, err := tp.rootCAs()
	if err != nil {
		return nil, err
	}
	cfg.RootCAs = roots
	cert, err := tp.clientCert()
	if err != nil {
		return nil, err
	}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	switch tp.endpointAlgorithm {
	case "https", "HTTPS":
	case "":
		if !tp.endpointSet {
			break // Java's default is https
		}
		tlsconf.VerifyChainOnly(cfg, "broker")
	default:
		return nil, fmt.Errorf("properties.ssl.endpoint.identification.algorithm: unsupported value %q; use https (the default) or an empty value", tp.endpointAlgorithm)
	}
	return cfg, nil
}

var tlsVersions = map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}

// versions sets the TLS version range: ssl.enabled.protocols (TLSv1.2 and TLSv1.3 by
// default), capped at TLS 1.2 by ssl.protocol TLSv1.2 as Java's SSLContext of that protocol
// is.
func (tp *tlsProps) versions(cfg *tls.Config) error {
	lo, hi := uint16(tls.VersionTLS12), uint16(tls.VersionTLS13)
	if len(tp.protocols) > 0 {
		lo, hi = tls.VersionTLS13, tls.VersionTLS12
		for _, p := range tp.protocols {
			v, ok := tlsVersions[strings.TrimSpace(p)]
			if !ok {
				return fmt.Errorf("properties.ssl.enabled.protocols: unsupported protocol %q; supported: TLSv1.2, TLSv1.3", p)
			}
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if tp.protocol == "TLSv1.2" {
		if lo > tls.VersionTLS12 {
			return errors.New("TLSv1.2 allows none of the versions of ssl.enabled.protocols (TLSv1.3); use ssl.protocol TLSv1.3 or enable TLSv1.2")
		}
		hi = tls.VersionTLS12
	}
	cfg.MinVersion, cfg.MaxVersion = lo, hi
	return nil
}

// rootCAs loads the trust store, or returns nil (the system roots) when none is set.
func (tp *tlsProps) rootCAs() (*x509.CertPool, error) {
	if tp.trustPEM != "" {
		if tp.trustLocation != "" {
			return nil, errors.New("properties.ssl.truststore.certificates: give either it or ssl.truststore.location, not both")
		}
		certs, err := tlsconf.PEMCerts([]byte(tp.trustPEM))
		if err != nil {
			return nil, fmt.Errorf("properties.ssl.truststore.certificates: %w", err)
		}
		return tlsconf.Pool(certs), nil
	}
	if tp.trustLocation == "" {
		return nil, nil
	}
	data, err := os.ReadFile(tp.trustLocation)
	if err != nil {
		return nil, fmt.Errorf("properties.ssl.truststore.location: %w", err)
	}
	certs, err := tlsconf.TrustStore(data, storeType(tp.trustType), tp.trustPassword)
	if err != nil {
		return nil, fmt.Errorf("properties.ssl.truststore.location %s: %w", tp.trustLocation, err)
	}
	return tlsconf.Pool(certs), nil
}

// storeType returns the store type, upper-cased, with Java's default JKS.
func storeType(t string) string {
	if t == "" {
		return "JKS"
	}
	return strings.ToUpper(t)
}

// clientCert loads the key store (mutual TLS), or returns nil when none is set.
func (tp *tlsProps) clientCert() (*tls.Certificate, error) {
	if tp.keyPEMChain != "" || tp.keyPEMKey != "" {
		if tp.keyLocation != "" {
			return nil, errors.New("properties.ssl.keystore.key: give either it with ssl.keystore.certificate.chain, or ssl.keystore.location")
		}
		c, err := tls.X509KeyPair([]byte(tp.keyPEMChain), []byte(tp.keyPEMKey))
		if err != nil {
			return nil, errors.New("properties.ssl.keystore.key: cannot pair the key with ssl.keystore.certificate.chain (is the key an unencrypted PEM?)")
		}
		return &c, nil
	}
	if tp.keyLocation == "" {
		return nil, nil
	}
	data, err := os.ReadFile(tp.keyLocation)
	if err != nil {
		return nil, fmt.Errorf("properties.ssl.keystore.location: %w", err)
	}
	keyPass := tp.keyKeyPassword
	if keyPass == "" {
		keyPass = tp.keyPassword
	}
	c, err := tlsconf.KeyStore(data, storeType(tp.keyType), tp.keyPassword, keyPass)
	if err != nil {
		return nil, fmt.Errorf("properties.ssl.keystore.location %s: %w", tp.keyLocation, err)
	}
	return c, nil
}
