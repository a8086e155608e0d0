package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ingestkit/ingest/cdc"
	"github.com/ingestkit/ingest/change"
)

// chunkRows holds a chunk's rows in the order they were read (rows inserted by merged
// binlog events come last). The index by record key is built only when a merge needs it.
type chunkRows struct {
	schema *change.Schema
	rows   []change.Row // nil where a row was removed
	index  map[string]int
	live   int
}

func newChunkRows(schema *change.Schema, capacity int) *chunkRows {
	return &chunkRows{schema: schema, rows: make([]change.Row, 0, capacity)}
}

// add appends a row read by the SELECT (whose keys are distinct).
func (c *chunkRows) add(row change.Row) {
	if c.index != nil {
		c.index[recordKey(c.schema, row)] = len(c.rows)
	}
	c.rows = append(c.rows, row)
	c.live++
}

// indexed returns the index by record key, building it on first use.
func (c *chunkRows) indexed() map[string]int {
	if c.index == nil {
		c.index = make(map[string]int, len(c.rows))
		for i, r := range c.rows {
			if r != nil {
				c.index[recordKey(c.schema, r)] = i
			}
		}
	}
	return c.index
}

// has reports whether a row of the record key k is present.
func (c *chunkRows) has(k string) bool {
	i, ok := c.indexed()[k]
	return ok && c.rows[i] != nil
}

// upsert sets the row of its record key.
func (c *chunkRows) upsert(row change.Row) {
	k := recordKey(c.schema, row)
	index := c.indexed()
	if i, ok := index[k]; ok {
		if c.rows[i] == nil {
			c.live++
		}
		c.rows[i] = row
		return
	}
	index[k] = len(c.rows)
	c.rows = append(c.rows, row)
	c.live++
}

// remove drops the row of the record key of row, if present.
func (c *chunkRows) remove(row change.Row) {
	if i, ok := c.indexed()[recordKey(c.schema, row)]; ok && c.rows[i] != nil {
		c.rows[i] = nil
		c.live--
	}
}

// piece is a chunk as read: the rows at its high watermark, and in a resumed run the keys
// that left it since Progress.Since.
type piece struct {
	id        int // in the ledger
	span      span
	rows      *chunkRows
	gone      []change.Row
	low, high cdc.Position
	readAt    time.Time
}

// reader reads chunks over its own connection.
type reader struct {
	conn   *sql.Conn
	marks  *watermarks
	window *binlogWindow
	ledger *ledger
	since  cdc.Position // Config.Resume's Since; zero when not resumed
	limit  int          // the most rows one SELECT returns; a chunk with more is cut there
}

// read reads a span as one piece, or, when it holds more than limit rows, as the piece up to
// the limit-th key plus the rest of the span, read in turn. It calls emit for each piece.
func (r *reader) read(ctx context.Context, s span, emit func(piece) error) error {
	for {
		p, rest, err := r.readPiece(ctx, s)
		if err != nil {
			return err
		}
		if err := emit(p); err != nil {
			return err
		}
		if rest == nil {
			return nil
		}
		s = *rest
	}
}

// readPiece is the watermark algorithm for one chunk: low, SELECT, high, merge.
func (r *reader) readPiece(ctx context.Context, s span) (piece, *span, error) {
	id := r.ledger.begin()
	low, err := r.marks.low(ctx, r.conn)
	if err != nil {
		return piece{}, nil, fmt.Errorf("%s: low watermark: %w", s, err)
	}
	r.ledger.setLow(id, low)
	rows, last, err := r.selectRows(ctx, s)
	if err != nil {
		return piece{}, nil, err
	}
	readAt := time.Now()
	var rest *span
	if last != nil {
		if s, rest, err = cut(s, last); err != nil {
			return piece{}, nil, err
		}
	}
	high, err := r.marks.high(ctx, r.conn)
	if err != nil {
		return piece{}, nil, fmt.Errorf("%s: high watermark: %w", s, err)
	}
	gone, err := r.window.merge(ctx, s, rows, r.since, low, high)
	if err != nil {
		return piece{}, nil, err
	}
	return piece{id: id, span: s, rows: rows, gone: gone, low: low, high: high, readAt: readAt}, rest, nil
}

// cut splits s after the key last: (lo, last] and (last, hi].
func cut(s span, last Bound) (span, *span, error) {
	head, err := newSpan(s.t, s.lo, last)
	if err != nil {
		return span{}, nil, err
	}
	tail, err := newSpan(s.t, last, s.hi)
	if err != nil {
		return span{}, nil, err
	}
	return head, &tail, nil
}

// selectRows reads the rows of s in key order with one autocommit SELECT. When limit rows
// come back, last is the key of the last one (the span has more rows than one piece holds).
func (r *reader) selectRows(ctx context.Context, s span) (*chunkRows, Bound, error) {
	cond, args, err := s.where()
	if err != nil {
		return nil, nil, err
	}
	q := s.t.selectSQL
	if cond != "" {
		q += " WHERE " + cond
	}
	q += s.t.orderSQL + " LIMIT " + strconv.Itoa(r.limit)
	rows, err := r.conn.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", s, err)
	}
	defer rows.Close()
	out, last, err := scanRows(rows, s.t, r.limit)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", s, err)
	}
	return out, last, nil
}

// scanRows converts every row with the column decoders. The bytes of each row are copied
// once into the chunk's arena, which the row's values may alias.
func scanRows(rows *sql.Rows, t *table, limit int) (*chunkRows, Bound, error) {
	n := len(t.desc.Columns)
	raw := make([]sql.RawBytes, n)
	dest := make([]any, n)
	for i := range raw {
		dest[i] = &raw[i]
	}
	out := newChunkRows(t.desc.Schema, min(limit, 1<<16))
	var a arena
	var cols [][]byte
	count := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, err
		}
		cols = a.copyRaw(raw, cols[:0])
		row, err := a.decodeText(t, cols)
		if err != nil {
			return nil, nil, fmt.Errorf("row %d: %w", count+1, err)
		}
		out.add(row)
		count++
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, nil, err
	}
	if count < limit {
		return out, nil, nil
	}
	last := make(Bound, len(t.key))
	for i, kc := range t.key {
		last[i] = cols[kc.index]
	}
	return out, last, nil
}

// arena holds the bytes and values of the rows of one chunk in a few large blocks instead of
// two allocations per row. Blocks are only ever appended to and replaced when full, never
// reused: a row's values stay valid for as long as anything refers to them, which is all the
// lifetime rule of change.Value asks.
type arena struct {
	bytes  []byte
	values []change.Value
}

const (
	arenaBytes  = 64 << 10 // bytes per block (a larger row gets a block of its own size)
	arenaValues = 4 << 10  // values per block (a row wider than that gets its own)
)

// copyRaw copies the columns into the arena, keeping NULL (nil) apart from empty, and
// appends them to cols.
func (a *arena) copyRaw(raw []sql.RawBytes, cols [][]byte) [][]byte {
	size := 0
	for _, r := range raw {
		size += len(r)
	}
	if cap(a.bytes)-len(a.bytes) < size {
		a.bytes = make([]byte, 0, max(arenaBytes, size))
	}
	for _, r := range raw {
		if r == nil {
			cols = append(cols, nil)
			continue
		}
		start := len(a.bytes)
		a.bytes = append(a.bytes, r...)
		cols = append(cols, a.bytes[start:len(a.bytes):len(a.bytes)])
	}
	return cols
}

// row returns n zero values for one row, with its capacity clipped to n.
func (a *arena) row(n int) change.Row {
	if cap(a.values)-len(a.values) < n {
		a.values = make([]change.Value, 0, max(arenaValues, n))
	}
	start := len(a.values)
	a.values = a.values[:start+n]
	return change.Row(a.values[start : start+n : start+n])
}

func (a *arena) decodeText(t *table, cols [][]byte) (change.Row, error) {
	row := a.row(len(cols))
	for i, b := range cols {
		v, err := t.desc.Columns[i].FromText(b)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", t.desc.Schema.Columns[i].Name, err)
		}
		row[i] = v
	}
	return row, nil
}
