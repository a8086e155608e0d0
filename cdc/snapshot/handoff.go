package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/ingestkit/ingest/cdc"
	"github.com/ingestkit/ingest/change"
)

// Handoff is the filter between a finished snapshot and the binlog stream. The stream starts
// at [Handoff.Start], the smallest low watermark, and the runner drops every change
// [Handoff.Skip] reports: a change on a key whose chunk was read at a high watermark at or
// after the change's transaction, so that the chunk already reflects it. Once the stream has
// passed [Handoff.Done] nothing is skipped any more and the snapshot's progress can be
// forgotten. A Handoff is immutable and safe for concurrent use.
type Handoff struct {
	start, end cdc.Position
	tables     map[change.TableID]*handoffTable
}

// handoffTable is one table's chunks, sorted by key.
type handoffTable struct {
	key    chunkKey
	chunks []handoffChunk
}

type handoffChunk struct {
	hi   []change.Value // nil: +∞
	high cdc.Position
}

// Handoff returns the filter for the binlog stream after the snapshot. The progress must be
// Done (Run has returned nil, or Config.Resume was Done). On MariaDB the start position also
// carries the GTID state of its file and offset (BINLOG_GTID_POS), so the stream can resume
// by GTID.
func (s *Snapshot) Handoff(ctx context.Context) (*Handoff, error) {
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
	defer db.Close()
	tables, err := s.loadTables(ctx, db)
	if err != nil {
		return nil, err
	}
	h, err := newHandoff(p, tables)
	if err != nil {
		return nil, err
	}
	if h.start.MariaDB, err = gtidAt(ctx, db, h.start); err != nil {
		return nil, fmt.Errorf("snapshot: handoff: gtid of %s: %w", h.start, err)
	}
	return h, nil
}

// gtidAt returns the MariaDB GTID state at a binlog file and offset, or nil when the server
// cannot tell (MySQL, or the file is gone).
func gtidAt(ctx context.Context, db *sql.DB, pos cdc.Position) ([]cdc.GTID, error) {
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
	return cdc.ParseMariaDBGTIDs(text.String)
}

// newHandoff builds the filter from the finished chunks of the given tables; chunks of other
// tables are ignored. Each table's chunks must partition its key space.
func newHandoff(p Progress, tables []*table) (*Handoff, error) {
	start, ok, err := p.Start()
	if err != nil {
		return nil, fmt.Errorf("snapshot: handoff: %w", err)
	}
	h := &Handoff{start: start, tables: map[change.TableID]*handoffTable{}}
	if !ok {
		return h, nil
	}
	for _, t := range tables {
		ht, end, err := handoffFor(t, p.Chunks)
		if err != nil {
			return nil, fmt.Errorf("snapshot: handoff: %w", err)
		}
		h.tables[t.id] = ht
		if h.end.IsZero() || end.After(h.end) {
			h.end = end
		}
	}
	return h, nil
}

// handoffFor sorts the table's chunks and checks that they partition its key space; it also
// returns their largest high watermark.
func handoffFor(t *table, done []DoneChunk) (*handoffTable, cdc.Position, error) {
	type entry struct {
		sp   span
		high cdc.Position
	}
	var entries []entry
	var end cdc.Position
	for _, d := range done {
		if d.TableID() != t.id {
			continue
		}
		sp, err := newSpan(t, d.Lo, d.Hi)
		if err != nil {
			return nil, end, err
		}
		high, err := cdc.ParsePosition(d.High)
		if err != nil {
			return nil, end, fmt.Errorf("chunk %s: high watermark: %w", sp, err)
		}
		entries = append(entries, entry{sp, high})
		if end.IsZero() || high.After(end) {
			end = high
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return compareLower(t, a.sp.loV, b.sp.loV) })
	ht := &handoffTable{key: t.key}
	var prev []change.Value
	for i, e := range entries {
		if (i == 0) != (e.sp.loV == nil) || (i > 0 && (prev == nil || t.key.compare(e.sp.loV, prev) != 0)) {
			return nil, end, fmt.Errorf("table %s: the finished chunks do not cover its key space at %s", t.id, e.sp)
		}
		ht.chunks = append(ht.chunks, handoffChunk{hi: e.sp.hiV, high: e.high})
		prev = e.sp.hiV
	}
	if len(entries) == 0 || prev != nil {
		return nil, end, fmt.Errorf("table %s: the finished chunks do not reach the end of its key space", t.id)
	}
	return ht, end, nil
}

// Start returns where the binlog stream starts: the smallest low watermark of all chunks.
func (h *Handoff) Start() cdc.Position { return h.start }

// Done reports whether pos is at or after every chunk's high watermark: from there on,
// Skip is always false.
func (h *Handoff) Done(pos cdc.Position) bool {
	c, ok := pos.Compare(h.end)
	return h.end.IsZero() || (ok && c >= 0)
}

// Skip reports whether a change to row (the after image of an insert or update, the before
// image of a delete or update) of table is already reflected in the snapshot. pos is the
// position just after the change's source transaction (the Position of its End batch): the
// change is reflected when that is at or before the high watermark of the chunk whose range
// holds the row's chunk key. Positions that cannot be ordered are never skipped.
func (h *Handoff) Skip(table change.TableID, row change.Row, pos cdc.Position) bool {
	t := h.tables[table]
	if t == nil || row == nil {
		return false
	}
	key := t.key.values(row)
	i := sort.Search(len(t.chunks), func(i int) bool {
		return t.chunks[i].hi == nil || t.key.compare(key, t.chunks[i].hi) <= 0
	})
	if i == len(t.chunks) {
		return false
	}
	c, ok := pos.Compare(t.chunks[i].high)
	return ok && c <= 0
}

// Filter returns b without the changes the snapshot already reflects (pos as for Skip). An
// update whose before image is reflected but whose after image is not (a key change across
// chunks) becomes an insert of the after image; in the opposite case it becomes a delete of
// the before image when the record key changed, and is dropped otherwise.
func (h *Handoff) Filter(b change.Batch, pos cdc.Position) change.Batch {
	out := b
	out.Changes = nil
	for _, c := range b.Changes {
		if c.Schema == nil {
			out.Changes = append(out.Changes, c)
			continue
		}
		if kept, ok := h.filter(c, pos); ok {
			out.Changes = append(out.Changes, kept)
		}
	}
	return out
}

func (h *Handoff) filter(c change.Change, pos cdc.Position) (change.Change, bool) {
	id := c.Schema.Table
	switch c.Op {
	case change.Insert:
		return c, !h.Skip(id, c.After, pos)
	case change.Delete:
		return c, !h.Skip(id, c.Before, pos)
	case change.Update:
		before, after := h.Skip(id, c.Before, pos), h.Skip(id, c.After, pos)
		switch {
		case before && after:
			return c, false
		case before:
			return change.Change{Schema: c.Schema, Op: change.Insert, After: c.After}, true
		case after:
			if recordKey(c.Schema, c.Before) == recordKey(c.Schema, c.After) {
				return c, false
			}
			return change.Change{Schema: c.Schema, Op: change.Delete, Before: c.Before}, true
		}
	}
	return c, true
}
