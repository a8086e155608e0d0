// Package testenv gives integration tests their own database and topics on the real test
// services that scripts/services starts (MariaDB 10.11 on 127.0.0.1:3307, MariaDB 11.4 on
// 127.0.0.1:3308, Kafka on 127.0.0.1:9092).
//
// The tests of the source, the snapshot, the all-types encodings and the runner's end-to-end
// runs run once per source server, as subtests named for it (RunMatrix, Servers;
// INGEST_TEST_SERVERS restricts the list); the other tests use the primary server (10.11).
//
// Integration tests are built with the tag "integration" (make test sets it). The addresses
// come from the INGEST_TEST_* variables that `scripts/services env` prints, with the script's
// defaults when unset. A service that cannot be reached fails the test: it never skips, so a
// broken environment cannot pass as green.
package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// MySQLAddr is the host:port of the test MariaDB.
func MySQLAddr() string { return env("INGEST_TEST_MYSQL_ADDR", "127.0.0.1:3307") }

// KafkaAddr is the bootstrap address of the test Kafka broker.
func KafkaAddr() string { return env("INGEST_TEST_KAFKA", "127.0.0.1:9092") }

// KafkaSASLAddr is the address of the test broker's SASL_PLAINTEXT listener (PLAIN and
// SCRAM-SHA-256/512; scripts/services).
func KafkaSASLAddr() string { return env("INGEST_TEST_KAFKA_SASL", "127.0.0.1:9094") }

// KafkaLibs is the directory holding the Kafka jars (for tests that run Java tools).
func KafkaLibs() string { return os.Getenv("INGEST_TEST_KAFKA_LIBS") }

func userPass(name, def string) (string, string) {
	u, p, _ := strings.Cut(env(name, def), ":")
	return u, p
}

// AdminUser returns the test server's all-privileges user and password.
func AdminUser() (user, password string) {
	return userPass("INGEST_TEST_MYSQL_ADMIN", "ingest_admin:admin-pass")
}

// CDCUser returns the user holding only the CDC grants (REPLICATION SLAVE, BINLOG MONITOR,
// SELECT) and its password.
func CDCUser() (user, password string) { return userPass("INGEST_TEST_MYSQL_CDC", "cdc:cdc-pass") }

// AdminDSN returns a go-sql-driver DSN for the admin user on database db ("" for none) of
// the primary server.
func AdminDSN(db string) string { return Primary().AdminDSN(db) }

var nonIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// Name returns a short name unique to this test run, built from the test's name, usable as a
// database or topic name.
func Name(t testing.TB) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	n := nonIdent.ReplaceAllString(strings.ToLower(t.Name()), "_")
	if len(n) > 40 {
		n = n[len(n)-40:]
	}
	return strings.Trim(n, "_") + "_" + hex.EncodeToString(b)
}

// Database creates a fresh database for the test on the primary server (the first of the
// matrix), dropped when the test ends, and returns its name and an admin connection using it.
func Database(t testing.TB) (string, *sql.DB) {
	t.Helper()
	return Primary().Database(t)
}

// Exec runs statements on db, failing the test on the first error.
func Exec(t testing.TB, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("testenv: %s: %v", s, err)
		}
	}
}

// Kafka returns a client for the test broker with opts added, closed when the test ends.
func Kafka(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(KafkaAddr())}, opts...)...)
	if err != nil {
		t.Fatalf("testenv: kafka client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Topic creates a topic with a fresh name and the given partition count (deleted when the
// test ends) and returns its name.
func Topic(t testing.TB, partitions int32, configs map[string]*string) string {
	t.Helper()
	name := Name(t)
	adm := kadm.NewClient(Kafka(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, partitions, 1, configs, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("testenv: Kafka at %s: create topic %s (run `make services`): %v", KafkaAddr(), name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = adm.DeleteTopics(ctx, name)
	})
	return name
}
