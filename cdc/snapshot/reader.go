package snapshot

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/change"
)

// chunkRows holds a chunk's rows in the order they were read (rows inserted by merged
// binlog events come last). The index by record key is built only when a merge needs it.
type chunkRows struct {
	schema *change.Schema
	arena  *arena       // holds the rows read by the SELECT; nil when none
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
	low, high binlogpos.Position
	readAt    time.Time
}

// reader reads chunks over its own connection.
type reader struct {
	conn   *sql.Conn
	marks  *watermarks
	window *binlogWindow
	ledger *ledger
	shapes *shapes
	// rowConn is the reader's connection for the chunks' SELECTs (see rowconn.go).
	rowConn *rowConn
	since   binlogpos.Position // Config.Resume's Since; zero when not resumed
	limit   int                // the most rows one SELECT returns (fewer for wide rows: table.pieceRows); a chunk with more is cut there
}

// read reads a span as one piece, or, when it holds more than limit rows, as the piece up to
// the limit-th key plus the rest of the span, read in turn. It calls emit for each piece.
func (r *reader) read(ctx context.Context, s span, emit func(piece) error) error {
	for {
		p, rest, err := r.readReshaping(ctx, s)
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

// readReshaping reads a piece with its table's current description, and when the table
// turns out to have changed shape (an ALTER TABLE), describes it again and reads the piece
// again: its watermark window then starts after the change.
func (r *reader) readReshaping(ctx context.Context, s span) (piece, *span, error) {
	for attempt := 0; ; attempt++ {
		cur, err := r.shapes.current(ctx, s)
		if err != nil {
			return piece{}, nil, err
		}
		p, rest, err := r.readPiece(ctx, cur)
		if err == nil || attempt == maxReshapes || !reshaped(err) {
			return p, rest, err
		}
		if _, rerr := r.shapes.refresh(ctx, cur.t); rerr != nil {
			return piece{}, nil, fmt.Errorf("%w (describing it again: %w)", err, rerr)
		}
	}
}

// readPiece is the watermark algorithm for one chunk: low, SELECT, high, merge.
func (r *reader) readPiece(ctx context.Context, s span) (_ piece, _ *span, err error) {
	id := r.ledger.begin()
	defer func() {
		if err != nil {
			r.ledger.abandon(id)
		}
	}()
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
		if s, rest, err = cut(ctx, s, last); err != nil {
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
func cut(ctx context.Context, s span, last Bound) (span, *span, error) {
	head, err := newSpan(ctx, s.t, s.lo, last)
	if err != nil {
		return span{}, nil, err
	}
	tail, err := newSpan(ctx, s.t, last, s.hi)
	if err != nil {
		return span{}, nil, err
	}
	return head, &tail, nil
}

// selectRows reads the rows of s in key order with one autocommit SELECT (a prepared
// statement) over the reader's row connection. When limit rows come back, last is the key
// of the last one (the span has more rows than one piece holds).
func (r *reader) selectRows(ctx context.Context, s span) (*chunkRows, Bound, error) {
	cond, args, err := s.where()
	if err != nil {
		return nil, nil, err
	}
	q := s.t.selectSQL
	if cond != "" {
		q += " WHERE " + cond
	}
	limit := s.t.pieceRows(r.limit)
	q += s.t.orderSQL + " LIMIT " + strconv.Itoa(limit)
	sc := newScanner(s.t, limit)
	// On cancellation, a deadline in the past unblocks the read (net.Conn's deadlines may be
	// set from another goroutine; go-mysql's Close may not).
	stop := context.AfterFunc(ctx, func() { _ = r.rowConn.SetDeadline(time.Unix(1, 0)) })
	err = r.rowConn.query(q, args, sc.out.arena, sc.cols, sc.row)
	if !stop() && ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	if gone(err) {
		// Dropped or renamed away since it was chosen: it has no rows now, and the stream
		// meets its DROP or RENAME (errNoTable).
		return newScanner(s.t, limit).out, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", s, err)
	}
	return sc.out, sc.last, nil
}

// scanner converts the rows of one SELECT with the column decoders. Each row is read into
// the chunk's arena, which the row's values may alias.
type scanner struct {
	t     *table
	limit int
	out   *chunkRows // out.arena holds its rows
	cols  [][]byte
	count int
	last  Bound
}

func newScanner(t *table, limit int) *scanner {
	sc := &scanner{t: t, limit: limit, out: newChunkRows(t.desc.Schema, min(limit, 1<<16)),
		cols: make([][]byte, len(t.desc.Columns))}
	sc.out.arena = &arena{}
	return sc
}

// row is rowConn.query's per-row callback.
func (sc *scanner) row(cols [][]byte, forms []wireForm) error {
	if sc.count == 0 {
		if err := sc.t.checkForms(forms); err != nil {
			return err
		}
	}
	row, err := sc.out.arena.decode(sc.t, cols, forms)
	if err != nil {
		return fmt.Errorf("row %d: %w", sc.count+1, err)
	}
	sc.out.add(row)
	if sc.count++; sc.count == sc.limit {
		if sc.last, err = lastKey(sc.t, cols, forms); err != nil {
			return fmt.Errorf("row %d: %w", sc.count, err)
		}
	}
	return nil
}

// checkForms compares the forms in which the server sends the columns with those the
// table's description decodes: a column whose type changed since the table was described
// (an ALTER TABLE … MODIFY between text and a number or a date) is a shape change, and the
// reader describes the table again.
func (t *table) checkForms(forms []wireForm) error {
	for i, f := range forms {
		if want := t.desc.Columns[i].BinaryForm(); f.binary() != want {
			return &shapeError{Table: t.id, Err: fmt.Errorf("column %s arrives as %s, the description expects %s",
				t.desc.Schema.Columns[i].Name, formName(f.binary()), formName(want))}
		}
	}
	return nil
}

func formName(binary bool) string {
	if binary {
		return "a binary number or date"
	}
	return "text"
}

// lastKey returns the key columns of a row as a Bound: the text the text protocol would
// have sent.
func lastKey(t *table, cols [][]byte, forms []wireForm) (Bound, error) {
	b := make(Bound, len(t.key))
	for i, kc := range t.key {
		if !forms[kc.index].binary() {
			b[i] = bytes.Clone(cols[kc.index]) // the arena is recycled; the bound is kept
			continue
		}
		text, err := t.desc.Columns[kc.index].BinaryText(cols[kc.index])
		if err != nil {
			return nil, err
		}
		b[i] = text
	}
	return b, nil
}
