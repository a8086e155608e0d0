package jdbctls

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

func TestModeOf(t *testing.T) {
	tests := []struct {
		props map[string]string
		want  Mode
	}{
		{nil, Disabled}, // ingest's default
		{map[string]string{"sslMode": "verify_ca"}, VerifyCA},
		{map[string]string{"sslMode": " Required "}, Required},
		{map[string]string{"useSSL": "false"}, Disabled},
		{map[string]string{"useSSL": "true"}, Preferred},
		{map[string]string{"useSSL": "yes", "requireSSL": "true"}, Required},
		{map[string]string{"requireSSL": "true"}, Required}, // useSSL defaults to true
		{map[string]string{"useSSL": "true", "verifyServerCertificate": "true"}, VerifyCA},
		{map[string]string{"useSSL": "true", "verifyServerCertificate": "false", "requireSSL": "true"}, Required},
		{map[string]string{"verifyServerCertificate": "TRUE"}, VerifyCA},
		{map[string]string{"useSSL": "false", "verifyServerCertificate": "true"}, Disabled},
	}
	for _, tc := range tests {
		if got := ModeOf(tc.props); got != tc.want {
			t.Errorf("ModeOf(%v) = %s, want %s", tc.props, got, tc.want)
		}
	}
}

func TestCheckKey(t *testing.T) {
	tests := []struct{ key, want string }{
		{"sslMode", ""},
		{"enabledTLSProtocols", ""},
		{"sslmode", "property names are case-sensitive, as in Connector/J (which would ignore this one); write sslMode"},
		{"TrustCertificateKeyStoreUrl", "write trustCertificateKeyStoreUrl"},
		{"sslMod", "is not honoured by ingest; the jdbc.properties it honours: allowPublicKeyRetrieval,"},
		{"serverTimezone", ""},
		{"connectTimeout", "use the source option connect.timeout"},
		{"tlsCiphersuites", "Go chooses the TLS cipher suites"},
	}
	for _, tc := range tests {
		err := CheckKey(tc.key)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckKey(%s): %v", tc.key, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckKey(%s) = %v, want %q", tc.key, err, tc.want)
		}
	}
	if !IsUnknown(CheckKey("sslMod")) || IsUnknown(CheckKey("sslmode")) || IsUnknown(CheckKey("serverTimezone")) {
		t.Error("IsUnknown must tell unknown keys from refused and miscased ones")
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		props map[string]string
		want  string // "" for no problem; else the key of the first problem
	}{
		{map[string]string{"sslMode": "VERIFY_CA", "trustCertificateKeyStoreUrl": "/ca.pem"}, ""},
		{map[string]string{"sslMode": "REQUIRED", "trustCertificateKeyStoreUrl": "/ca.pem"}, "trustCertificateKeyStoreUrl"},
		{map[string]string{"useSSL": "true", "fallbackToSystemTrustStore": "false"}, "fallbackToSystemTrustStore"},
		{map[string]string{"sslMode": "VERIFY_CA", "useSSL": "true"}, "useSSL"},
		{map[string]string{"sslMode": "VERIFY_CA", "serverSslCert": "/a", "trustCertificateKeyStoreUrl": "/b"}, "serverSslCert"},
		{map[string]string{"sslMode": "REQUIRED", "tlsVersions": "TLSv1.3", "enabledTLSProtocols": "TLSv1.3"}, "enabledTLSProtocols"},
		{map[string]string{"clientCertificateKeyStoreUrl": "/k.p12"}, "clientCertificateKeyStoreUrl"},
		{map[string]string{"sslMode": "REQUIRED", "clientCertificateKeyStoreUrl": "/k.p12"}, ""},
		{map[string]string{"sslMode": "VERIFY_CA", "trustCertificateKeyStorePassword": "x"}, "trustCertificateKeyStorePassword"},
		{map[string]string{"sslMode": "REQUIRED", "clientCertificateKeyStoreType": "JKS"}, "clientCertificateKeyStoreType"},
		{map[string]string{"sslMode": "REQUIRED", "trustCertificateKeyStorePassword": "x"}, "trustCertificateKeyStorePassword"},
	}
	for _, tc := range tests {
		ps := Check(tc.props)
		switch {
		case tc.want == "" && len(ps) > 0:
			t.Errorf("Check(%v) = %v, want none", tc.props, ps)
		case tc.want != "" && (len(ps) == 0 || ps[0].Key != tc.want):
			t.Errorf("Check(%v) = %v, want a problem with %s", tc.props, ps, tc.want)
		}
	}
}

// pki is a CA, a certificate it signed, and the stores made of them.
type pki struct {
	dir    string
	ca     *x509.Certificate
	leaf   *x509.Certificate
	key    *ecdsa.PrivateKey
	caPEM  string
	caJKS  string // password "changeit"
	caP12  string // password "changeit"
	keyPEM string // key and chain
	keyP12 string // password "changeit"
	keyJKS string // password "changeit"
}

func certificate(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

func write(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir()}
	ca, caKey := certificate(t, "ca", nil, nil)
	p.ca = ca
	p.leaf, p.key = certificate(t, "client", ca, caKey)
	caBlock := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	p.caPEM = write(t, filepath.Join(p.dir, "ca.pem"), caBlock)
	der, err := x509.MarshalPKCS8PrivateKey(p.key)
	if err != nil {
		t.Fatal(err)
	}
	p.keyPEM = write(t, filepath.Join(p.dir, "client.pem"), append(append(
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.leaf.Raw})...), caBlock...))
	trust, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca}, "changeit")
	if err != nil {
		t.Fatal(err)
	}
	p.caP12 = write(t, filepath.Join(p.dir, "ca.p12"), trust)
	chain, err := pkcs12.Modern.Encode(p.key, p.leaf, []*x509.Certificate{ca}, "changeit")
	if err != nil {
		t.Fatal(err)
	}
	p.keyP12 = write(t, filepath.Join(p.dir, "client.p12"), chain)
	ks := keystore.New()
	if err := ks.SetTrustedCertificateEntry("ca", keystore.TrustedCertificateEntry{CreationTime: time.Now(),
		Certificate: keystore.Certificate{Type: "X509", Content: ca.Raw}}); err != nil {
		t.Fatal(err)
	}
	p.caJKS = filepath.Join(p.dir, "ca.jks")
	p.saveJKS(t, ks, p.caJKS)
	kks := keystore.New()
	if err := kks.SetPrivateKeyEntry("client", keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: der,
		CertificateChain: []keystore.Certificate{{Type: "X509", Content: p.leaf.Raw}, {Type: "X509", Content: ca.Raw}}},
		[]byte("changeit")); err != nil {
		t.Fatal(err)
	}
	p.keyJKS = filepath.Join(p.dir, "client.jks")
	p.saveJKS(t, kks, p.keyJKS)
	return p
}

func (p *pki) saveJKS(t *testing.T, ks keystore.KeyStore, path string) {
	t.Helper()
	var b bytes.Buffer
	if err := ks.Store(&b, []byte("changeit")); err != nil {
		t.Fatal(err)
	}
	write(t, path, b.Bytes())
}

func TestNew(t *testing.T) {
	p := newPKI(t)
	verify := func(extra map[string]string) map[string]string {
		m := map[string]string{"sslMode": "VERIFY_CA"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name       string
		props      map[string]string
		off        bool // no TLS
		unverified bool
		client     bool // a client certificate
		wantErr    string
	}{
		{name: "nothing set", props: nil, off: true},
		{name: "REQUIRED", props: map[string]string{"sslMode": "REQUIRED"}, unverified: true},
		{name: "PREFERRED", props: map[string]string{"sslMode": "PREFERRED"}, unverified: true},
		{name: "legacy unverified", props: map[string]string{"useSSL": "true", "verifyServerCertificate": "false"}, unverified: true},
		{name: "PEM by content", props: verify(map[string]string{"trustCertificateKeyStoreUrl": "file:" + p.caPEM})},
		{name: "JKS by content", props: verify(map[string]string{"trustCertificateKeyStoreUrl": p.caJKS, "trustCertificateKeyStorePassword": "changeit"})},
		{name: "PKCS12 typed", props: verify(map[string]string{"trustCertificateKeyStoreUrl": "file://" + p.caP12,
			"trustCertificateKeyStoreType": "pkcs12", "trustCertificateKeyStorePassword": "changeit"})},
		{name: "JKS wrong password", props: verify(map[string]string{"trustCertificateKeyStoreUrl": p.caJKS, "trustCertificateKeyStorePassword": "nope"}),
			wantErr: "jdbc.properties.trustCertificateKeyStoreUrl " + p.caJKS + ": read JKS store (wrong password?)"},
		{name: "type given wrong", props: verify(map[string]string{"trustCertificateKeyStoreUrl": p.caPEM, "trustCertificateKeyStoreType": "JKS"}),
			wantErr: "read JKS store"},
		{name: "missing file", props: verify(map[string]string{"trustCertificateKeyStoreUrl": "/nonexistent/ca.pem"}),
			wantErr: "jdbc.properties.trustCertificateKeyStoreUrl: open /nonexistent/ca.pem"},
		{name: "serverSslCert", props: verify(map[string]string{"serverSslCert": p.caPEM})},
		{name: "no CA, no fallback", props: verify(map[string]string{"fallbackToSystemTrustStore": "false"}),
			wantErr: "no CA to verify the server's certificate with"},
		{name: "client PKCS12", client: true, props: verify(map[string]string{"trustCertificateKeyStoreUrl": p.caPEM,
			"clientCertificateKeyStoreUrl": p.keyP12, "clientCertificateKeyStorePassword": "changeit"})},
		{name: "client JKS", client: true, props: verify(map[string]string{"trustCertificateKeyStoreUrl": p.caPEM,
			"clientCertificateKeyStoreUrl": p.keyJKS, "clientCertificateKeyStoreType": "JKS", "clientCertificateKeyStorePassword": "changeit"})},
		{name: "client PEM", client: true, unverified: true, props: map[string]string{"sslMode": "REQUIRED", "clientCertificateKeyStoreUrl": p.keyPEM}},
		{name: "miscased key", props: map[string]string{"sslmode": "VERIFY_CA"}, wantErr: "write sslMode"},
		{name: "unknown key", props: map[string]string{"sslMode": "REQUIRED", "useCompression": "true"}, wantErr: "is not honoured by ingest"},
		{name: "bad value", props: map[string]string{"sslMode": "ALWAYS"}, wantErr: "jdbc.properties.sslMode: want DISABLED, PREFERRED"},
		{name: "CA ignored by REQUIRED", props: map[string]string{"sslMode": "REQUIRED", "trustCertificateKeyStoreUrl": p.caPEM},
			wantErr: "which sslMode REQUIRED does not do"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.props, "db.example")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (s.Config == nil) != tc.off || s.Unverified() != tc.unverified {
				t.Fatalf("config %v, unverified %v; want off %v, unverified %v", s.Config != nil, s.Unverified(), tc.off, tc.unverified)
			}
			if tc.off {
				return
			}
			if (len(s.Config.Certificates) == 1) != tc.client {
				t.Errorf("%d client certificates, want one: %v", len(s.Config.Certificates), tc.client)
			}
			if s.Mode == VerifyCA && (s.Config.RootCAs == nil || s.Config.VerifyConnection == nil) {
				t.Error("VERIFY_CA must verify the chain against the trust store")
			}
			if tc.unverified && !s.Config.InsecureSkipVerify {
				t.Error("an unverified mode must not verify")
			}
		})
	}
}

// TestVerifyCAChecksTheChain shows that VERIFY_CA refuses a certificate of another CA, and
// VERIFY_IDENTITY one for another host.
func TestVerifyCAChecksTheChain(t *testing.T) {
	p, other := newPKI(t), newPKI(t)
	s, err := New(map[string]string{"sslMode": "VERIFY_CA", "trustCertificateKeyStoreUrl": p.caPEM}, "db.example")
	if err != nil {
		t.Fatal(err)
	}
	state := func(leaf, ca *x509.Certificate) tls.ConnectionState {
		return tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf, ca}}
	}
	// The test certificates carry no ExtKeyUsage, which x509 treats as any usage.
	if err := s.Config.VerifyConnection(state(p.leaf, p.ca)); err != nil {
		t.Errorf("right CA: %v", err)
	}
	if err := s.Config.VerifyConnection(state(other.leaf, other.ca)); err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Errorf("other CA: %v, want unknown authority", err)
	}
	vi, err := New(map[string]string{"sslMode": "VERIFY_IDENTITY", "trustCertificateKeyStoreUrl": p.caPEM}, "db.example")
	if err != nil {
		t.Fatal(err)
	}
	if vi.Config.InsecureSkipVerify || vi.Config.ServerName != "db.example" {
		t.Error("VERIFY_IDENTITY must leave Go's verification of chain and host name on")
	}
}

func TestVersions(t *testing.T) {
	s, err := New(map[string]string{"sslMode": "REQUIRED", "tlsVersions": "TLSv1.3"}, "h")
	if err != nil || s.Config.MinVersion != tls.VersionTLS13 || s.Config.MaxVersion != tls.VersionTLS13 {
		t.Fatalf("tlsVersions TLSv1.3: %v %v", s.Config, err)
	}
	s, err = New(map[string]string{"sslMode": "REQUIRED", "enabledTLSProtocols": "TLSv1.2, TLSv1.3"}, "h")
	if err != nil || s.Config.MinVersion != tls.VersionTLS12 || s.Config.MaxVersion != tls.VersionTLS13 {
		t.Fatalf("enabledTLSProtocols: %v %v", s.Config, err)
	}
}
