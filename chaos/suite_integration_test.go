//go:build integration

package chaos

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ingestkit/ingest/internal/testenv"
)

// The suite's environment:
//
//	INGEST_CHAOS_LONG=1        the long mode (make chaos); otherwise the short mode (make test)
//	CHAOS_DURATION=10m         the long mode's total fault time, shared among the scenarios
//	INGEST_CHAOS_SERVICES      "private" (default): a MariaDB and a Kafka of the suite's own,
//	                           under .cache/chaos, on the ports below; "shared": the services of
//	                           the other tests, where the scenarios that restart or throttle
//	                           them run only with INGEST_TEST_DISRUPTIVE=1
//	INGEST_CHAOS_MYSQL_PORT, INGEST_CHAOS_KAFKA_PORT, INGEST_CHAOS_KAFKA_CONTROLLER_PORT
//	                           the private services' ports (3399, 9399, 9398)
//	INGEST_CHAOS_SERVER        the source server: "mariadb" (10.11, default) or "mariadb114"
//	                           (11.4); make chaos runs the long mode once with each
//	INGEST_CHAOS_RACE=1        build ingest with the race detector
var suite struct {
	once sync.Once
	err  error

	repo     string
	svc      *Services
	bin      string
	binDir   string
	lock     *os.File  // held while the private services are in use
	reaper   *exec.Cmd // stops the private services if this process dies without doing it
	long     bool
	duration time.Duration
}

func TestMain(m *testing.M) {
	if err := readMode(); err != nil {
		fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
		os.Exit(2)
	}
	code := m.Run()
	teardown()
	os.Exit(code)
}

// readMode reads the mode and the long mode's duration from the environment, before any test
// runs (the tests read them without locking).
func readMode() error {
	suite.long = os.Getenv("INGEST_CHAOS_LONG") == "1"
	suite.duration = 10 * time.Minute
	if d := os.Getenv("CHAOS_DURATION"); d != "" {
		v, err := time.ParseDuration(d)
		if err != nil {
			return fmt.Errorf("CHAOS_DURATION %q: %w", d, err)
		}
		suite.duration = v
	}
	return nil
}

// env returns the suite's services and ingest binary, starting and building them on first
// use; a test that needs neither starts nothing.
func env(t *testing.T) *Services {
	t.Helper()
	suite.once.Do(func() { suite.err = setup() })
	if suite.err != nil {
		t.Fatalf("chaos suite setup: %v", suite.err)
	}
	return suite.svc
}

func setup() error {
	ctx := context.Background()
	repo, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	suite.repo = repo
	if err := setupServices(ctx); err != nil {
		return err
	}
	if suite.binDir, err = os.MkdirTemp("", "chaos-ingest-"); err != nil {
		return err
	}
	suite.bin, err = BuildIngest(ctx, repo, suite.binDir, os.Getenv("INGEST_CHAOS_RACE") == "1")
	return err
}

// setupServices starts the private services (or selects the shared ones).
func setupServices(ctx context.Context) error {
	if os.Getenv("INGEST_CHAOS_SERVICES") == "shared" {
		svc, err := NewShared(ctx, suite.repo, os.Getenv("INGEST_CHAOS_SERVER"))
		suite.svc = svc
		return err
	}
	cache := filepath.Join(suite.repo, ".cache", "chaos")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	lock, err := lockCache(cache)
	if err != nil {
		return err
	}
	suite.lock = lock
	cfg := PrivateConfig{Cache: cache, MySQLPort: envInt("INGEST_CHAOS_MYSQL_PORT", 3399),
		KafkaPort: envInt("INGEST_CHAOS_KAFKA_PORT", 9399), ControllerPort: envInt("INGEST_CHAOS_KAFKA_CONTROLLER_PORT", 9398),
		SharedLibs: sharedLibs(), MariaDB: os.Getenv("INGEST_CHAOS_SERVER"), SharedDist: sharedDist()}
	svc, err := NewPrivate(ctx, suite.repo, cfg)
	if err != nil {
		return err
	}
	suite.svc = svc
	fmt.Fprintf(os.Stderr, "chaos: private services with source server %s on %s\n", svc.MariaDB, svc.MySQLAddr)
	if err := startReaper(svc, filepath.Join(cache, "lock")); err != nil {
		return err
	}
	return svc.Up(ctx, "")
}

// lockCache takes the lock of the private services' directory, waiting up to a minute for
// another run of the suite to finish with them.
func lockCache(cache string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(cache, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("the private chaos services under %s are in use by another run of the suite (lock: %v)", cache, err)
		}
		time.Sleep(time.Second)
	}
}

// startReaper starts a detached shell that, once this process is gone, takes the cache lock
// and stops the private services: they are stopped even when the test binary panics or is
// killed by its timeout.
func startReaper(svc *Services, lock string) error {
	script := fmt.Sprintf(`while kill -0 %d 2>/dev/null; do sleep 1; done; exec flock %q %q down`,
		os.Getpid(), lock, filepath.Join(svc.Repo, "scripts", "services"))
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), svc.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the services reaper: %w", err)
	}
	suite.reaper = cmd
	go func() { _ = cmd.Wait() }()
	return nil
}

// teardown stops the private services and removes the binary.
func teardown() {
	if suite.svc != nil && suite.svc.Private {
		if err := suite.svc.Down(context.Background(), ""); err != nil {
			fmt.Fprintf(os.Stderr, "chaos: stop the private services: %v\n", err)
		}
	}
	if suite.reaper != nil && suite.reaper.Process != nil {
		_ = suite.reaper.Process.Kill()
	}
	if suite.lock != nil {
		suite.lock.Close()
	}
	if suite.binDir != "" {
		os.RemoveAll(suite.binDir)
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// sharedLibs is the shared services' Kafka jar directory, if there is one.
func sharedLibs() string {
	if d := os.Getenv("INGEST_TEST_KAFKA_LIBS"); d != "" {
		return d
	}
	matches, _ := filepath.Glob(filepath.Join(suite.repo, ".cache", "services", "kafka", "libs-*"))
	if len(matches) > 0 {
		return matches[len(matches)-1]
	}
	return ""
}

// sharedDist is the shared services' unpacked MariaDB 11.4, if there is one.
func sharedDist() string {
	if d := os.Getenv("INGEST_MARIADB114_DIST"); d != "" {
		return d
	}
	matches, _ := filepath.Glob(filepath.Join(suite.repo, ".cache", "mariadb114-*", ".complete"))
	if len(matches) > 0 {
		return filepath.Dir(matches[len(matches)-1])
	}
	return ""
}

// disruptive skips a scenario that stops, restarts or throttles the services when they are
// the shared ones and INGEST_TEST_DISRUPTIVE is not set.
func disruptive(t *testing.T) {
	t.Helper()
	if svc := env(t); !svc.Private && os.Getenv("INGEST_TEST_DISRUPTIVE") != "1" {
		t.Skip("restarts or throttles the shared services; set INGEST_TEST_DISRUPTIVE=1 (or use the private services)")
	}
}

// budget is a scenario's share of the long mode's CHAOS_DURATION, or short in the short mode.
func budget(share float64, short time.Duration) time.Duration {
	if !suite.long {
		return short
	}
	return time.Duration(share * float64(suite.duration))
}

// count is n in the long mode, short in the short mode.
func count(long, short int) int {
	if suite.long {
		return long
	}
	return short
}

// dsn returns a go-sql-driver DSN of the admin user on database db ("" for none).
func dsn(svc *Services, db string) string {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = svc.AdminUser, svc.AdminPassword, "tcp", svc.MySQLAddr, db
	c.InterpolateParams = true
	return c.FormatDSN()
}

var nonIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// uniqueName returns a database (and pipeline) name for the test: its name and a random suffix.
func uniqueName(t *testing.T) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	n := strings.Trim(nonIdent.ReplaceAllString(strings.ToLower(t.Name()), "_"), "_")
	if len(n) > 40 {
		n = n[len(n)-40:]
	}
	return "chaos_" + n + "_" + hex.EncodeToString(b)
}

// openDB opens a pool on database db, closed when the test ends.
func openDB(t *testing.T, svc *Services, db string) *sql.DB {
	t.Helper()
	conn, err := sql.Open("mysql", dsn(svc, db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
