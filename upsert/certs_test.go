package upsert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// testPKI is a CA and a certificate it signed, made by the test.
type testPKI struct {
	dir     string
	ca      *x509.Certificate
	caKey   *ecdsa.PrivateKey
	cert    *x509.Certificate // for the DNS name "broker.example" only, not for 127.0.0.1
	key     *ecdsa.PrivateKey
	caPEM   string // file with the CA certificate
	certPEM string // file with the leaf's key and certificate
}

func newTestPKI(t testing.TB, dnsNames []string, ips []net.IP) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir()}
	p.caKey, p.ca = makeCert(t, "ingest test CA", nil, nil, nil, nil)
	p.key, p.cert = makeCert(t, "broker", dnsNames, ips, p.ca, p.caKey)
	p.caPEM = filepath.Join(p.dir, "ca.pem")
	writePEM(t, p.caPEM, pemBlock("CERTIFICATE", p.ca.Raw))
	der, err := x509.MarshalPKCS8PrivateKey(p.key)
	if err != nil {
		t.Fatal(err)
	}
	p.certPEM = filepath.Join(p.dir, "broker.pem")
	writePEM(t, p.certPEM, pemBlock("PRIVATE KEY", der), pemBlock("CERTIFICATE", p.cert.Raw), pemBlock("CERTIFICATE", p.ca.Raw))
	return p
}

func makeCert(t testing.TB, cn string, dns []string, ips []net.IP, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		DNSNames:     dns,
		IPAddresses:  ips,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	signer, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	} else {
		signer, signerKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func writePEM(t testing.TB, path string, blocks ...[]byte) {
	t.Helper()
	var data []byte
	for _, b := range blocks {
		data = append(data, b...)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// keytool runs the JDK's keytool, failing the test when it is missing or fails.
func keytool(t testing.TB, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("keytool"); err != nil {
		t.Fatal("keytool (from the JDK that the Kafka test service needs) is not on PATH")
	}
	if out, err := exec.Command("keytool", args...).CombinedOutput(); err != nil {
		t.Fatalf("keytool %v: %v\n%s", args, err, out)
	}
}

// trustStoreFile makes a trust store of the given type holding the CA, with keytool.
func (p *testPKI) trustStoreFile(t testing.TB, typ, password string) string {
	path := filepath.Join(t.TempDir(), "trust."+typ)
	keytool(t, "-importcert", "-noprompt", "-alias", "ca", "-file", p.caPEM,
		"-keystore", path, "-storetype", typ, "-storepass", password)
	return path
}

// keyStoreFile makes a key store of the given type with keytool: a PKCS12 file of the
// leaf's key and chain (written by go-pkcs12) converted by keytool.
func (p *testPKI) keyStoreFile(t testing.TB, typ, password string) string {
	src := p.pkcs12File(t, password)
	if typ == "PKCS12" {
		return src
	}
	path := filepath.Join(t.TempDir(), "key."+typ)
	keytool(t, "-importkeystore", "-noprompt", "-srckeystore", src, "-srcstoretype", "PKCS12",
		"-srcstorepass", password, "-destkeystore", path, "-deststoretype", typ, "-deststorepass", password)
	return path
}

func (p *testPKI) pkcs12File(t testing.TB, password string) string {
	t.Helper()
	data, err := pkcs12.Modern.Encode(p.key, p.cert, []*x509.Certificate{p.ca}, password)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key.p12")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func x509Opts(roots *x509.CertPool, name string) x509.VerifyOptions {
	return x509.VerifyOptions{Roots: roots, DNSName: name}
}

func sprint(v any) string { return fmt.Sprint(v) }
