package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// The workload tables: an integer key, a string, a decimal, the version and a datetime, plus
// the columns that DDL adds (x1, x2, …) and drops again.
const createTable = `CREATE TABLE %s (
  id INT NOT NULL PRIMARY KEY,
  v VARCHAR(64) NULL,
  n DECIMAL(10,2) NULL,
  version BIGINT NOT NULL,
  ts DATETIME(3) NULL
)`

// OptionalColumn reports whether a column is one the workload's DDL adds and drops: a record
// captured before the DDL lacks it (or still has it), which the contract allows.
func OptionalColumn(name string) bool { return strings.HasPrefix(name, "x") }

// extraTypes are the types of the columns DDL adds, with their defaults.
var extraTypes = []string{
	"INT NOT NULL DEFAULT 7",
	`VARCHAR(20) NULL DEFAULT 'd"q\\'`,
	"DECIMAL(6,3) NOT NULL DEFAULT 1.500",
	"DATETIME(3) NULL DEFAULT '2020-01-02 03:04:05.600'",
}

// Workload writes random changes to the tables of one database: inserts, updates, deletes,
// primary-key changes, range updates, updates of DDL-added columns, ADD and DROP COLUMN, and
// large transactions. It is the only writer of its tables: ids are never used twice (a
// primary-key change moves a row to a fresh id), so each key lives once, and every change of a
// row adds one to its version.
type Workload struct {
	// DB is a connection pool on the database; Database its name; Tables the tables.
	DB       *sql.DB
	Database string
	Tables   []string
	// Rate is the number of transactions per second.
	Rate float64
	// BigEvery is how often a large transaction (BigRows rows inserted or updated) is
	// written; 0 for never.
	BigEvery time.Duration
	BigRows  int
	// DDLEvery is how often one ADD or DROP COLUMN is run; 0 for never.
	DDLEvery time.Duration
	// Seed seeds the random choices.
	Seed uint64

	mu      sync.Mutex
	rng     *rand.Rand
	next    map[string]int64    // the next fresh id per table
	extra   map[string][]string // the DDL-added columns per table, oldest first
	columns int                 // DDL-added columns so far (their names' numbers)
	stats   WorkloadStats
}

// WorkloadStats count what the workload did.
type WorkloadStats struct {
	Transactions, Big, DDL, Errors int
	// LastError is the last statement error (errors are expected while a server restarts).
	LastError error
}

// String summarises the stats.
func (s WorkloadStats) String() string {
	return fmt.Sprintf("%d transactions (%d large), %d DDL, %d errors (last: %v)", s.Transactions, s.Big, s.DDL, s.Errors, s.LastError)
}

// Create creates the tables with rows[i] rows in table i (ids 1..rows[i]).
func (w *Workload) Create(ctx context.Context, rows []int) error {
	w.init()
	for i, table := range w.Tables {
		if _, err := w.DB.ExecContext(ctx, fmt.Sprintf(createTable, quoteIdent(table))); err != nil {
			return fmt.Errorf("workload: create %s: %w", table, err)
		}
		for lo := 1; lo <= rows[i]; lo += 1000 {
			hi := min(lo+999, rows[i])
			if err := w.insertRange(ctx, w.DB, table, int64(lo), int64(hi)); err != nil {
				return err
			}
		}
		w.next[table] = int64(rows[i]) + 1
	}
	return nil
}

func (w *Workload) init() {
	if w.rng != nil {
		return
	}
	w.rng = rand.New(rand.NewPCG(w.Seed, w.Seed^0x9e3779b97f4a7c15))
	w.next = map[string]int64{}
	w.extra = map[string][]string{}
}

// Stats returns what the workload did so far.
func (w *Workload) Stats() WorkloadStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// Start runs the workload in a goroutine until the returned function is called; that
// function returns once no statement of the workload is in flight any more. Statements are
// never cancelled: a statement cancelled on the client side may still commit, and the checker
// must compare with a table that no longer changes.
func (w *Workload) Start() (stop func() WorkloadStats) {
	w.init()
	ch := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.run(ch)
	}()
	return func() WorkloadStats {
		close(ch)
		<-done
		return w.Stats()
	}
}

// run writes until stop is closed.
func (w *Workload) run(stop <-chan struct{}) {
	ctx := context.Background()
	w.loadExtras(ctx)
	tick := time.NewTicker(time.Duration(float64(time.Second) / w.Rate))
	defer tick.Stop()
	lastBig, lastDDL := time.Now(), time.Now()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		var err error
		switch now := time.Now(); {
		case w.DDLEvery > 0 && now.Sub(lastDDL) >= w.DDLEvery:
			lastDDL = now
			err = w.ddl(ctx)
		case w.BigEvery > 0 && now.Sub(lastBig) >= w.BigEvery:
			lastBig = now
			err = w.big(ctx)
		default:
			err = w.transaction(ctx)
		}
		w.count(err)
		if err != nil {
			time.Sleep(100 * time.Millisecond) // a server restarting: do not spin
		}
	}
}

func (w *Workload) count(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stats.Transactions++
	if err != nil {
		w.stats.Errors++
		w.stats.LastError = err
	}
}

// loadExtras reads the DDL-added columns of each table (after an error their set is
// uncertain).
func (w *Workload) loadExtras(ctx context.Context) {
	for _, table := range w.Tables {
		cols, err := tableColumns(ctx, w.DB, w.Database, table)
		if err != nil {
			continue // the server may be down; the next DDL reads them again
		}
		var extra []string
		for _, c := range cols {
			if OptionalColumn(c.Name) {
				extra = append(extra, c.Name)
				var n int
				if _, err := fmt.Sscanf(c.Name, "x%d", &n); err == nil {
					w.columns = max(w.columns, n)
				}
			}
		}
		w.extra[table] = extra
	}
}

// transaction writes one transaction of one to four random changes.
func (w *Workload) transaction(ctx context.Context) error {
	tx, err := w.DB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("workload: begin: %w", err)
	}
	for range 1 + w.rng.IntN(4) {
		if err := w.change(ctx, tx, w.Tables[w.rng.IntN(len(w.Tables))]); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("workload: commit: %w", err)
	}
	return nil
}

// change writes one random change to table.
func (w *Workload) change(ctx context.Context, tx *sql.Tx, table string) error {
	t := quoteIdent(table)
	id := w.existingID(table)
	var q string
	var args []any
	switch p := w.rng.IntN(100); {
	case p < 30:
		lo := w.fresh(table, 1+w.rng.IntN(3))
		return w.insertRange(ctx, tx, table, lo, w.next[table]-1)
	case p < 60:
		q, args = "UPDATE "+t+" SET v = ?, n = ?, ts = ?, version = version + 1 WHERE id = ?", []any{w.str(20), w.decimal(), w.datetime(), id}
	case p < 70:
		q, args = "DELETE FROM "+t+" WHERE id = ?", []any{id}
	case p < 80:
		q, args = "UPDATE "+t+" SET id = ?, version = version + 1 WHERE id = ?", []any{w.fresh(table, 1), id}
	case p < 90:
		q, args = "UPDATE "+t+" SET n = ?, version = version + 1 WHERE id BETWEEN ? AND ?", []any{w.decimal(), id, id + 5 + int64(w.rng.IntN(25))}
	default:
		extra := w.extra[table]
		if len(extra) == 0 {
			q, args = "UPDATE "+t+" SET v = ?, version = version + 1 WHERE id = ?", []any{w.str(20), id}
			break
		}
		col := extra[w.rng.IntN(len(extra))]
		q, args = fmt.Sprintf("UPDATE %s SET %s = ?, version = version + 1 WHERE id = ?", t, quoteIdent(col)), []any{w.extraValue(col), id}
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("workload: %s: %w", q, err)
	}
	return nil
}

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// insertRange inserts the rows with ids lo..hi (version 1) in one statement.
func (w *Workload) insertRange(ctx context.Context, db execer, table string, lo, hi int64) error {
	var b strings.Builder
	args := make([]any, 0, 4*(hi-lo+1))
	fmt.Fprintf(&b, "INSERT INTO %s (id, v, n, version, ts) VALUES ", quoteIdent(table))
	for id := lo; id <= hi; id++ {
		if id > lo {
			b.WriteByte(',')
		}
		b.WriteString("(?, ?, ?, 1, ?)")
		args = append(args, id, w.str(20), w.decimal(), w.datetime())
	}
	if _, err := db.ExecContext(ctx, b.String(), args...); err != nil {
		return fmt.Errorf("workload: insert %d rows into %s: %w", hi-lo+1, table, err)
	}
	return nil
}

// big writes one large transaction: BigRows new rows, or an update of up to BigRows rows.
func (w *Workload) big(ctx context.Context) error {
	w.mu.Lock()
	w.stats.Big++
	w.mu.Unlock()
	table := w.Tables[w.rng.IntN(len(w.Tables))]
	tx, err := w.DB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("workload: begin: %w", err)
	}
	if w.rng.IntN(2) == 0 {
		lo := w.fresh(table, w.BigRows)
		for from := lo; from < lo+int64(w.BigRows) && err == nil; from += 500 {
			err = w.insertRange(ctx, tx, table, from, min(from+499, lo+int64(w.BigRows)-1))
		}
	} else {
		from := w.existingID(table)
		_, err = tx.ExecContext(ctx, "UPDATE "+quoteIdent(table)+" SET v = ?, version = version + 1 WHERE id >= ? AND id < ?",
			w.str(20), from, from+int64(w.BigRows))
	}
	if err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("workload: large transaction: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("workload: commit a large transaction: %w", err)
	}
	return nil
}

// ddl adds a column (up to two per table) or drops the oldest added one.
func (w *Workload) ddl(ctx context.Context) error {
	w.mu.Lock()
	w.stats.DDL++
	w.mu.Unlock()
	table := w.Tables[w.rng.IntN(len(w.Tables))]
	extra := w.extra[table]
	var q string
	if len(extra) == 0 || (len(extra) < 2 && w.rng.IntN(2) == 0) {
		w.columns++
		col := fmt.Sprintf("x%d", w.columns)
		q = fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", quoteIdent(table), col, extraTypes[w.columns%len(extraTypes)])
	} else {
		q = fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s", quoteIdent(table), quoteIdent(extra[0]))
	}
	_, err := w.DB.ExecContext(ctx, q)
	w.loadExtras(ctx)
	if err != nil {
		return fmt.Errorf("workload: %s: %w", q, err)
	}
	return nil
}

// fresh allocates n ids never used in table and returns the first.
func (w *Workload) fresh(table string, n int) int64 {
	id := w.next[table]
	w.next[table] += int64(n)
	return id
}

// existingID returns an id that was allocated (the row may be gone since).
func (w *Workload) existingID(table string) int64 {
	return 1 + w.rng.Int64N(max(w.next[table]-1, 1))
}

// pieces are what random strings are made of: ASCII, quotes, a backslash, control
// characters, and multi-byte UTF-8.
var pieces = []string{"a", "b", "Zz", "0", " ", "é", "ü", "漢", "🚀", `"`, `\`, "'", "\t", "\n", "\r", "\x01", "\x1f", "<&>", "\u2028"}

// str returns a random string of at most n pieces, or nil (NULL) now and then.
func (w *Workload) str(n int) any {
	if w.rng.IntN(20) == 0 {
		return nil
	}
	var b strings.Builder
	for range w.rng.IntN(n + 1) {
		b.WriteString(pieces[w.rng.IntN(len(pieces))])
	}
	s := b.String()
	if len([]rune(s)) > 20 {
		s = string([]rune(s)[:20])
	}
	return s
}

// decimal returns a random DECIMAL(10,2) value as text, or nil now and then.
func (w *Workload) decimal() any {
	if w.rng.IntN(20) == 0 {
		return nil
	}
	sign := ""
	if w.rng.IntN(3) == 0 {
		sign = "-"
	}
	return fmt.Sprintf("%s%d.%02d", sign, w.rng.IntN(100_000_000), w.rng.IntN(100))
}

// datetime returns a random DATETIME(3) value as text (often with trailing zeros in the
// fraction, or none), or nil now and then.
func (w *Workload) datetime() any {
	if w.rng.IntN(20) == 0 {
		return nil
	}
	t := time.Date(2000+w.rng.IntN(30), time.Month(1+w.rng.IntN(12)), 1+w.rng.IntN(28),
		w.rng.IntN(24), w.rng.IntN(60), w.rng.IntN(60), 0, time.UTC)
	ms := []int{0, 0, 100, 120, w.rng.IntN(1000)}[w.rng.IntN(5)]
	return fmt.Sprintf("%s.%03d", t.Format(time.DateTime), ms)
}

// extraValue returns a random value for a DDL-added column.
func (w *Workload) extraValue(col string) any {
	var n int
	_, _ = fmt.Sscanf(col, "x%d", &n)
	switch n % len(extraTypes) {
	case 0:
		return w.rng.IntN(1_000_000) - 500_000
	case 1:
		return w.str(6)
	case 2:
		return fmt.Sprintf("%d.%03d", w.rng.IntN(1000), w.rng.IntN(1000))
	default:
		return w.datetime()
	}
}
