package testenv

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Server is one source server of the test matrix: a MariaDB that scripts/services starts,
// with the same settings and users as the others.
type Server struct {
	// Name names the server in subtest names and INGEST_TEST_SERVERS ("mariadb-10.11").
	Name string
	// Addr is its host:port.
	Addr string
}

// The servers of the matrix, the first being the one the tests outside the matrix use.
func allServers() []Server {
	return []Server{
		{Name: "mariadb-10.11", Addr: MySQLAddr()},
		{Name: "mariadb-11.4", Addr: env("INGEST_TEST_MYSQL114_ADDR", "127.0.0.1:3308")},
	}
}

// Servers returns the servers of the matrix: every server scripts/services starts, or those
// INGEST_TEST_SERVERS names (comma-separated, e.g. "mariadb-11.4"), in the matrix's order.
// An unknown name in INGEST_TEST_SERVERS selects nothing; RunMatrix fails on an empty list.
func Servers() []Server {
	all := allServers()
	sel := os.Getenv("INGEST_TEST_SERVERS")
	if sel == "" {
		return all
	}
	var out []Server
	for _, s := range all {
		for n := range strings.SplitSeq(sel, ",") {
			if strings.TrimSpace(n) == s.Name {
				out = append(out, s)
			}
		}
	}
	return out
}

// Primary is the server of the tests outside the matrix (MySQLAddr).
func Primary() Server { return allServers()[0] }

// RunMatrix runs fn once per server of Servers, each as a subtest named for the server
// (TestX/mariadb-10.11, TestX/mariadb-11.4), one after the other.
func RunMatrix(t *testing.T, fn func(t *testing.T, srv Server)) {
	t.Helper()
	servers := Servers()
	if len(servers) == 0 {
		t.Fatalf("testenv: INGEST_TEST_SERVERS=%q names no server of the matrix", os.Getenv("INGEST_TEST_SERVERS"))
	}
	for _, s := range servers {
		t.Run(s.Name, func(t *testing.T) { fn(t, s) })
	}
}

// AdminDSN returns a go-sql-driver DSN for the admin user on database db ("" for none).
func (s Server) AdminDSN(db string) string {
	u, p := AdminUser()
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = u, p, "tcp", s.Addr, db
	c.MultiStatements = true
	c.InterpolateParams = true
	return c.FormatDSN()
}

// Host returns the server's host and port, as a pipeline's source block names them.
func (s Server) Host() (host, port string) {
	host, port, _ = strings.Cut(s.Addr, ":")
	return host, port
}

// Database creates a fresh database on the server, dropped when the test ends, and returns
// its name and an admin connection using it.
func (s Server) Database(t testing.TB) (string, *sql.DB) {
	t.Helper()
	root, err := sql.Open("mysql", s.AdminDSN(""))
	if err != nil {
		t.Fatalf("testenv: open mysql: %v", err)
	}
	t.Cleanup(func() { root.Close() })
	name := Name(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := root.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		t.Fatalf("testenv: %s at %s not usable (run `make services`): %v", s.Name, s.Addr, err)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS `" + name + "`") })
	db, err := sql.Open("mysql", s.AdminDSN(name))
	if err != nil {
		t.Fatalf("testenv: open mysql: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return name, db
}
