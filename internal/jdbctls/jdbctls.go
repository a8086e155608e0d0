// Package jdbctls reads the TLS options of MySQL Connector/J, given as jdbc.properties.* of a
// mysql source, and builds from them the TLS configuration of every MySQL connection of ingest
// (the binlog stream's, the snapshot's SELECTs and its watermark binlog reads).
//
// It follows Connector/J 8.x/9.x: property names are case-sensitive (Connector/J ignores
// "sslmode"; ingest refuses it), values of sslMode and of the store types are not; sslMode
// wins over the legacy useSSL / requireSSL / verifyServerCertificate, which map onto it as
// Connector/J maps them. Every key ingest does not honour is refused (CheckKey), and so is a
// combination Connector/J would silently ignore (Check), so that no option is taken for more
// than it does.
package jdbctls

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Mode is a value of sslMode.
type Mode string

// The values of sslMode, as Connector/J defines them.
const (
	Disabled       Mode = "DISABLED"        // plain text
	Preferred      Mode = "PREFERRED"       // TLS without verification (ingest never falls back to plain text)
	Required       Mode = "REQUIRED"        // TLS without verification
	VerifyCA       Mode = "VERIFY_CA"       // TLS; the certificate chain is verified
	VerifyIdentity Mode = "VERIFY_IDENTITY" // TLS; the chain and the host name are verified
)

// Verifies reports whether m checks the server's certificate.
func (m Mode) Verifies() bool { return m == VerifyCA || m == VerifyIdentity }

// property is one jdbc.properties key ingest honours.
type property struct {
	name  string
	check func(string) error // nil: any value
}

// properties are the keys ingest honours, with Connector/J's spelling.
var properties = []property{
	{"sslMode", checkMode},
	{"useSSL", checkBool},
	{"requireSSL", checkBool},
	{"verifyServerCertificate", checkBool},
	{"trustCertificateKeyStoreUrl", checkURL},
	{"trustCertificateKeyStoreType", checkStoreType},
	{"trustCertificateKeyStorePassword", nil},
	{"fallbackToSystemTrustStore", checkBool},
	{"clientCertificateKeyStoreUrl", checkURL},
	{"clientCertificateKeyStoreType", checkStoreType},
	{"clientCertificateKeyStorePassword", nil},
	{"fallbackToSystemKeyStore", checkBool},
	{"tlsVersions", checkVersions},
	{"enabledTLSProtocols", checkVersions}, // Connector/J's older name of tlsVersions
	{"serverSslCert", checkURL},            // MariaDB Connector/J's name: a PEM CA file
	// Accepted because ingest always does what they ask, with these values: it reads text in
	// each column's own character set and writes UTF-8 (utf8mb4); writes zero dates as null
	// (docs/output.md); reads TIMESTAMP as UTC instants in both phases, whatever the server's
	// zone (so any serverTimezone is what a correct one asks); lets its MySQL clients fetch
	// the server's RSA key when caching_sha2_password needs it without TLS (go-mysql and
	// go-sql-driver both always do); and reads table metadata from information_schema.
	{"characterEncoding", checkUTF8},
	{"useUnicode", checkTrue("ingest always reads text as Unicode")},
	{"zeroDateTimeBehavior", checkZeroDates},
	{"serverTimezone", nil},
	{"connectionTimeZone", nil},
	{"allowPublicKeyRetrieval", checkTrue("ingest's MySQL clients fetch the server's RSA key when caching_sha2_password needs it without TLS")},
	{"useInformationSchema", checkTrue("ingest reads table metadata from information_schema")},
}

// refused are Connector/J keys with a reason more useful than "not honoured".
var refused = map[string]string{
	"tlsCiphersuites":        "is not supported: Go chooses the TLS cipher suites; remove it",
	"enabledSSLCipherSuites": "is not supported: Go chooses the TLS cipher suites; remove it",
	"connectTimeout":         "is not honoured: use the source option connect.timeout",
	"user":                   "is not honoured: use the source option username",
	"password":               "is not honoured: use the source option password",
}

// Names returns the keys ingest honours, sorted.
func Names() []string {
	names := make([]string, len(properties))
	for i, p := range properties {
		names[i] = p.name
	}
	sort.Strings(names)
	return names
}

func find(key string) *property {
	for i := range properties {
		if properties[i].name == key {
			return &properties[i]
		}
	}
	return nil
}

// CheckKey returns nil when ingest honours key (without the jdbc.properties. prefix), or why
// not, naming the key it likely means or the list of those it honours.
func CheckKey(key string) error {
	if find(key) != nil {
		return nil
	}
	if reason, ok := refused[key]; ok {
		return fmt.Errorf("jdbc.properties.%s %s", key, reason)
	}
	for _, p := range properties {
		if strings.EqualFold(p.name, key) {
			return fmt.Errorf("jdbc.properties.%s: property names are case-sensitive, as in Connector/J (which would ignore this one); write %s", key, p.name)
		}
	}
	return unknownKey{fmt.Errorf("jdbc.properties.%s is not honoured by ingest; the jdbc.properties it honours: %s", key, strings.Join(Names(), ", "))}
}

// unknownKey is the error of CheckKey for a key that is neither honoured nor refused with a
// reason of its own.
type unknownKey struct{ error }

// IsUnknown reports whether err, from CheckKey, is about a key ingest does not know at all
// (rather than one it refuses for a reason, or one spelt in the wrong case).
func IsUnknown(err error) bool {
	var u unknownKey
	return errors.As(err, &u)
}

// CheckValue checks the value of a key CheckKey accepts.
func CheckValue(key, value string) error {
	if p := find(key); p != nil && p.check != nil {
		return p.check(value)
	}
	return nil
}

func checkMode(s string) error {
	switch Mode(strings.ToUpper(strings.TrimSpace(s))) {
	case Disabled, Preferred, Required, VerifyCA, VerifyIdentity:
		return nil
	}
	return errors.New("want DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY")
}

// parseBool reads a boolean as Connector/J does: true, false, yes or no, in any case.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes":
		return true, nil
	case "false", "no":
		return false, nil
	}
	return false, errors.New("want true or false")
}

func checkBool(s string) error {
	_, err := parseBool(s)
	return err
}

// checkTrue accepts only true, which is what ingest does (why).
func checkTrue(why string) func(string) error {
	return func(s string) error {
		if b, err := parseBool(s); err != nil || !b {
			return errors.New("only true is honoured: " + why)
		}
		return nil
	}
}

func checkZeroDates(s string) error {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "CONVERT_TO_NULL", "CONVERTTONULL":
		return nil
	}
	return errors.New("only CONVERT_TO_NULL is honoured: ingest writes zero dates as null (docs/output.md)")
}

func checkUTF8(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "utf-8", "utf8", "utf8mb4":
		return nil
	}
	return errors.New("only UTF-8 (utf8, utf8mb4) is honoured: ingest reads each column in its own character set and writes UTF-8")
}

// path returns the file of a store URL: a file: URL or a plain path.
func path(url string) (string, error) {
	u := strings.TrimSpace(url)
	switch {
	case u == "":
		return "", errors.New("must not be empty")
	case strings.HasPrefix(u, "file://"):
		return strings.TrimPrefix(u, "file://"), nil
	case strings.HasPrefix(u, "file:"):
		return strings.TrimPrefix(u, "file:"), nil
	case strings.Contains(u, "://"):
		return "", errors.New("only file: URLs and paths are read; copy the store to a file")
	}
	return u, nil
}

func checkURL(s string) error {
	_, err := path(s)
	return err
}

func checkStoreType(s string) error {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "PEM", "JKS", "PKCS12":
		return nil
	}
	return errors.New("want PEM, JKS or PKCS12")
}

func checkVersions(s string) error {
	_, _, err := versions(s)
	return err
}

// Problem is a key whose setting contradicts the others, or that the others make useless.
type Problem struct {
	Key     string // without the jdbc.properties. prefix
	Message string
}

var legacy = []string{"useSSL", "requireSSL", "verifyServerCertificate"}

var trustKeys = []string{"trustCertificateKeyStoreUrl", "trustCertificateKeyStoreType",
	"trustCertificateKeyStorePassword", "fallbackToSystemTrustStore", "serverSslCert"}

// Check checks the keys together, assuming each passed CheckKey and CheckValue: what
// Connector/J would ignore is refused here, with the fix.
func Check(props map[string]string) []Problem {
	var out []Problem
	add := func(key, format string, args ...any) {
		out = append(out, Problem{Key: key, Message: fmt.Sprintf(format, args...)})
	}
	if _, ok := props["sslMode"]; ok {
		for _, k := range legacy {
			if _, set := props[k]; set {
				add(k, "has no effect when sslMode is set (Connector/J ignores it too); remove it")
			}
		}
	}
	mode := ModeOf(props)
	for _, k := range trustKeys {
		if _, set := props[k]; set && !mode.Verifies() {
			add(k, "is used only to verify the server's certificate, which sslMode %s does not do; set sslMode: VERIFY_CA or VERIFY_IDENTITY, or remove it", mode)
		}
	}
	for store, parts := range map[string][]string{
		"trustCertificateKeyStoreUrl":  {"trustCertificateKeyStoreType", "trustCertificateKeyStorePassword"},
		"clientCertificateKeyStoreUrl": {"clientCertificateKeyStoreType", "clientCertificateKeyStorePassword"},
	} {
		if _, ok := props[store]; ok || mode == Disabled || (!mode.Verifies() && store[0] == 't') {
			continue // reported above when the mode makes the whole store useless
		}
		for _, k := range parts {
			if _, set := props[k]; set {
				add(k, "has no effect without %s; give the store, or remove it", store)
			}
		}
	}
	if _, set := props["serverSslCert"]; set {
		if _, both := props["trustCertificateKeyStoreUrl"]; both {
			add("serverSslCert", "conflicts with trustCertificateKeyStoreUrl (both name the CA); give only one")
		}
	}
	if _, set := props["tlsVersions"]; set {
		if _, both := props["enabledTLSProtocols"]; both {
			add("enabledTLSProtocols", "is the older name of tlsVersions; give only one")
		}
	}
	if mode == Disabled {
		for _, k := range []string{"clientCertificateKeyStoreUrl", "clientCertificateKeyStoreType",
			"clientCertificateKeyStorePassword", "tlsVersions", "enabledTLSProtocols"} {
			if _, set := props[k]; set {
				add(k, "has no effect without TLS (sslMode DISABLED); set sslMode, or remove it")
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// ModeOf returns the sslMode that props select, mapping the legacy properties as Connector/J
// does when sslMode is not set: useSSL=false is DISABLED, verifyServerCertificate=true is
// VERIFY_CA, requireSSL=true is REQUIRED, and any other use of them PREFERRED. With none of
// them set, TLS is off (DISABLED): ingest's default, where Connector/J's is PREFERRED.
func ModeOf(props map[string]string) Mode {
	if m, ok := props["sslMode"]; ok {
		return Mode(strings.ToUpper(strings.TrimSpace(m)))
	}
	useSSL, verify, require := true, false, false
	set := false
	for k, dst := range map[string]*bool{"useSSL": &useSSL, "verifyServerCertificate": &verify, "requireSSL": &require} {
		if v, ok := props[k]; ok {
			set = true
			*dst, _ = parseBool(v)
		}
	}
	switch {
	case !set, !useSSL:
		return Disabled
	case verify:
		return VerifyCA
	case require:
		return Required
	}
	return Preferred
}
