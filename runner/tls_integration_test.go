//go:build integration

package runner

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/ingestkit/ingest/cdc"
	"github.com/ingestkit/ingest/chaos"
	"github.com/ingestkit/ingest/internal/jdbctls"
	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/secrets"
)

// tlsPort is the private MariaDB of the TLS tests (require_secure_transport=ON).
const tlsPort = 3420

// testCA is a CA made by the test, and the files of what it signed.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  string // the CA certificate
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// sign makes a certificate for tmpl's names, signed by ca (self-signed when ca is nil).
func sign(t *testing.T, tmpl *x509.Certificate, key *ecdsa.PrivateKey, ca *testCA) *x509.Certificate {
	t.Helper()
	tmpl.SerialNumber, _ = rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	parent, parentKey := tmpl, key
	if ca != nil {
		parent, parentKey = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func writePEMFile(t *testing.T, path string, blocks ...*pem.Block) string {
	t.Helper()
	var b []byte
	for _, bl := range blocks {
		b = append(b, pem.EncodeToMemory(bl)...)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func keyBlock(t *testing.T, k *ecdsa.PrivateKey) *pem.Block {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return &pem.Block{Type: "PRIVATE KEY", Bytes: der}
}

func certBlock(c *x509.Certificate) *pem.Block { return &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw} }

func newCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	ca := &testCA{key: newKey(t)}
	ca.cert = sign(t, &x509.Certificate{Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}, ca.key, nil)
	ca.pem = writePEMFile(t, filepath.Join(dir, name+".pem"), certBlock(ca.cert))
	return ca
}

// tlsFiles are the certificates of the TLS tests.
type tlsFiles struct {
	ca, otherCA    *testCA
	serverCert     string // for IP 127.0.0.1 only, so that "localhost" fails VERIFY_IDENTITY
	serverKey      string
	clientPKCS12   string // a client certificate signed by ca, password "changeit"
	clientPassword string
}

func makeTLSFiles(t *testing.T, dir string) tlsFiles {
	t.Helper()
	f := tlsFiles{ca: newCA(t, dir, "ingest-test-ca"), otherCA: newCA(t, dir, "other-ca"), clientPassword: "changeit"}
	sk := newKey(t)
	sc := sign(t, &x509.Certificate{Subject: pkix.Name{CommonName: "mariadb"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, sk, f.ca)
	f.serverCert = writePEMFile(t, filepath.Join(dir, "server-cert.pem"), certBlock(sc))
	f.serverKey = writePEMFile(t, filepath.Join(dir, "server-key.pem"), keyBlock(t, sk))
	ck := newKey(t)
	cc := sign(t, &x509.Certificate{Subject: pkix.Name{CommonName: "tls_x509"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, ck, f.ca)
	p12, err := pkcs12.Modern.Encode(ck, cc, []*x509.Certificate{f.ca.cert}, f.clientPassword)
	if err != nil {
		t.Fatal(err)
	}
	f.clientPKCS12 = filepath.Join(dir, "client.p12")
	if err := os.WriteFile(f.clientPKCS12, p12, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// startTLSMariaDB starts the private MariaDB with the server certificate of f and
// require_secure_transport=ON, and stops it when the test ends.
func startTLSMariaDB(t *testing.T, f tlsFiles) *chaos.Services {
	t.Helper()
	ctx := context.Background()
	svc, err := chaos.NewPrivate(ctx, "..", chaos.PrivateConfig{Cache: t.TempDir(), MySQLPort: tlsPort, KafkaPort: 3421, ControllerPort: 3421})
	if err != nil {
		t.Fatal(err)
	}
	svc.Env = append(svc.Env, fmt.Sprintf("INGEST_MARIADB_EXTRA_OPTS=--ssl-ca=%s --ssl-cert=%s --ssl-key=%s --require-secure-transport=ON",
		f.ca.pem, f.serverCert, f.serverKey))
	if err := svc.Up(ctx, "mariadb"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := svc.Down(context.Background(), "mariadb"); err != nil {
			t.Errorf("stop the private MariaDB: %v", err)
		}
	})
	return svc
}

// adminDB connects as the admin user over TLS verified with ca.
func adminDB(t *testing.T, svc *chaos.Services, ca string, db string) *sql.DB {
	t.Helper()
	st, err := jdbctls.New(map[string]string{"sslMode": "VERIFY_IDENTITY", "trustCertificateKeyStoreUrl": ca}, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	mc := mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr, mc.DBName, mc.TLS = svc.AdminUser, svc.AdminPassword, "tcp", svc.MySQLAddr, db, st.Config
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		t.Fatal(err)
	}
	d := sql.OpenDB(conn)
	t.Cleanup(func() { d.Close() })
	return d
}

// ping connects as the CDC user with the pool ingest uses (cdc.Open), TLS from props, and
// returns the session's Ssl_cipher.
func ping(svc *chaos.Services, host, user, password string, props map[string]string) (string, error) {
	st, err := jdbctls.New(props, host)
	if err != nil {
		return "", err
	}
	db, err := cdc.Open(cdc.Config{Addr: net.JoinHostPort(host, fmt.Sprint(tlsPort)), User: user, Password: password,
		TLS: st.Config, ConnectTimeout: 5 * time.Second,
		ServerID: cdc.ServerIDRange{First: 9000, Last: 9000}, Tables: func(string, string) bool { return true }})
	if err != nil {
		return "", err
	}
	defer db.Close()
	var name, cipher string
	err = db.QueryRow("SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher)
	return cipher, err
}

// tlsDefinition is a pipeline reading db from the private server at host, with extra source
// options.
func tlsDefinition(t *testing.T, svc *chaos.Services, host, db, extraSource string) *pipeline.Definition {
	t.Helper()
	yaml := fmt.Sprintf(`source:
  type: mysql
  hostname: %s
  port: %d
  username: %s
  password: ${secret_values.pw}
  tables: %s.\.*
  connect.timeout: 5s
  connect.max-retries: 1
%s
sink:
  type: upsert-kafka
  properties.bootstrap.servers: %s
pipeline:
  name: %s
`, host, tlsPort, svc.CDCUser, db, extraSource, testenv.KafkaAddr(), testenv.Name(t)) // a pipeline (and state in Kafka) per subtest
	res := secrets.NewResolver([]secrets.Provider{&secrets.Map{Values: map[string]string{"pw": svc.CDCPassword}}}, nil)
	def, err := pipeline.Parse("tls.yaml", []byte(yaml), pipeline.LoadOptions{Resolver: res})
	if err != nil {
		t.Fatalf("pipeline:\n%s\n%v", yaml, err)
	}
	return def
}

func runLogged(t *testing.T, def *pipeline.Definition, stateDir string) (string, error) {
	t.Helper()
	log, buf := bufferLogger()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := Run(ctx, def, Options{StateDir: stateDir, UntilCaughtUp: true, Logger: log})
	if ctx.Err() != nil {
		t.Fatalf("Run did not stop by itself: %v\n%s", err, buf.String())
	}
	return buf.String(), err
}

// TestMySQLTLS runs ingest against a MariaDB that refuses plain text (require_secure_transport),
// with certificates made here: sslMode as Connector/J defines it, the trust and key stores,
// and the snapshot's and the binlog's connections both over TLS.
func TestMySQLTLS(t *testing.T) {
	dir := t.TempDir()
	f := makeTLSFiles(t, dir)
	svc := startTLSMariaDB(t, f)
	root := adminDB(t, svc, f.ca.pem, "")
	db := testenv.Name(t)
	testenv.Exec(t, root, "CREATE DATABASE `"+db+"`",
		"CREATE TABLE `"+db+"`.t (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO `"+db+"`.t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
		"CREATE USER IF NOT EXISTS 'tls_x509'@'127.0.0.1' IDENTIFIED BY 'x509-pass' REQUIRE X509",
		"GRANT SELECT ON *.* TO 'tls_x509'@'127.0.0.1'")
	verifyCA := map[string]string{"sslMode": "VERIFY_CA", "trustCertificateKeyStoreUrl": "file:" + f.ca.pem}

	t.Run("plain text is refused by the server", func(t *testing.T) {
		var on int
		if err := root.QueryRow("SELECT @@require_secure_transport").Scan(&on); err != nil || on != 1 {
			t.Fatalf("require_secure_transport = %d (%v), want 1: the test would prove nothing", on, err)
		}
		// MariaDB answers a plain-text login with "Access denied".
		if _, err := ping(svc, "127.0.0.1", svc.CDCUser, svc.CDCPassword, nil); err == nil {
			t.Fatal("a plain-text connection was accepted")
		}
	})

	t.Run("connections", func(t *testing.T) {
		tests := []struct {
			name, host string
			props      map[string]string
			user, pw   string
			wantErr    string
		}{
			{name: "VERIFY_CA right CA", host: "127.0.0.1", props: verifyCA},
			{name: "VERIFY_CA other CA", host: "127.0.0.1", wantErr: "certificate signed by unknown authority",
				props: map[string]string{"sslMode": "VERIFY_CA", "trustCertificateKeyStoreUrl": f.otherCA.pem}},
			{name: "VERIFY_CA ignores the host name", host: "localhost", props: verifyCA},
			{name: "VERIFY_IDENTITY host in certificate", host: "127.0.0.1",
				props: map[string]string{"sslMode": "VERIFY_IDENTITY", "trustCertificateKeyStoreUrl": f.ca.pem}},
			{name: "VERIFY_IDENTITY host not in certificate", host: "localhost", wantErr: "x509: certificate is not valid",
				props: map[string]string{"sslMode": "VERIFY_IDENTITY", "trustCertificateKeyStoreUrl": f.ca.pem}},
			{name: "legacy verifyServerCertificate is VERIFY_CA", host: "127.0.0.1", wantErr: "certificate signed by unknown authority",
				props: map[string]string{"useSSL": "true", "verifyServerCertificate": "true", "trustCertificateKeyStoreUrl": f.otherCA.pem}},
			{name: "REQUIRED", host: "localhost", props: map[string]string{"sslMode": "required"}},
			{name: "client certificate PKCS12", host: "127.0.0.1", user: "tls_x509", pw: "x509-pass",
				props: map[string]string{"sslMode": "VERIFY_CA", "trustCertificateKeyStoreUrl": f.ca.pem,
					"clientCertificateKeyStoreUrl": f.clientPKCS12, "clientCertificateKeyStoreType": "PKCS12",
					"clientCertificateKeyStorePassword": f.clientPassword}},
			{name: "no client certificate", host: "127.0.0.1", user: "tls_x509", pw: "x509-pass", wantErr: "Access denied",
				props: verifyCA},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				user, pw := svc.CDCUser, svc.CDCPassword
				if tc.user != "" {
					user, pw = tc.user, tc.pw
				}
				cipher, err := ping(svc, tc.host, user, pw, tc.props)
				switch {
				case tc.wantErr != "":
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("error %v, want one with %q", err, tc.wantErr)
					}
				case err != nil:
					t.Fatal(err)
				case cipher == "":
					t.Fatal("connected without TLS (empty Ssl_cipher)")
				}
			})
		}
	})

	t.Run("snapshot and binlog over TLS", func(t *testing.T) {
		// Chunks of 100 rows while another database changes: the snapshot opens its row
		// connections and reads binlog windows between watermarks, each a connection of its own.
		testenv.Exec(t, root, "CREATE TABLE `"+db+"`.big (id INT PRIMARY KEY, v VARCHAR(20))",
			"INSERT INTO `"+db+"`.big SELECT seq, 'x' FROM mysql.seq_1_to_3000",
			"CREATE DATABASE `"+db+"_noise`", "CREATE TABLE `"+db+"_noise`.n (id INT AUTO_INCREMENT PRIMARY KEY)")
		src := "  scan.incremental.snapshot.chunk.size: 100\n  jdbc.properties.sslMode: VERIFY_CA\n  jdbc.properties.trustCertificateKeyStoreUrl: file:" + f.ca.pem + "\n"
		def := tlsDefinition(t, svc, "127.0.0.1", db, src)
		deleteTopicsAtEnd(t, db+".t", db+".big")
		state := t.TempDir()
		stop := make(chan struct{})
		noise := make(chan error, 1)
		go func() {
			for {
				select {
				case <-stop:
					noise <- nil
					return
				default:
				}
				if _, err := root.Exec("INSERT INTO `" + db + "_noise`.n VALUES ()"); err != nil {
					noise <- err
					return
				}
			}
		}()
		logs, err := runLogged(t, def, state) // the snapshot: SELECTs and watermark binlog reads
		close(stop)
		if nerr := <-noise; nerr != nil {
			t.Fatal(nerr)
		}
		if err != nil {
			t.Fatalf("Run: %v\n%s", err, logs)
		}
		if strings.Contains(logs, "without verifying") {
			t.Errorf("VERIFY_CA warned about an unverified connection:\n%s", logs)
		}
		testenv.Exec(t, root, "INSERT INTO `"+db+"`.t VALUES (4, 'd')", "UPDATE `"+db+"`.t SET v = 'B' WHERE id = 2")
		if logs, err := runLogged(t, def, state); err != nil { // the binlog stream
			t.Fatalf("Run: %v\n%s", err, logs)
		}
		got := materialize(consumeAll(t, db+".t"))
		if len(got) != 4 || !strings.Contains(got[`{"id":2}`], `"B"`) || got[`{"id":4}`] == "" {
			t.Fatalf("records %v, want rows 1-4 with row 2 updated", got)
		}
		if n := len(materialize(consumeAll(t, db+".big"))); n != 3000 {
			t.Fatalf("%d rows of big, want 3000", n)
		}
	})

	t.Run("REQUIRED warns once", func(t *testing.T) {
		def := tlsDefinition(t, svc, "localhost", db, "  jdbc.properties.sslMode: REQUIRED\n")
		deleteTopicsAtEnd(t, db+".t")
		logs, err := runLogged(t, def, t.TempDir())
		if err != nil {
			t.Fatalf("Run: %v\n%s", err, logs)
		}
		if n := strings.Count(logs, "without verifying the server's certificate"); n != 1 {
			t.Fatalf("%d warnings about the unverified certificate, want 1:\n%s", n, logs)
		}
	})

	t.Run("other CA stops apply with the reason", func(t *testing.T) {
		src := "  jdbc.properties.sslMode: VERIFY_CA\n  jdbc.properties.trustCertificateKeyStoreUrl: " + f.otherCA.pem + "\n"
		def := tlsDefinition(t, svc, "127.0.0.1", db, src)
		logs, err := runLogged(t, def, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
			t.Fatalf("Run error %v, want the unknown CA\n%s", err, logs)
		}
	})
}
