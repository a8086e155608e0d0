// Package tlsconf holds the TLS setting both connections of ingest need and Go does not offer
// directly: verifying a server's certificate chain without its host name (Java's
// ssl.endpoint.identification.algorithm="" for Kafka, sslMode=VERIFY_CA for MySQL).
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// VerifyChainOnly makes cfg verify the server's certificate chain against cfg.RootCAs (nil:
// the system roots) but not its host name. InsecureSkipVerify only turns off Go's built-in
// check, which verifies both; the VerifyConnection callback then does the chain part, so an
// untrusted certificate is still refused. peer names the server in errors ("broker", "MySQL
// server").
func VerifyChainOnly(cfg *tls.Config, peer string) {
	roots := cfg.RootCAs
	cfg.InsecureSkipVerify = true
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: the " + peer + " sent no certificate")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
			Roots:         roots,
			Intermediates: inter,
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		})
		if err != nil {
			return fmt.Errorf("tls: verify %s certificate: %w", peer, err)
		}
		return nil
	}
}
