//go:build integration

package cdc

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// testConfig returns a Config for the CDC user capturing every table of db on srv, with a
// server id of its own (tests of other packages may stream from the same server).
func testConfig(srv testenv.Server, db string) Config {
	u, p := testenv.CDCUser()
	id := uint32(20000 + rand.IntN(40000))
	return Config{
		Addr: srv.Addr, User: u, Password: p,
		ServerID:  ServerIDRange{First: id},
		Tables:    func(d, _ string) bool { return d == db },
		Heartbeat: time.Second, ConnectTimeout: 5 * time.Second,
	}
}

// running is a Source running in the background of a test.
type running struct {
	out    chan change.Batch
	cancel context.CancelFunc
	done   chan error
	wait   time.Duration // how long changesUntil waits for each batch (default 20s)
	addr   string        // the server's address, for the diagnosis of a stall
}

// start runs a Source for cfg until the test ends (or stop is called).
func start(t *testing.T, cfg Config) *running {
	t.Helper()
	src, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{out: make(chan change.Batch, 16), cancel: cancel, done: make(chan error, 1), addr: cfg.Addr}
	go func() { r.done <- src.Run(ctx, r.out) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels the source and returns Run's error.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
			return err
		}
		return nil
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after cancel")
		return nil
	}
}

// next returns the next batch, failing the test after timeout or if Run ended.
func (r *running) next(t *testing.T, timeout time.Duration) change.Batch {
	t.Helper()
	select {
	case b := <-r.out:
		return b
	case err := <-r.done:
		t.Fatalf("Run returned: %v", err)
	case <-time.After(timeout):
		t.Fatalf("no batch in time\n%s", stallDiagnosis(r.addr))
	}
	return change.Batch{}
}

// stallDiagnosis describes where a source that sends nothing is: the stacks of the cdc
// package's goroutines and the server's process list (its binlog dump threads and whatever
// may hold a lock the source waits for).
func stallDiagnosis(addr string) string {
	var b strings.Builder
	buf := make([]byte, 1<<22)
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "ingest/cdc.") && !strings.Contains(g, "stallDiagnosis") {
			b.WriteString(g + "\n\n")
		}
	}
	db, err := sql.Open("mysql", testenv.Server{Addr: addr}.AdminDSN(""))
	if err != nil {
		return b.String() + err.Error()
	}
	defer db.Close()
	rows, err := db.Query("SELECT ID, USER, DB, COMMAND, TIME, STATE, LEFT(INFO, 200) FROM information_schema.PROCESSLIST")
	if err != nil {
		return b.String() + "processlist: " + err.Error()
	}
	defer rows.Close()
	b.WriteString("server process list:\n")
	for rows.Next() {
		var id, secs int64
		var user, cmd string
		var db, state, info sql.NullString
		if rows.Scan(&id, &user, &db, &cmd, &secs, &state, &info) == nil {
			fmt.Fprintf(&b, "  %d %s db=%s %s %ds %q %q\n", id, user, db.String, cmd, secs, state.String, info.String)
		}
	}
	return b.String()
}

// nextChanges returns the next batch that holds changes, passing over heartbeats (empty End
// batches), which other tests' writes to the shared server can cause at any time.
func (r *running) nextChanges(t *testing.T, timeout time.Duration) change.Batch {
	t.Helper()
	for {
		if b := r.next(t, timeout); len(b.Changes) > 0 {
			return b
		}
	}
}

// changesUntil collects changes until pred holds for one of them (then up to its End batch).
func (r *running) changesUntil(t *testing.T, pred func(change.Change) bool) ([]change.Change, change.Batch) {
	t.Helper()
	var all []change.Change
	found := false
	for {
		wait := r.wait
		if wait == 0 {
			wait = 20 * time.Second
		}
		b := r.next(t, wait)
		for _, c := range b.Changes {
			if !found {
				all = append(all, c)
			}
			found = found || pred(c)
		}
		if found && b.End {
			return all, b
		}
	}
}

// gtidPos reads the server's current MariaDB GTID position.
func gtidPos(t testing.TB, db *sql.DB) binlogpos.Position {
	t.Helper()
	var s string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&s); err != nil {
		t.Fatal(err)
	}
	set, err := binlogpos.ParseMariaDBGTIDs(s)
	if err != nil {
		t.Fatal(err)
	}
	return binlogpos.Position{MariaDB: set}
}

// filePos reads SHOW MASTER STATUS.
func filePos(t testing.TB, db *sql.DB) binlogpos.Position {
	t.Helper()
	p, err := masterStatus(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return binlogpos.Position{File: p.File, Offset: p.Offset}
}

// render writes changes in the package's debug form, one line per change.
func render(changes []change.Change) string {
	var b strings.Builder
	for _, c := range changes {
		fmt.Fprintf(&b, "%s %s v%d", c.Op, c.Schema.Table.Table, c.Schema.Version)
		if c.Op == change.SchemaChange {
			for _, col := range c.Schema.Columns {
				fmt.Fprintf(&b, " %s:%s", col.Name, col.SQLType)
			}
		}
		b.WriteByte('\n')
		for _, part := range []struct {
			name string
			row  change.Row
		}{{"before", c.Before}, {"after", c.After}} {
			if part.row == nil {
				continue
			}
			fmt.Fprintf(&b, "  %s:\n", part.name)
			for i, v := range part.row {
				fmt.Fprintf(&b, "    %s=%s\n", c.Schema.Columns[i].Name, schema.DescribeValue(v))
			}
		}
	}
	return b.String()
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s", path, got)
	}
}

// keysOf returns the key value text of each row change, for order and duplicate checks.
func keysOf(changes []change.Change) []string {
	var out []string
	for _, c := range changes {
		row := c.After
		if c.Op == change.Delete {
			row = c.Before
		}
		if row == nil {
			continue
		}
		out = append(out, schema.DescribeValue(row[c.Schema.Key[0]]))
	}
	return out
}

// isRow reports whether c is a row change (not a SchemaChange).
func isRow(c change.Change) bool { return c.Op != change.SchemaChange }
