package chaos

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Services is a MariaDB and a Kafka broker driven by scripts/services.
type Services struct {
	// Repo is the repository root (it holds scripts/services).
	Repo string
	// Env is added to the environment of every scripts/services call (INGEST_CACHE and the
	// ports for private services; nothing for the shared ones).
	Env []string
	// Private reports whether these services belong to the fault suite alone.
	Private bool
	// MariaDB is the scripts/services name of the source server: "mariadb" (10.11) or
	// "mariadb114" (11.4).
	MariaDB string

	// The addresses and credentials, as `scripts/services env` prints them.
	MySQLAddr     string
	KafkaAddr     string
	KafkaLibs     string
	AdminUser     string
	AdminPassword string
	CDCUser       string
	CDCPassword   string
}

// PrivateConfig places private services.
type PrivateConfig struct {
	// Cache is their INGEST_CACHE directory (data directories, logs, pid files).
	Cache string
	// MySQLPort, KafkaPort and ControllerPort are their loopback ports.
	MySQLPort, KafkaPort, ControllerPort int
	// SharedLibs, when set, is an existing directory of Kafka jars (the shared services'
	// INGEST_TEST_KAFKA_LIBS) linked into Cache so that nothing is downloaded again.
	SharedLibs string
	// MariaDB is the source server to start: "mariadb" (10.11, the default) or "mariadb114".
	MariaDB string
	// SharedDist, when set, is the unpacked MariaDB 11.4 of the shared services
	// (INGEST_MARIADB114_DIST), used instead of a download of its own.
	SharedDist string
}

// NewPrivate returns private services (not started) with the settings of cfg, and reads their
// addresses from scripts/services.
func NewPrivate(ctx context.Context, repo string, cfg PrivateConfig) (*Services, error) {
	s := &Services{Repo: repo, Private: true, MariaDB: serverName(cfg.MariaDB), Env: []string{
		"INGEST_CACHE=" + cfg.Cache,
		"INGEST_TEST_MYSQL_PORT=" + strconv.Itoa(cfg.MySQLPort),
		"INGEST_TEST_MYSQL114_PORT=" + strconv.Itoa(cfg.MySQLPort), // only one of them runs
		"INGEST_TEST_KAFKA_PORT=" + strconv.Itoa(cfg.KafkaPort),
		"INGEST_TEST_KAFKA_CONTROLLER_PORT=" + strconv.Itoa(cfg.ControllerPort),
		// Small enough for two cores and a shared machine.
		"INGEST_MARIADB_BUFFER_POOL=256M",
		"INGEST_KAFKA_HEAP=512m",
	}}
	if cfg.SharedDist != "" {
		s.Env = append(s.Env, "INGEST_MARIADB114_DIST="+cfg.SharedDist)
	}
	if err := s.readEnv(ctx); err != nil {
		return nil, err
	}
	if cfg.SharedLibs != "" {
		if err := linkLibs(cfg.SharedLibs, s.KafkaLibs); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// NewShared returns the services that scripts/services runs for every test (its default
// cache and ports), with mariadb ("mariadb", "mariadb114"; "" for "mariadb") as the source.
func NewShared(ctx context.Context, repo, mariadb string) (*Services, error) {
	s := &Services{Repo: repo, MariaDB: serverName(mariadb)}
	if err := s.readEnv(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// linkLibs makes dst a symbolic link to the jar directory src, unless dst already exists.
func linkLibs(src, dst string) error {
	if _, err := os.Stat(filepath.Join(src, ".complete")); err != nil {
		return nil // not a complete download: let scripts/services fetch its own
	}
	if _, err := os.Lstat(dst); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("services: %w", err)
	}
	if err := os.Symlink(src, dst); err != nil {
		return fmt.Errorf("services: link the Kafka jars: %w", err)
	}
	return nil
}

// readEnv fills the addresses and credentials from `scripts/services env`.
func (s *Services) readEnv(ctx context.Context) error {
	out, err := s.script(ctx, "env")
	if err != nil {
		return err
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
		if ok {
			vars[k] = v
		}
	}
	s.MySQLAddr = vars["INGEST_TEST_MYSQL_ADDR"]
	if s.MariaDB == "mariadb114" {
		s.MySQLAddr = vars["INGEST_TEST_MYSQL114_ADDR"]
	}
	s.KafkaAddr = vars["INGEST_TEST_KAFKA"]
	s.KafkaLibs = vars["INGEST_TEST_KAFKA_LIBS"]
	s.AdminUser, s.AdminPassword, _ = strings.Cut(vars["INGEST_TEST_MYSQL_ADMIN"], ":")
	s.CDCUser, s.CDCPassword, _ = strings.Cut(vars["INGEST_TEST_MYSQL_CDC"], ":")
	if s.MySQLAddr == "" || s.KafkaAddr == "" {
		return fmt.Errorf("services: `scripts/services env` printed no addresses:\n%s", out)
	}
	return nil
}

// serverName is the scripts/services name of a source server, "mariadb" by default.
func serverName(name string) string {
	if name == "" {
		return "mariadb"
	}
	return name
}

// Up starts what (s.MariaDB, kafka, or "" for both) unless it is running.
func (s *Services) Up(ctx context.Context, what string) error {
	if what == "" {
		if err := s.Up(ctx, s.MariaDB); err != nil {
			return err
		}
		what = "kafka"
	}
	_, err := s.script(ctx, "up", what)
	return err
}

// Down stops what (s.MariaDB, kafka, or "" for both), if this script started it.
func (s *Services) Down(ctx context.Context, what string) error {
	if what == "" {
		if err := s.Down(ctx, "kafka"); err != nil {
			return err
		}
		what = s.MariaDB
	}
	_, err := s.script(ctx, "down", what)
	return err
}

// Restart stops and starts what.
func (s *Services) Restart(ctx context.Context, what string) error {
	if err := s.Down(ctx, what); err != nil {
		return err
	}
	return s.Up(ctx, what)
}

// script runs scripts/services with args and returns its standard output.
func (s *Services) script(ctx context.Context, args ...string) ([]byte, error) {
	if len(args) > 1 && args[1] == "" {
		args = args[:1]
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.Repo, "scripts", "services"), args...)
	cmd.Env = append(os.Environ(), s.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("scripts/services %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}
