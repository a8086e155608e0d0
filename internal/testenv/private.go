package testenv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// MariaDB is a private MariaDB server, started by scripts/services for one test binary on
// its own port and data directory (under a temporary INGEST_CACHE), for tests that change
// GLOBAL settings or rebuild the server, which the shared server must never see. It has the
// shared server's settings and users.
type MariaDB struct {
	// Addr is its host:port.
	Addr  string
	repo  string
	cache string
	port  int
}

// StartMariaDB starts a private MariaDB on 127.0.0.1:port and stops it (only it) when the
// test ends. Give every test binary its own port.
func StartMariaDB(t testing.TB, port int) *MariaDB {
	t.Helper()
	repo, err := RepoRoot()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	m := &MariaDB{Addr: "127.0.0.1:" + strconv.Itoa(port), repo: repo, cache: t.TempDir(), port: port}
	t.Cleanup(func() {
		if err := m.script("down", "mariadb"); err != nil {
			t.Errorf("testenv: stop the private MariaDB: %v", err)
		}
	})
	m.Start(t)
	return m
}

// Start starts the server (a fresh data directory when there is none).
func (m *MariaDB) Start(t testing.TB) {
	t.Helper()
	if err := m.script("up", "mariadb"); err != nil {
		t.Fatalf("testenv: start the private MariaDB on %s: %v", m.Addr, err)
	}
}

// Stop stops the server.
func (m *MariaDB) Stop(t testing.TB) {
	t.Helper()
	if err := m.script("down", "mariadb"); err != nil {
		t.Fatalf("testenv: stop the private MariaDB on %s: %v", m.Addr, err)
	}
}

// Rebuild stops the server, deletes its data directory and starts a new server on the same
// address: what a replaced or re-initialised production server looks like to a client.
func (m *MariaDB) Rebuild(t testing.TB) {
	t.Helper()
	m.Stop(t)
	if err := os.RemoveAll(filepath.Join(m.cache, "services", "mariadb", "data")); err != nil {
		t.Fatalf("testenv: delete the private MariaDB's data: %v", err)
	}
	m.Start(t)
}

// Database creates a fresh database on the server, dropped when the test ends, and
// returns its name and an admin connection using it.
func (m *MariaDB) Database(t testing.TB) (string, *sql.DB) {
	t.Helper()
	name := Name(t)
	root := m.open(t, "")
	if _, err := root.Exec("CREATE DATABASE `" + name + "`"); err != nil {
		t.Fatalf("testenv: private MariaDB at %s: %v", m.Addr, err)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS `" + name + "`") })
	return name, m.open(t, name)
}

// Admin returns an admin connection to the server without a database.
func (m *MariaDB) Admin(t testing.TB) *sql.DB { return m.open(t, "") }

func (m *MariaDB) open(t testing.TB, db string) *sql.DB {
	t.Helper()
	u, p := AdminUser()
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = u, p, "tcp", m.Addr, db
	c.MultiStatements = true
	conn, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatalf("testenv: open mysql: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func (m *MariaDB) script(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(m.repo, "scripts", "services"), args...)
	cmd.Env = append(os.Environ(), "INGEST_CACHE="+m.cache, "INGEST_TEST_MYSQL_PORT="+strconv.Itoa(m.port),
		"INGEST_MARIADB_BUFFER_POOL=64M") // small: two cores and a shared machine
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("scripts/services %v: %w\n%s", args, err, out)
	}
	return nil
}

// RepoRoot finds the repository root (the directory of go.mod) from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
