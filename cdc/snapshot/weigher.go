package snapshot

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ingestkit/ingest/change"
)

// weigher asks the server for the weight strings of key texts whose collation only the
// server can weigh (collation.server), and remembers the most recent ones: each chunk bound
// is the upper bound of one chunk and the lower of the next, and a busy row's key comes
// back in event after event. It is safe for concurrent use.
type weigher struct {
	db    *sql.DB
	mu    sync.Mutex
	cache map[weightKey][]byte
}

type weightKey struct{ collation, text string }

// maxCachedWeights bounds the cache (a few MB of short keys); it is emptied when full.
const maxCachedWeights = 1 << 14

func newWeigher(db *sql.DB) *weigher {
	return &weigher{db: db, cache: map[weightKey][]byte{}}
}

// weigh returns WEIGHT_STRING of text in the collation.
func (w *weigher) weigh(ctx context.Context, c *collation, text []byte) ([]byte, error) {
	if ws, ok := w.cached(c, text); ok {
		return ws, nil
	}
	ws, err := w.fetch(ctx, c, []string{string(text)})
	if err != nil {
		return nil, err
	}
	return ws[0], nil
}

func (w *weigher) cached(c *collation, text []byte) ([]byte, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ws, ok := w.cache[weightKey{c.name, string(text)}]
	return ws, ok
}

// maxWeighedAtOnce bounds the weight strings one query asks for.
const maxWeighedAtOnce = 256

// weighAll asks the server for the weight strings of the texts not in the cache, a few
// hundred per query, and caches them.
func (w *weigher) weighAll(ctx context.Context, c *collation, texts [][]byte) error {
	var todo []string
	for _, t := range texts {
		if _, ok := w.cached(c, t); !ok {
			todo = append(todo, string(t))
		}
	}
	for len(todo) > 0 {
		n := min(len(todo), maxWeighedAtOnce)
		if _, err := w.fetch(ctx, c, todo[:n]); err != nil {
			return err
		}
		todo = todo[n:]
	}
	return nil
}

// fetch asks the server for the weight strings of texts in one query, caches them and
// returns them (the cache may drop them again as soon as it is full).
func (w *weigher) fetch(ctx context.Context, c *collation, texts []string) ([][]byte, error) {
	got, err := w.query(ctx, c, texts)
	if err != nil {
		if len(texts) == 1 {
			return nil, fmt.Errorf("weight of %q in %s: %w", texts[0], c.name, err)
		}
		return nil, fmt.Errorf("weights of %q and %d more texts in %s: %w", texts[0], len(texts)-1, c.name, err)
	}
	out := make([][]byte, len(got))
	for i, g := range got {
		if !g.Valid {
			return nil, fmt.Errorf("weight of %q in %s: the server returned NULL (a weight string longer than max_allowed_packet)", texts[i], c.name)
		}
		out[i] = g.V
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, ws := range out {
		if len(w.cache) >= maxCachedWeights {
			clear(w.cache)
		}
		w.cache[weightKey{c.name, texts[i]}] = ws
	}
	return out, nil
}

// weighRetries bounds how long weigh waits out a lost connection (a server restart):
// about a minute of doubling waits.
const weighRetries = 8

// query runs WEIGHT_STRING of each text on the server in one SELECT, trying again while
// the connection is lost.
func (w *weigher) query(ctx context.Context, c *collation, texts []string) ([]sql.Null[[]byte], error) {
	q := "SELECT " + strings.Repeat("WEIGHT_STRING("+paramText(c.name)+"), ", len(texts)-1) + "WEIGHT_STRING(" + paramText(c.name) + ")"
	args := make([]any, len(texts))
	got := make([]sql.Null[[]byte], len(texts))
	dst := make([]any, len(texts))
	for i := range texts {
		args[i], dst[i] = texts[i], &got[i]
	}
	wait := 250 * time.Millisecond
	for try := 0; ; try++ {
		err := w.db.QueryRowContext(ctx, q, args...).Scan(dst...)
		if err == nil || try == weighRetries || !connectionLost(err) {
			return got, err
		}
		select {
		case <-ctx.Done():
			return got, err
		case <-time.After(wait):
		}
		wait = min(2*wait, 15*time.Second)
	}
}

// connectionLost reports whether err is the loss of the server (refused, reset, closed),
// which a later try may outlive.
func connectionLost(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, io.ErrUnexpectedEOF)
}

// sortable makes a key tuple of t orderable by [chunkKey.compare]: the text of each column
// that only the server can weigh is replaced, in the tuple, by its weight string. Every key
// tuple compared (chunk bounds, binlog keys) goes through here.
func (t *table) sortable(ctx context.Context, key []change.Value) error {
	if t.weigher == nil {
		return nil
	}
	for i, kc := range t.key {
		if !kc.serverWeighed() || key[i].Kind != change.String {
			continue
		}
		ws, err := t.weigher.weigh(ctx, kc.coll, key[i].Bytes)
		if err != nil {
			return fmt.Errorf("table %s: key column %s: %w", t.id, kc.name, err)
		}
		key[i].Bytes = ws
	}
	return nil
}

// prefetch weighs at once the texts of rows' chunk key columns that only the server can
// weigh, so that sortable then finds them in the cache: one query for a few hundred rows
// instead of one each.
func (t *table) prefetch(ctx context.Context, rows []change.Row) error {
	if t.weigher == nil || len(rows) == 0 {
		return nil
	}
	for _, kc := range t.key {
		if !kc.serverWeighed() {
			continue
		}
		texts := make([][]byte, 0, len(rows))
		for _, row := range rows {
			if kc.index < len(row) && row[kc.index].Kind == change.String {
				texts = append(texts, row[kc.index].Bytes)
			}
		}
		if err := t.weigher.weighAll(ctx, kc.coll, texts); err != nil {
			return fmt.Errorf("table %s: key column %s: %w", t.id, kc.name, err)
		}
	}
	return nil
}

// prefetchBinlog is prefetch for the rows of a binlog event (go-mysql's values); a value
// that does not decode is left to the caller's own decoding to report.
func (t *table) prefetchBinlog(ctx context.Context, raws [][]any) error {
	if t.weigher == nil || len(raws) < 2 {
		return nil
	}
	rows := make([]change.Row, 0, len(raws))
	for _, raw := range raws {
		row := make(change.Row, len(raw))
		for _, kc := range t.key {
			if kc.serverWeighed() && kc.index < len(raw) {
				row[kc.index], _ = t.desc.Columns[kc.index].FromBinlog(raw[kc.index])
			}
		}
		rows = append(rows, row)
	}
	return t.prefetch(ctx, rows)
}

// keyOf returns the orderable chunk key tuple of a row.
func (t *table) keyOf(ctx context.Context, row change.Row) ([]change.Value, error) {
	key := t.key.values(row)
	return key, t.sortable(ctx, key)
}
