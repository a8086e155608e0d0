package cdc

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/ingestkit/ingest/internal/tlsconf"
)

// JDBC property names understood by TLSFromJDBC (MySQL Connector/J and MariaDB Connector/J
// spellings). The rest of jdbc.properties.* has no meaning for this source.
var jdbcTLSKeys = map[string]bool{
	"useSSL": true, "requireSSL": true, "verifyServerCertificate": true, "sslMode": true,
	"trustCertificateKeyStoreUrl": true, "serverSslCert": true,
	"trustCertificateKeyStorePassword": true, "trustCertificateKeyStoreType": true, // PEM needs neither
	"clientCertificateKeyStoreUrl": false, // JKS/PKCS12 client stores are not read; see the error
}

// jdbcAsIs are JDBC properties (Connector/J spellings) whose effect ingest always has: the
// values that ask for it, and why. Any other value is refused (CheckJDBCProperty).
var jdbcAsIs = map[string]struct {
	values []string // accepted values, compared ignoring case; nil: any
	why    string
}{
	"characterEncoding":       {[]string{"UTF-8", "utf8", "utf8mb4"}, "ingest reads each column in its own character set and writes UTF-8"},
	"useUnicode":              {[]string{"true"}, "ingest reads each column in its own character set and writes UTF-8"},
	"zeroDateTimeBehavior":    {[]string{"CONVERT_TO_NULL", "convertToNull"}, "ingest writes zero dates as null (docs/output.md)"},
	"serverTimezone":          {nil, "ingest reads TIMESTAMP as UTC instants in both phases, whatever the server's zone"},
	"connectionTimeZone":      {nil, "ingest reads TIMESTAMP as UTC instants in both phases, whatever the server's zone"},
	"allowPublicKeyRetrieval": {[]string{"true"}, "ingest's MySQL clients ask for the server's RSA key when caching_sha2_password needs it without TLS"},
	"useInformationSchema":    {[]string{"true"}, "ingest reads table metadata from information_schema"},
}

// CheckJDBCPropertyName returns an error that says why jdbc.properties.<key> is refused, or
// nil when ingest reads the property (TLS) or already behaves as it asks.
func CheckJDBCPropertyName(key string) error {
	if _, ok := jdbcTLSKeys[key]; ok {
		return nil
	}
	if _, ok := jdbcAsIs[key]; ok {
		return nil
	}
	return fmt.Errorf("has no meaning for ingest's MySQL client; remove it (ingest reads the TLS properties %s, and accepts %s, which ask for what it does anyway)",
		strings.Join(sortedKeys(jdbcTLSKeys), ", "), strings.Join(sortedKeys(jdbcAsIs), ", "))
}

// CheckJDBCPropertyValue checks the value of a property CheckJDBCPropertyName accepts: a
// property ingest does not read must ask for what ingest does.
func CheckJDBCPropertyValue(key, value string) error {
	p, ok := jdbcAsIs[key]
	if !ok || p.values == nil {
		return nil
	}
	for _, v := range p.values {
		if strings.EqualFold(strings.TrimSpace(value), v) {
			return nil
		}
	}
	return fmt.Errorf("must be %s: %s, and cannot do otherwise", strings.Join(p.values, " or "), p.why)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TLSFromJDBC derives the TLS settings of the MySQL connection from jdbc.properties.* (keys
// without the prefix): sslMode DISABLED | PREFERRED | REQUIRED | VERIFY_CA |
// VERIFY_IDENTITY (or the older useSSL / requireSSL / verifyServerCertificate), and the CA
// as a PEM file in trustCertificateKeyStoreUrl (file: URL or path) or serverSslCert. It
// returns nil when TLS is off. PREFERRED is treated as REQUIRED without verification, since
// a silent fallback to plain text is never what a CDC pipeline wants. Unknown properties are
// returned in ignored, sorted, for a warning (the pipeline loader refuses them, with
// CheckJDBCPropertyName); those whose effect ingest always has (jdbcAsIs) are not.
func TLSFromJDBC(props map[string]string, host string) (cfg *tls.Config, ignored []string, err error) {
	for k := range props {
		if _, asIs := jdbcAsIs[k]; asIs {
			continue
		}
		if ok, known := jdbcTLSKeys[k]; !known {
			ignored = append(ignored, k)
		} else if !ok {
			return nil, nil, fmt.Errorf("source: jdbc.properties.%s: key stores are not read; give the client certificate as PEM through the connection's TLS files instead", k)
		}
	}
	sort.Strings(ignored)
	mode, err := sslMode(props)
	if err != nil || mode == "DISABLED" {
		return nil, ignored, err
	}
	cfg = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if ca := caFile(props); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, ignored, fmt.Errorf("source: jdbc.properties: read CA %s: %w", ca, err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, ignored, fmt.Errorf("source: jdbc.properties: %s holds no PEM certificate", ca)
		}
	}
	switch mode {
	case "REQUIRED", "PREFERRED":
		cfg.InsecureSkipVerify = true
	case "VERIFY_CA":
		tlsconf.VerifyChainOnly(cfg, "MySQL server")
	}
	return cfg, ignored, nil
}

func sslMode(props map[string]string) (string, error) {
	if m, ok := props["sslMode"]; ok {
		m = strings.ToUpper(strings.TrimSpace(m))
		switch m {
		case "DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY":
			return m, nil
		}
		return "", fmt.Errorf("source: jdbc.properties.sslMode: invalid value %q; valid values are DISABLED, PREFERRED, REQUIRED, VERIFY_CA and VERIFY_IDENTITY", m)
	}
	on := strings.EqualFold(props["useSSL"], "true") || strings.EqualFold(props["requireSSL"], "true")
	switch {
	case !on:
		return "DISABLED", nil
	case strings.EqualFold(props["verifyServerCertificate"], "false"):
		return "REQUIRED", nil
	}
	return "VERIFY_IDENTITY", nil
}

func caFile(props map[string]string) string {
	if v := props["serverSslCert"]; v != "" {
		return strings.TrimPrefix(v, "file:")
	}
	return strings.TrimPrefix(props["trustCertificateKeyStoreUrl"], "file:")
}
