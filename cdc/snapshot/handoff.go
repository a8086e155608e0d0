package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/fault"
)

// Handoff is the filter between a finished snapshot and the binlog stream. The stream starts
// at [Handoff.Start], the smallest low watermark, and the runner drops every change
// [Handoff.Skip] reports: a change on a key whose chunk was read at a high watermark at or
// after the change's transaction, so that the chunk already reflects it. Once the stream has
// passed [Handoff.Done] nothing is skipped any more and the snapshot's progress can be
// forgotten. A Handoff is safe for concurrent use. When a table's chunk key
// is text that only the server can order (a UCA collation), the Handoff keeps a connection
// pool to weigh binlog keys: call Close once it is no longer used.
type Handoff struct {
	start, end binlogpos.Position
	tables     map[change.TableID]*handoffTable
	db         *sql.DB // nil unless a table needs the server to order its keys
}

// handoffTable is one table's chunks, sorted by key, the smallest and largest of their
// high watermarks, and the smallest of their low watermarks (zero when one is not known).
type handoffTable struct {
	t           *table
	chunks      []handoffChunk
	first, last binlogpos.Position
	firstLow    binlogpos.Position
}

type handoffChunk struct {
	hi   []change.Value // nil: +∞
	high binlogpos.Position
}

// Handoff returns the filter for the binlog stream after the snapshot. The progress must be
// Done (Run has returned nil, or Config.Resume was Done). On MariaDB the start position also
// carries the GTID state of its file and offset (BINLOG_GTID_POS), so the stream can resume
// by GTID. Its errors are classified as Run's.
func (s *Snapshot) Handoff(ctx context.Context) (_ *Handoff, err error) {
	defer func() { err = fault.MySQL(err) }()
	if s.err != nil {
		return nil, s.err
	}
	p := s.ledger.all()
	if !p.Done {
		return nil, errors.New("snapshot: handoff: the snapshot is not finished")
	}
	db, err := s.cfg.openDB()
	if err != nil {
		return nil, err
	}
	h, err := s.handoffWith(ctx, db, p)
	if err != nil || h.db == nil {
		db.Close()
	}
	return h, err
}

// handoffWith builds the Handoff through db, which it keeps when a table's keys need the
// server to be ordered.
func (s *Snapshot) handoffWith(ctx context.Context, db *sql.DB, p Progress) (*Handoff, error) {
	// The tables the snapshot covered, not those that match now: a table created since has
	// no chunk, and is the stream's to capture from its CREATE TABLE, or not at all.
	// A table dropped since has nothing left to filter. So has a table without chunks in
	// a progress that has some: its own hand-off was over before another table joined the
	// captured set and was snapshotted (the runner's join.go), and its chunks were let go.
	chunked := map[change.TableID]bool{}
	for _, c := range p.Chunks {
		chunked[c.TableID()] = true
	}
	covered := map[change.TableID]bool{}
	for _, id := range p.TableIDs() {
		covered[id] = len(p.Chunks) == 0 || chunked[id]
	}
	ids, err := discoverTables(ctx, db, func(db, table string) bool { return covered[change.TableID{DB: db, Table: table}] })
	if err != nil {
		return nil, fmt.Errorf("snapshot: handoff: %w", err)
	}
	tables, err := s.loadTables(ctx, db, ids)
	if err != nil {
		return nil, err
	}
	h, err := newHandoff(ctx, p, tables)
	if err != nil {
		return nil, err
	}
	if h.start.MariaDB, err = gtidAt(ctx, db, h.start); err != nil {
		return nil, fmt.Errorf("snapshot: handoff: gtid of %s: %w", h.start, err)
	}
	if slices.ContainsFunc(tables, func(t *table) bool { return t.weigher != nil }) {
		h.db = db
	}
	return h, nil
}

// Close releases the connections the Handoff keeps to weigh keys, if any.
func (h *Handoff) Close() error {
	if h == nil || h.db == nil {
		return nil
	}
	return h.db.Close()
}

// gtidAt returns the MariaDB GTID state at a binlog file and offset, or nil when the server
// cannot tell (MySQL, or the file is gone).
func gtidAt(ctx context.Context, db *sql.DB, pos binlogpos.Position) ([]binlogpos.GTID, error) {
	if mariaDB, err := isMariaDB(ctx, db); err != nil || !mariaDB || pos.File == "" {
		return nil, err
	}
	var text sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT BINLOG_GTID_POS(?, ?)", pos.File, pos.Offset).Scan(&text); err != nil {
		return nil, err
	}
	if !text.Valid {
		return nil, nil
	}
	return binlogpos.ParseMariaDBGTIDs(text.String)
}

// newHandoff builds the filter from the finished chunks of the given tables; chunks of other
// tables are ignored. Each table's chunks must partition its key space.
func newHandoff(ctx context.Context, p Progress, tables []*table) (*Handoff, error) {
	start, ok, err := p.HandoffPosition()
	if err != nil {
		return nil, fmt.Errorf("snapshot: handoff: %w", err)
	}
	h := &Handoff{start: start, tables: map[change.TableID]*handoffTable{}}
	if !ok || len(p.Chunks) == 0 {
		return h, nil
	}
	byTable := map[change.TableID][]DoneChunk{} // each table's chunks: a scan of them all per table grew as tables × chunks
	for _, c := range p.Chunks {
		byTable[c.TableID()] = append(byTable[c.TableID()], c)
	}
	for _, t := range tables {
		ht, err := handoffFor(ctx, t, byTable[t.id])
		if err != nil {
			return nil, fmt.Errorf("snapshot: handoff: %w", err)
		}
		h.tables[t.id] = ht
		if h.end.IsZero() || ht.last.After(h.end) {
			h.end = ht.last
		}
	}
	return h, nil
}

// handoffFor sorts the table's chunks and checks that they partition its key space.
func handoffFor(ctx context.Context, t *table, done []DoneChunk) (*handoffTable, error) {
	type entry struct {
		sp   span
		high binlogpos.Position
	}
	var entries []entry
	ht := &handoffTable{t: t}
	lowUnknown := false
	for _, d := range done {
		if d.TableID() != t.id {
			continue
		}
		sp, err := newSpan(ctx, t, d.Lo, d.Hi)
		if err != nil {
			return nil, err
		}
		high, err := binlogpos.ParsePosition(d.High)
		if err != nil {
			return nil, fmt.Errorf("chunk %s: high watermark: %w", sp, err)
		}
		entries = append(entries, entry{sp, high})
		low, err := binlogpos.ParsePosition(d.Low)
		switch {
		case err != nil || low.IsZero():
			ht.firstLow, lowUnknown = binlogpos.Position{}, true
		case !lowUnknown && (ht.firstLow.IsZero() || ht.firstLow.After(low)):
			ht.firstLow = low
		}
		if ht.last.IsZero() || high.After(ht.last) {
			ht.last = high
		}
		if ht.first.IsZero() || ht.first.After(high) {
			ht.first = high
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return compareLower(t, a.sp.loV, b.sp.loV) })
	var prev []change.Value
	for i, e := range entries {
		if (i == 0) != (e.sp.loV == nil) || (i > 0 && (prev == nil || t.key.compare(e.sp.loV, prev) != 0)) {
			return nil, fmt.Errorf("table %s: the finished chunks do not cover its key space at %s", t.id, e.sp)
		}
		ht.chunks = append(ht.chunks, handoffChunk{hi: e.sp.hiV, high: e.high})
		prev = e.sp.hiV
	}
	if len(entries) == 0 || prev != nil {
		return nil, fmt.Errorf("table %s: the finished chunks do not reach the end of its key space", t.id)
	}
	return ht, nil
}

// Start returns where the binlog stream starts: the smallest low watermark of all chunks,
// or, when there is none (no table matched), the position read before the snapshot listed
// its tables ([Progress.HandoffPosition]).
func (h *Handoff) Start() binlogpos.Position { return h.start }

// Done reports whether pos is at or after every chunk's high watermark: from there on,
// Skip is always false.
func (h *Handoff) Done(pos binlogpos.Position) bool {
	c, ok := pos.Compare(h.end)
	return h.end.IsZero() || (ok && c >= 0)
}

// Skip reports whether a change to row (the after image of an insert or update, the before
// image of a delete or update) of table is already reflected in the snapshot. pos is the
// position just after the change's source transaction (the Position of its End batch): the
// change is reflected when that is at or before the high watermark of the chunk whose range
// holds the row's chunk key. Positions that cannot be ordered are never skipped. The key
// is placed only when pos lies between the table's smallest and largest high watermark
// (before, every chunk reflects the change; after, none does); a key that only the server
// can order is then weighed by the server, which may fail.
func (h *Handoff) Skip(ctx context.Context, table change.TableID, row change.Row, pos binlogpos.Position) (bool, error) {
	t := h.tables[table]
	if t == nil || row == nil {
		return false, nil
	}
	if skip, place := t.settled(pos); !place {
		return skip, nil
	}
	key, err := t.t.keyOf(ctx, row)
	if err != nil {
		return false, fmt.Errorf("snapshot: handoff at %s: %w", pos, err)
	}
	i := sort.Search(len(t.chunks), func(i int) bool {
		return t.chunks[i].hi == nil || t.t.key.compare(key, t.chunks[i].hi) <= 0
	})
	if i == len(t.chunks) {
		return false, nil
	}
	c, ok := pos.Compare(t.chunks[i].high)
	return ok && c <= 0, nil
}

// Reflects reports whether every chunk of table was read after a change at pos (pos is at
// or before their low watermarks): a statement there (a TRUNCATE, DROP or RENAME) is
// reflected by the snapshot of the table. It is safe for concurrent use.
func (h *Handoff) Reflects(table change.TableID, pos binlogpos.Position) bool {
	t := h.tables[table]
	if t == nil || t.firstLow.IsZero() {
		return false
	}
	c, ok := pos.Compare(t.firstLow)
	return ok && c <= 0
}

// settled tells whether a change at pos must have its key placed among the chunks, and if
// not whether it is skipped: at or before the table's smallest high watermark every chunk
// reflects it, after the largest none does, and positions that cannot be ordered are
// never skipped.
func (t *handoffTable) settled(pos binlogpos.Position) (skip, place bool) {
	if c, ok := pos.Compare(t.first); ok && c <= 0 {
		return true, false
	}
	if c, ok := pos.Compare(t.last); !ok || c > 0 {
		return false, false
	}
	return false, true
}

// prefetch weighs at once the keys of b that Skip will place on tables whose keys only the
// server can weigh (a large transaction takes one query per few hundred rows, not one per
// row).
func (h *Handoff) prefetch(ctx context.Context, b change.Batch, pos binlogpos.Position) error {
	rows := map[*handoffTable][]change.Row{}
	for _, c := range b.Changes {
		if c.Schema == nil {
			continue
		}
		t := h.tables[c.Schema.Table]
		if t == nil || t.t.weigher == nil {
			continue
		}
		if _, place := t.settled(pos); !place {
			continue
		}
		for _, row := range []change.Row{c.Before, c.After} {
			if row != nil {
				rows[t] = append(rows[t], row)
			}
		}
	}
	for t, rs := range rows {
		if err := t.t.prefetch(ctx, rs); err != nil {
			return fmt.Errorf("snapshot: handoff at %s: %w", pos, err)
		}
	}
	return nil
}

// Filter returns b without the changes the snapshot already reflects (pos as for Skip). An
// update whose before image is reflected but whose after image is not (a key change across
// chunks) becomes an insert of the after image; in the opposite case it becomes a delete of
// the before image when the record key changed, and is dropped otherwise. It fails only
// when the server must weigh a key and cannot.
func (h *Handoff) Filter(ctx context.Context, b change.Batch, pos binlogpos.Position) (change.Batch, error) {
	if err := h.prefetch(ctx, b, pos); err != nil {
		return change.Batch{}, fault.MySQL(err) // the server weighs keys: a lost connection is retryable
	}
	out := b
	out.Changes = nil
	for _, c := range b.Changes {
		if c.Schema == nil {
			out.Changes = append(out.Changes, c)
			continue
		}
		kept, ok, err := h.filter(ctx, c, pos)
		if err != nil {
			return change.Batch{}, fault.MySQL(err)
		}
		if ok {
			out.Changes = append(out.Changes, kept)
		}
	}
	return out, nil
}

func (h *Handoff) filter(ctx context.Context, c change.Change, pos binlogpos.Position) (change.Change, bool, error) {
	id := c.Schema.Table
	switch c.Op {
	case change.SchemaChange:
		// A TRUNCATE, DROP or RENAME away that every chunk of the table reflects (they were
		// read after it) would empty the topic of rows the table has again.
		clears := c.DDL != nil && (c.DDL.Kind == change.Truncated || c.DDL.Kind == change.Dropped)
		return c, !clears || !h.Reflects(id, pos), nil
	case change.Insert:
		skip, err := h.Skip(ctx, id, c.After, pos)
		return c, !skip, err
	case change.Delete:
		skip, err := h.Skip(ctx, id, c.Before, pos)
		return c, !skip, err
	case change.Update:
		before, err := h.Skip(ctx, id, c.Before, pos)
		if err != nil {
			return c, false, err
		}
		after, err := h.Skip(ctx, id, c.After, pos)
		if err != nil {
			return c, false, err
		}
		switch {
		case before && after:
			return c, false, nil
		case before:
			return change.Change{Schema: c.Schema, Op: change.Insert, After: c.After}, true, nil
		case after:
			if recordKey(c.Schema, c.Before) == recordKey(c.Schema, c.After) {
				return c, false, nil
			}
			return change.Change{Schema: c.Schema, Op: change.Delete, Before: c.Before}, true, nil
		}
	}
	return c, true, nil
}
