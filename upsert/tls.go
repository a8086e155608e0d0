package upsert

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"

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
		certs, err := pemCerts([]byte(tp.trustPEM))
		if err != nil {
			return nil, fmt.Errorf("properties.ssl.truststore.certificates: %w", err)
		}
		return pool(certs), nil
	}
	if tp.trustLocation == "" {
		return nil, nil
	}
	data, err := os.ReadFile(tp.trustLocation)
	if err != nil {
		return nil, fmt.Errorf("properties.ssl.truststore.location: %w", err)
	}
	certs, err := trustStore(data, storeType(tp.trustType), tp.trustPassword)
	if err != nil {
		return nil, fmt.Errorf("properties.ssl.truststore.location %s: %w", tp.trustLocation, err)
	}
	return pool(certs), nil
}

// storeType returns the store type, upper-cased, with Java's default JKS.
func storeType(t string) string {
	if t == "" {
		return "JKS"
	}
	return strings.ToUpper(t)
}

func pool(certs []*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}

// trustStore reads the trusted certificates of a PEM, JKS or PKCS12 store.
func trustStore(data []byte, typ, password string) ([]*x509.Certificate, error) {
	switch typ {
	case "PEM":
		return pemCerts(data)
	case "JKS":
		ks, err := loadJKS(data, password)
		if err != nil {
			return nil, err
		}
		var certs []*x509.Certificate
		for _, alias := range ks.Aliases() {
			if !ks.IsTrustedCertificateEntry(alias) {
				continue
			}
			e, err := ks.GetTrustedCertificateEntry(alias)
			if err != nil {
				return nil, fmt.Errorf("entry %s: %w", alias, err)
			}
			c, err := x509.ParseCertificate(e.Certificate.Content)
			if err != nil {
				return nil, fmt.Errorf("entry %s: %w", alias, err)
			}
			certs = append(certs, c)
		}
		return nonEmpty(certs)
	case "PKCS12":
		certs, err := pkcs12.DecodeTrustStore(data, password)
		if err != nil {
			return nil, fmt.Errorf("read PKCS12 trust store (wrong password?): %w", err)
		}
		return nonEmpty(certs)
	}
	return nil, fmt.Errorf("unsupported store type %q; supported: PEM, JKS, PKCS12", typ)
}

func nonEmpty(certs []*x509.Certificate) ([]*x509.Certificate, error) {
	if len(certs) == 0 {
		return nil, errors.New("no trusted certificate in the store")
	}
	return certs, nil
}

func loadJKS(data []byte, password string) (keystore.KeyStore, error) {
	ks := keystore.New(keystore.WithMinPasswordLen(0))
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		return ks, fmt.Errorf("read JKS store (wrong password?): %w", err)
	}
	return ks, nil
}

func pemCerts(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM CERTIFICATE block")
	}
	return certs, nil
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
	c, err := keyStore(data, storeType(tp.keyType), tp.keyPassword, keyPass)
	if err != nil {
		return nil, fmt.Errorf("properties.ssl.keystore.location %s: %w", tp.keyLocation, err)
	}
	return c, nil
}

// keyStore reads the private key and its certificate chain from a PEM, JKS or PKCS12 store.
func keyStore(data []byte, typ, password, keyPassword string) (*tls.Certificate, error) {
	switch typ {
	case "PEM":
		c, err := tls.X509KeyPair(data, data)
		if err != nil {
			return nil, errors.New("read PEM key store: want an unencrypted private key and its certificate chain in the file")
		}
		return &c, nil
	case "JKS":
		ks, err := loadJKS(data, password)
		if err != nil {
			return nil, err
		}
		for _, alias := range ks.Aliases() {
			if ks.IsPrivateKeyEntry(alias) {
				return jksKeyEntry(ks, alias, keyPassword)
			}
		}
		return nil, errors.New("no private key entry in the JKS store")
	case "PKCS12":
		key, leaf, chain, err := pkcs12.DecodeChain(data, password)
		if err != nil {
			return nil, fmt.Errorf("read PKCS12 key store (wrong password?): %w", err)
		}
		c := &tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
		for _, ca := range chain {
			c.Certificate = append(c.Certificate, ca.Raw)
		}
		return c, nil
	}
	return nil, fmt.Errorf("unsupported store type %q; supported: PEM, JKS, PKCS12", typ)
}

func jksKeyEntry(ks keystore.KeyStore, alias, keyPassword string) (*tls.Certificate, error) {
	e, err := ks.GetPrivateKeyEntry(alias, []byte(keyPassword))
	if err != nil {
		return nil, fmt.Errorf("entry %s: read the private key (wrong ssl.key.password?): %w", alias, err)
	}
	key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("entry %s: %w", alias, err)
	}
	c := &tls.Certificate{PrivateKey: key}
	for _, cert := range e.CertificateChain {
		c.Certificate = append(c.Certificate, cert.Content)
	}
	if len(c.Certificate) == 0 {
		return nil, fmt.Errorf("entry %s: no certificate chain", alias)
	}
	return c, nil
}
