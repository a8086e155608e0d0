package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/fault"
)

// Snapshot reads the initial snapshot of a set of tables. Create it with [New]; call Run
// once.
type Snapshot struct {
	cfg    Config
	err    error // from the config, returned by Run
	ledger *ledger
	stats  map[change.TableID]*TableProgress // owned by the emitter while Run runs
	// windows counts the binlog windows read to merge chunks (for tests and logs).
	windows func() int64
}

// New returns a snapshot of cfg. An invalid config is reported by Run.
func New(cfg Config) *Snapshot {
	c, err := cfg.withDefaults()
	return &Snapshot{cfg: c, err: err, ledger: newLedger(cfg.Resume), stats: map[change.TableID]*TableProgress{}}
}

// Run reads every chunk not finished in Config.Resume and sends it to out as one source
// transaction: batches of at most FetchSize inserts (Batch.CommitTime is the time the chunk
// was read), the last with End set and Position holding a progress token instead of a binlog
// position (see [IsToken] and [Snapshot.ProgressAt]). A chunk without rows is one empty End
// batch. After the last chunk Run sends one more empty End batch whose token's progress has
// Done set, and returns nil. Batches of different chunks never interleave.
//
// Run returns the first error of any part (with the table, chunk range and positions it
// concerns) or the context's error, after every goroutine it started has stopped. A lost
// connection (the server restarted, a reader's connection killed) is marked retryable
// (internal/fault): the caller may run a new Snapshot from the progress it stored, which
// reads only the chunks not finished; what the server refuses (access denied, a missing
// grant) is marked terminal.
func (s *Snapshot) Run(ctx context.Context, out chan<- change.Batch) (err error) {
	defer func() { err = fault.MySQL(err) }()
	if s.err != nil {
		return s.err
	}
	if s.cfg.Resume != nil && s.cfg.Resume.Done {
		return nil
	}
	db, err := s.cfg.openDB()
	if err != nil {
		return err
	}
	defer db.Close()
	mariaDB, err := isMariaDB(ctx, db)
	if err != nil {
		return err
	}
	tables, err := s.listTables(ctx, db)
	if err != nil {
		return err
	}
	todo, err := s.todo(ctx, tables)
	if err != nil {
		return err
	}
	window, err := newBinlogWindow(&s.cfg, mariaDB)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	s.windows = window.reads.Load
	return s.run(ctx, db, todo, &watermarks{mariaDB: mariaDB}, newShapes(db, &s.cfg, tables), window, out)
}

// run starts the planner, the readers and the emitter, connected by bounded channels.
func (s *Snapshot) run(ctx context.Context, db *sql.DB, todo []tableGaps, marks *watermarks, sh *shapes, window *binlogWindow, out chan<- change.Batch) error {
	g, ctx := errgroup.WithContext(ctx)
	spans := make(chan span, s.cfg.Parallelism)
	pieces := make(chan piece, s.cfg.Parallelism)
	g.Go(func() error { return s.plan(ctx, db, todo, spans) })
	readers, rctx := errgroup.WithContext(ctx)
	for range s.cfg.Parallelism {
		readers.Go(func() error { return s.readLoop(rctx, db, marks, sh, window, spans, pieces) })
	}
	g.Go(func() error {
		err := readers.Wait()
		if err == nil {
			close(pieces)
		}
		return err
	})
	g.Go(func() error { return s.emit(ctx, pieces, out) })
	return g.Wait()
}

// tableGaps is a table with the key ranges still to read.
type tableGaps struct {
	t    *table
	gaps []span
}

// plan splits every table's gaps into chunks and sends them to spans, which it closes only
// when every table is planned.
func (s *Snapshot) plan(ctx context.Context, db *sql.DB, todo []tableGaps, spans chan<- span) error {
	p := &planner{db: db, size: s.cfg.ChunkSize}
	for _, tg := range todo {
		method, err := p.plan(ctx, tg.t, tg.gaps, func(sp span) error {
			select {
			case spans <- sp:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if err != nil {
			return err
		}
		s.cfg.Logger.Debug("snapshot: table planned", slog.String("table", tg.t.id.String()), slog.Int("method", int(method)))
	}
	close(spans)
	return nil
}

// readLoop reads chunks on a connection of its own until spans is closed.
func (s *Snapshot) readLoop(ctx context.Context, db *sql.DB, marks *watermarks, sh *shapes, window *binlogWindow, spans <-chan span, pieces chan<- piece) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("snapshot: connect: %w", err)
	}
	defer conn.Close()
	rowConn, err := s.cfg.openRowConn(ctx)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer rowConn.Close()
	r := &reader{conn: conn, rowConn: rowConn, marks: marks, window: window, ledger: s.ledger, shapes: sh,
		limit: 2 * s.cfg.ChunkSize}
	if s.cfg.Resume != nil && s.cfg.Resume.Since != "" {
		if r.since, err = binlogpos.ParsePosition(s.cfg.Resume.Since); err != nil {
			return fmt.Errorf("snapshot: resume: since: %w", err)
		}
	}
	send := func(p piece) error {
		select {
		case pieces <- p:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for {
		select {
		case sp, ok := <-spans:
			if !ok {
				return nil
			}
			if err := r.read(ctx, sp, send); err != nil {
				return fmt.Errorf("snapshot: %w", err)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// emit sends each piece as batches, records it in the ledger, and ends with the marker. The
// last batch of a piece releases the piece's row memory for reuse (change.Batch.Release).
func (s *Snapshot) emit(ctx context.Context, pieces <-chan piece, out chan<- change.Batch) error {
	for {
		select {
		case p, ok := <-pieces:
			if !ok {
				return send(ctx, out, change.Batch{End: true, Position: s.ledger.finish()})
			}
			if err := s.emitPiece(ctx, p, out); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *Snapshot) emitPiece(ctx context.Context, p piece, out chan<- change.Batch) error {
	schema := p.span.t.desc.Schema
	left := len(p.gone) + p.rows.live // changes still to emit, to size each batch once
	batch := change.Batch{CommitTime: p.readAt, Changes: make([]change.Change, 0, max(0, min(left, s.cfg.FetchSize)))}
	add := func(c change.Change) error {
		batch.Changes = append(batch.Changes, c)
		left--
		if len(batch.Changes) < s.cfg.FetchSize {
			return nil
		}
		err := send(ctx, out, batch)
		batch = change.Batch{CommitTime: p.readAt, Changes: make([]change.Change, 0, max(0, min(left, s.cfg.FetchSize)))}
		return err
	}
	for _, row := range p.gone {
		if err := add(change.Change{Schema: schema, Op: change.Delete, Before: row}); err != nil {
			return err
		}
	}
	for _, row := range p.rows.rows {
		if row == nil {
			continue
		}
		if err := add(change.Change{Schema: schema, Op: change.Insert, After: row}); err != nil {
			return err
		}
	}
	c := p.span.chunk()
	batch.End = true
	if a := p.rows.arena; a != nil {
		batch.Release = a.release
	}
	batch.Position = s.ledger.add(p.id, DoneChunk{DB: c.Table.DB, Table: c.Table.Table, Lo: c.Lo, Hi: c.Hi,
		Low: p.low.String(), High: p.high.String(), Rows: int64(p.rows.live)}, p.high)
	if err := send(ctx, out, batch); err != nil {
		return err
	}
	s.report(p)
	return nil
}

// Begin returns the progress to store before Run when none is stored yet: no chunks, and
// Since at the binlog position now, before any chunk is read. Without it, a crash before the
// first stored progress restarts the snapshot from nothing, and a key an emitted chunk
// carried but that was deleted before the restart never gets its tombstone (at-least-once
// delivery only: with exactly-once, records not committed with a progress are aborted). With
// Config.Resume set, Begin returns it unchanged. Its errors are classified as Run's.
func (s *Snapshot) Begin(ctx context.Context) (_ Progress, err error) {
	defer func() { err = fault.MySQL(err) }()
	if s.err != nil {
		return Progress{}, s.err
	}
	if s.cfg.Resume != nil {
		return *s.cfg.Resume, nil
	}
	db, err := s.cfg.openDB()
	if err != nil {
		return Progress{}, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return Progress{}, fmt.Errorf("snapshot: connect: %w", err)
	}
	defer conn.Close()
	pos, err := masterStatus(ctx, conn)
	if err != nil {
		return Progress{}, fmt.Errorf("snapshot: begin: %w", err)
	}
	return Progress{Since: pos.String()}, nil
}

func (s *Snapshot) report(p piece) {
	st := s.stats[p.span.t.id]
	st.Rows += int64(p.rows.live)
	st.Chunks++
	if s.cfg.OnProgress != nil {
		s.cfg.OnProgress(*st)
	}
}

func send(ctx context.Context, out chan<- change.Batch, b change.Batch) error {
	select {
	case out <- b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ProgressAt returns the progress a token (the Position of a batch of this run) stands for:
// the resumed chunks and every chunk emitted up to and including the token's. Store it once
// every batch up to the token's batch is acknowledged.
func (s *Snapshot) ProgressAt(token []byte) (Progress, error) { return s.ledger.at(token) }

// Progress returns every chunk finished so far, acknowledged or not (for logs and tests;
// store only what ProgressAt returns).
func (s *Snapshot) Progress() Progress { return s.ledger.all() }

// listTables reads the binlog position, then lists and describes the tables to snapshot,
// and records both in the ledger: the tables are the snapshot's captured set, and the
// position is where the stream starts if no table gives a chunk (none matched), so that
// the stream meets every table created after the listing from its CREATE TABLE.
func (s *Snapshot) listTables(ctx context.Context, db *sql.DB) ([]*table, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("snapshot: connect: %w", err)
	}
	listedAt, err := masterStatus(ctx, conn)
	conn.Close()
	if err != nil {
		return nil, fmt.Errorf("snapshot: position before listing the tables: %w", err)
	}
	ids := s.cfg.Tables
	if len(ids) == 0 {
		if ids, err = discoverTables(ctx, db, s.cfg.Match); err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
	}
	s.ledger.setTables(ids, listedAt)
	return s.loadTables(ctx, db, ids)
}

// loadTables describes the given tables; one that does not exist any more is left out,
// with an INFO line (errNoTable). The tables are described by as many goroutines at once
// as the pool has connections: each description is a few round trips, and a pipeline of
// thousands of tables waited seconds for them one by one.
func (s *Snapshot) loadTables(ctx context.Context, db *sql.DB, ids []change.TableID) ([]*table, error) {
	loaded := make([]*table, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.poolSize())
	for i, id := range ids {
		g.Go(func() error {
			t, err := loadTable(gctx, db, &s.cfg, id)
			if errors.Is(err, errNoTable) {
				s.cfg.Logger.Info("snapshot: table "+id.String()+" does not exist any more (dropped or renamed away since it "+
					"was chosen): it has no rows to read, and the stream meets its DROP or RENAME", "table", id.String())
				return nil
			}
			if err != nil {
				return fmt.Errorf("snapshot: %w", err)
			}
			loaded[i] = t
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	tables := make([]*table, 0, len(ids))
	for _, t := range loaded {
		if t != nil {
			tables = append(tables, t)
			s.stats[t.id] = &TableProgress{Table: t.id, Estimate: t.estimate}
		}
	}
	return tables, nil
}

// todo returns each table's key ranges that the resumed progress does not cover.
func (s *Snapshot) todo(ctx context.Context, tables []*table) ([]tableGaps, error) {
	done := map[change.TableID][]span{}
	byID := map[change.TableID]*table{}
	for _, t := range tables {
		byID[t.id] = t
	}
	for _, d := range s.ledger.base {
		t := byID[d.TableID()]
		if t == nil {
			continue
		}
		sp, err := newSpan(ctx, t, d.Lo, d.Hi)
		if err != nil {
			return nil, fmt.Errorf("snapshot: resume: %w", err)
		}
		done[t.id] = append(done[t.id], sp)
		s.stats[t.id].Chunks++
	}
	var todo []tableGaps
	for _, t := range tables {
		if g := gaps(t, done[t.id]); len(g) > 0 {
			todo = append(todo, tableGaps{t: t, gaps: g})
		}
	}
	return todo, nil
}

func isMariaDB(ctx context.Context, db *sql.DB) (bool, error) {
	var version string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return false, fmt.Errorf("snapshot: server version: %w", err)
	}
	return strings.Contains(strings.ToLower(version), "mariadb"), nil
}
