package tlsconf

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// This file reads the trust stores and key stores of Java's TLS options (Kafka's ssl.* and
// MySQL Connector/J's trustCertificateKeyStore* / clientCertificateKeyStore*): PEM, JKS and
// PKCS12. typ is upper case.

func Pool(certs []*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}

// TrustStore reads the trusted certificates of a PEM, JKS or PKCS12 store.
func TrustStore(data []byte, typ, password string) ([]*x509.Certificate, error) {
	switch typ {
	case "PEM":
		return PEMCerts(data)
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

func PEMCerts(data []byte) ([]*x509.Certificate, error) {
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

// KeyStore reads the private key and its certificate chain from a PEM, JKS or PKCS12 store.
func KeyStore(data []byte, typ, password, keyPassword string) (*tls.Certificate, error) {
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
		return nil, fmt.Errorf("entry %s: read the private key (wrong key password?): %w", alias, err)
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
