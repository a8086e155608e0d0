//go:build integration

package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/ingestkit/ingest/cdc"
	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
)

// workload changes a table continuously: inserts, updates, deletes and primary key changes,
// each bumping the row's version, with payload "id:version" and ts = 1e6+id seconds.
type workload struct {
	db    *sql.DB
	mu    sync.Mutex
	live  []int64        // ids no writer is working on
	used  map[int64]bool // every id ever used: ids are never reused
	rng   *rand.Rand
	ops   atomic.Int64
	maxID int64
	// textKey: the primary key is k, a text in a case-insensitive collation made from id
	// (textKeyTable).
	textKey bool
}

const workloadTable = "CREATE TABLE t (id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload VARCHAR(40), ts TIMESTAMP(6) NULL)"

// textKeyTable is workloadTable keyed by k, a text in the collation %s made from id whose
// first letters and case vary with id (textKey): "ß" or "ss" or "SS", then "k" or "K", the
// id, "é" or "É". The server's order of k differs from its byte order in every
// case-insensitive collation, and between general_ci (ß = s) and the UCA ones (ß = ss), so
// chunks placed by the wrong order would lose rows or let values go backwards.
const textKeyTable = "CREATE TABLE t (id BIGINT NOT NULL UNIQUE, version BIGINT NOT NULL, payload VARCHAR(40), ts TIMESTAMP(6) NULL, " +
	"k VARCHAR(24) CHARACTER SET %[1]s COLLATE %[2]s NOT NULL PRIMARY KEY)"

// textKeySQL is textKey in SQL, of the column or expression %[1]s.
const textKeySQL = "CONCAT(IF(%[1]s %% 4 = 0, 'ß', IF(%[1]s %% 5 = 0, 'SS', 'ss')), IF(%[1]s %% 3 = 0, 'K', 'k'), LPAD(%[1]s, 12, '0'), IF(%[1]s %% 7 < 3, 'é', 'É'))"

func textKey(id int64) string {
	s, k, e := "ss", "k", "É"
	switch {
	case id%4 == 0:
		s = "ß"
	case id%5 == 0:
		s = "SS"
	}
	if id%3 == 0 {
		k = "K"
	}
	if id%7 < 3 {
		e = "é"
	}
	return fmt.Sprintf("%s%s%012d%s", s, k, id, e)
}

func newWorkload(t *testing.T, db *sql.DB, rows int) *workload {
	return newWorkloadOf(t, db, rows, "")
}

// newWorkloadOf is newWorkload on textKeyTable in the collation keyCollation, unless empty.
func newWorkloadOf(t *testing.T, db *sql.DB, rows int, keyCollation string) *workload {
	create, key := workloadTable, ""
	if keyCollation != "" {
		charset, _, _ := strings.Cut(keyCollation, "_")
		create, key = fmt.Sprintf(textKeyTable, charset, keyCollation), ", "+fmt.Sprintf(textKeySQL, "seq * 10")
	}
	testenv.Exec(t, db, create,
		fmt.Sprintf("INSERT INTO t SELECT seq * 10, 1, CONCAT(seq * 10, ':1'), FROM_UNIXTIME(1000000 + seq * 10)%s FROM seq_1_to_%d", key, rows),
		"ANALYZE TABLE t")
	w := &workload{db: db, used: map[int64]bool{}, rng: rand.New(rand.NewPCG(1, 2)), maxID: int64(rows) * 10, textKey: keyCollation != ""}
	for i := 1; i <= rows; i++ {
		w.live = append(w.live, int64(i)*10)
		w.used[int64(i)*10] = true
	}
	return w
}

func (w *workload) take() (int64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.live) == 0 {
		return 0, false
	}
	i := w.rng.IntN(len(w.live))
	id := w.live[i]
	w.live[i] = w.live[len(w.live)-1]
	w.live = w.live[:len(w.live)-1]
	return id, true
}

func (w *workload) give(ids ...int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.live = append(w.live, ids...)
}

// fresh returns an id never used, anywhere in the key space (so rows move between chunks).
func (w *workload) fresh() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		id := w.rng.Int64N(w.maxID + w.maxID/10)
		if !w.used[id] {
			w.used[id] = true
			return id
		}
	}
}

func (w *workload) pick() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rng.IntN(10)
}

// run changes rows until stop is closed. Statements are never cancelled half-way: a
// cancelled statement may still commit on the server after the client gave up on it.
func (w *workload) run(stop <-chan struct{}) error {
	ctx := context.Background()
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET time_zone = '+05:30'"); err != nil {
		return err
	}
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		if err := w.step(ctx, conn); err != nil {
			return err
		}
		w.ops.Add(1)
	}
}

func (w *workload) step(ctx context.Context, conn *sql.Conn) error {
	const update = "UPDATE t SET version = version + 1, payload = CONCAT(id, ':', version) WHERE id = ?"
	switch op := w.pick(); {
	case op < 2:
		id := w.fresh()
		var err error
		if w.textKey {
			_, err = conn.ExecContext(ctx, "INSERT INTO t (id, version, payload, ts, k) VALUES (?, 1, CONCAT(?, ':1'), FROM_UNIXTIME(1000000 + ?), ?)", id, id, id, textKey(id))
		} else {
			_, err = conn.ExecContext(ctx, "INSERT INTO t (id, version, payload, ts) VALUES (?, 1, CONCAT(?, ':1'), FROM_UNIXTIME(1000000 + ?))", id, id, id)
		}
		w.give(id)
		return err
	case op < 3:
		id, ok := w.take()
		if !ok {
			return nil
		}
		_, err := conn.ExecContext(ctx, "DELETE FROM t WHERE id = ?", id)
		return err
	case op < 5:
		id, ok := w.take()
		if !ok {
			return nil
		}
		to := w.fresh()
		var err error
		if w.textKey {
			_, err = conn.ExecContext(ctx, "UPDATE t SET id = ?, k = ?, version = version + 1, payload = CONCAT(id, ':', version), ts = FROM_UNIXTIME(1000000 + ?) WHERE id = ?", to, textKey(to), to, id)
		} else {
			_, err = conn.ExecContext(ctx, "UPDATE t SET id = ?, version = version + 1, payload = CONCAT(id, ':', version), ts = FROM_UNIXTIME(1000000 + ?) WHERE id = ?", to, to, id)
		}
		w.give(to)
		return err
	case op < 8:
		id, ok := w.take()
		if !ok {
			return nil
		}
		_, err := conn.ExecContext(ctx, update, id)
		w.give(id)
		return err
	default: // a transaction of several updates
		a, ok1 := w.take()
		b, ok2 := w.take()
		defer func() {
			if ok1 {
				w.give(a)
			}
			if ok2 {
				w.give(b)
			}
		}()
		if !ok1 || !ok2 {
			return nil
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for _, id := range []int64{a, b, a} {
			if _, err := tx.ExecContext(ctx, update, id); err != nil {
				tx.Rollback()
				return err
			}
		}
		return tx.Commit()
	}
}

// checker follows what a consumer keeping the last value per key would see.
type checker struct {
	t       *testing.T
	state   map[int64]keyState
	records int
	repeats bool // at-least-once: a version may come again (never an older one)
}

type keyState struct {
	version int64
	deleted bool
}

func newChecker(t *testing.T) *checker { return &checker{t: t, state: map[int64]keyState{}} }

// change applies a change as the sink writes it: a key-changing update is a tombstone of the
// old key, then the new row.
func (c *checker) change(ch change.Change) {
	switch ch.Op {
	case change.Insert:
		c.upsert(ch.After)
	case change.Delete:
		c.tombstone(ch.Before[0].Int())
	case change.Update:
		if ch.Before[0].Int() != ch.After[0].Int() {
			c.tombstone(ch.Before[0].Int())
		}
		c.upsert(ch.After)
	}
}

func (c *checker) upsert(row change.Row) {
	c.records++
	id, version := row[0].Int(), row[1].Int()
	if got, want := string(row[2].Bytes), fmt.Sprintf("%d:%d", id, version); got != want {
		c.t.Errorf("id %d: payload %q, want %q", id, got, want)
	}
	if ts := change.TimestampValue((1000000 + id) * 1e6); row[3].Kind != ts.Kind || row[3].Num != ts.Num {
		c.t.Errorf("id %d: ts %+v, want %+v", id, row[3], ts)
	}
	prev, seen := c.state[id]
	switch {
	case seen && prev.deleted:
		c.t.Errorf("id %d: version %d after its tombstone (ids are never reused)", id, version)
	case seen && (version < prev.version || version == prev.version && !c.repeats):
		c.t.Errorf("id %d: version %d after version %d: the value went backwards or repeated", id, version, prev.version)
	}
	c.state[id] = keyState{version: version}
}

func (c *checker) tombstone(id int64) {
	c.records++
	prev := c.state[id]
	c.state[id] = keyState{version: prev.version, deleted: true}
}

// matches compares the materialised state with the table.
func (c *checker) matches(db *sql.DB) {
	rows, err := db.Query("SELECT id, version FROM t")
	if err != nil {
		c.t.Fatal(err)
	}
	defer rows.Close()
	table := map[int64]int64{}
	for rows.Next() {
		var id, version int64
		if err := rows.Scan(&id, &version); err != nil {
			c.t.Fatal(err)
		}
		table[id] = version
	}
	for id, version := range table {
		if st, ok := c.state[id]; !ok || st.deleted || st.version != version {
			c.t.Errorf("id %d: table has version %d, consumer has %+v (present %v)", id, version, st, ok)
		}
	}
	for id, st := range c.state {
		if _, ok := table[id]; !ok && !st.deleted {
			c.t.Errorf("id %d: consumer has version %d, the table has no row", id, st.version)
		}
	}
}

// streamTable reads the binlog from one position to another and calls fn with each
// transaction's changes to tbl and the position just after it: a stand-in for cdc.Source.
func streamTable(ctx context.Context, cfg Config, tbl *table, from, to binlogpos.Position, fn func(change.Batch, binlogpos.Position)) error {
	host, port, _ := net.SplitHostPort(cfg.Addr)
	p, _ := strconv.Atoi(port)
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID: cfg.ServerIDs.First, Flavor: mysql.MariaDBFlavor, Host: host, Port: uint16(p), User: cfg.User,
		Password: cfg.Password, ParseTime: true, TimestampStringLocation: time.UTC, Logger: slog.New(slog.DiscardHandler),
	})
	defer syncer.Close()
	stream, err := syncer.StartSync(mysql.Position{Name: from.File, Pos: from.Offset})
	if err != nil {
		return err
	}
	file := from.File
	var batch change.Batch
	for {
		ev, err := stream.GetEvent(ctx)
		if err != nil {
			return err
		}
		switch e := ev.Event.(type) {
		case *replication.RotateEvent:
			file = string(e.NextLogName)
			continue
		case *replication.RowsEvent:
			if string(e.Table.Schema) == tbl.id.DB && string(e.Table.Table) == tbl.id.Table {
				if err := appendChanges(&batch, tbl, e); err != nil {
					return err
				}
			}
		case *replication.XIDEvent:
			pos := binlogpos.Position{File: file, Offset: ev.Header.LogPos}
			batch.End = true
			fn(batch, pos)
			batch = change.Batch{}
		}
		if c, _ := (binlogpos.Position{File: file, Offset: ev.Header.LogPos}).Compare(to); ev.Header.LogPos != 0 && c >= 0 {
			return nil
		}
	}
}

func appendChanges(b *change.Batch, tbl *table, e *replication.RowsEvent) error {
	op := map[replication.EnumRowsEventType]change.Op{replication.EnumRowsEventTypeInsert: change.Insert,
		replication.EnumRowsEventTypeUpdate: change.Update, replication.EnumRowsEventTypeDelete: change.Delete}[e.Type()]
	step := 1
	if op == change.Update {
		step = 2
	}
	for i := 0; i+step <= len(e.Rows); i += step {
		row, err := decodeBinlog(tbl, e.Rows[i])
		if err != nil {
			return err
		}
		c := change.Change{Schema: tbl.desc.Schema, Op: op}
		switch op {
		case change.Insert:
			c.After = row
		case change.Delete:
			c.Before = row
		case change.Update:
			c.Before = row
			if c.After, err = decodeBinlog(tbl, e.Rows[i+1]); err != nil {
				return err
			}
		}
		b.Changes = append(b.Changes, c)
	}
	return nil
}

func masterPosition(t *testing.T, db *sql.DB) binlogpos.Position {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pos, err := masterStatus(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

// streamFunc streams the changes to tbl from one position to another, calling fn with each
// source transaction and the position after it.
type streamFunc func(ctx context.Context, cfg Config, tbl *table, from, to binlogpos.Position, fn func(change.Batch, binlogpos.Position)) error

// TestSnapshotUnderWrites runs a parallel snapshot while writers change the table, then
// streams the binlog from the hand-off start through the Handoff filter: per key the versions
// a consumer sees only increase, and its final state equals the table. The stream is read
// with the test's own reader, and with cdc.Source as the runner will.
func TestSnapshotUnderWrites(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		t.Run("own reader", func(t *testing.T) { snapshotUnderWrites(t, srv, streamTable, "", "") })
		t.Run("cdc.Source", func(t *testing.T) { snapshotUnderWrites(t, srv, sourceStream, "", "") })
		t.Run("general_ci text key", func(t *testing.T) { snapshotUnderWrites(t, srv, sourceStream, "", "utf8mb4_general_ci") })
		t.Run("uca1400_ai_ci text key", func(t *testing.T) { snapshotUnderWrites(t, srv, sourceStream, "", "utf8mb4_uca1400_ai_ci") })
		t.Run("latin1_german2_ci text key", func(t *testing.T) { snapshotUnderWrites(t, srv, sourceStream, "", "latin1_german2_ci") })
	})
}

// TestSnapshotDuringAddColumn is TestSnapshotUnderWrites with an ALTER TABLE … ADD COLUMN
// once a tenth of the chunks are read: the snapshot carries on, the chunks read after it
// have the new column, and nothing is lost or goes backwards.
func TestSnapshotDuringAddColumn(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		snapshotUnderWrites(t, srv, sourceStream, "ALTER TABLE t ADD COLUMN x1 INT NOT NULL DEFAULT 7", "")
	})
}

// sourceStream streams with cdc.Source, joining the batches of each transaction.
func sourceStream(ctx context.Context, cfg Config, tbl *table, from, to binlogpos.Position, fn func(change.Batch, binlogpos.Position)) error {
	src, err := cdc.New(cdc.Config{Addr: cfg.Addr, User: cfg.User, Password: cfg.Password,
		ServerID: cdc.ServerIDRange{First: cfg.ServerIDs.First}, Position: from, StopAt: to,
		Tables: func(db, table string) bool { return db == tbl.id.DB && table == tbl.id.Table }})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make(chan change.Batch, 16)
	errc := make(chan error, 1)
	go func() { errc <- src.Run(ctx, out); close(out) }()
	var pending []change.Change
	for b := range out {
		pending = append(pending, b.Changes...)
		if !b.End {
			continue
		}
		pos, err := binlogpos.ParsePosition(string(b.Position))
		if err != nil {
			cancel()
			<-errc
			return err
		}
		fn(change.Batch{Changes: pending, End: true, CommitTime: b.CommitTime}, pos)
		pending = nil
	}
	return <-errc
}

// snapshotUnderWrites runs the scenario of TestSnapshotUnderWrites, with ddl (unless empty)
// run once the snapshot has emitted some chunks, on textKeyTable in keyCollation unless
// empty.
func snapshotUnderWrites(t *testing.T, srv testenv.Server, stream streamFunc, ddl, keyCollation string) {
	name, db := srv.Database(t)
	w := newWorkloadOf(t, db, 20000, keyCollation)
	id := change.TableID{DB: name, Table: "t"}
	cfg := testConfig(srv, id)
	cfg.ChunkSize, cfg.Parallelism, cfg.FetchSize = 300, 2, 100

	stop := make(chan struct{})
	var writers sync.WaitGroup
	werrs := make(chan error, 3)
	for range 3 {
		writers.Add(1)
		go func() { defer writers.Done(); werrs <- w.run(stop) }()
	}
	time.Sleep(100 * time.Millisecond)
	s := New(cfg)
	ddlDone := make(chan error, 1)
	if ddl != "" {
		go func() { ddlDone <- alterDuring(db, s, ddl) }()
	} else {
		ddlDone <- nil
	}
	batches, err := runSnapshot(t, s)
	opsDuring := w.ops.Load()
	if derr := <-ddlDone; derr != nil {
		t.Fatalf("%s: %v", ddl, derr)
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	writers.Wait()
	close(werrs)
	for err := range werrs {
		if err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	end := masterPosition(t, db)
	checkTransactions(t, batches, cfg.FetchSize)

	c := newChecker(t)
	for _, b := range batches {
		for _, ch := range b.Changes {
			c.change(ch)
		}
	}
	snapshotRecords := c.records
	h, err := s.Handoff(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	tbl, _ := testTable(t, cfg, id)
	skipped, streamed := 0, 0
	sctx, scancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer scancel()
	err = stream(sctx, s.cfg, tbl, h.Start(), end, func(b change.Batch, pos binlogpos.Position) {
		kept, err := h.Filter(sctx, b, pos)
		if err != nil {
			t.Error(err)
			return
		}
		skipped += len(b.Changes) - len(kept.Changes)
		streamed += len(kept.Changes)
		for _, ch := range kept.Changes {
			c.change(ch)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	c.matches(db)
	t.Logf("%d writer ops during the snapshot (%d in all); %d chunks, %d binlog windows merged; %d snapshot records; stream from %s: %d changes skipped, %d kept",
		opsDuring, w.ops.Load(), len(s.Progress().Chunks), s.windows(), snapshotRecords, h.Start(), skipped, streamed)
	if opsDuring < 100 || s.windows() == 0 || skipped == 0 {
		t.Errorf("the test did not exercise the merge: %d ops, %d windows, %d skipped", opsDuring, s.windows(), skipped)
	}
	if ddl != "" {
		widths := map[int]int{}
		for _, b := range batches {
			for _, ch := range b.Changes {
				widths[len(ch.After)]++
			}
		}
		t.Logf("snapshot rows by column count: %v", widths)
		if widths[4] == 0 || widths[5] == 0 {
			t.Errorf("the DDL did not fall inside the snapshot: rows by column count %v", widths)
		}
	}
}

// alterDuring runs ddl once s has emitted a tenth of its chunks, or gives up after a minute.
func alterDuring(db *sql.DB, s *Snapshot, ddl string) error {
	deadline := time.Now().Add(time.Minute)
	for len(s.Progress().Chunks) < 6 {
		if time.Now().After(deadline) {
			return fmt.Errorf("the snapshot emitted no chunks in a minute")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, err := db.Exec(ddl)
	return err
}
