package snapshot

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
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
	k := weightKey{c.name, string(text)}
	w.mu.Lock()
	ws, ok := w.cache[k]
	w.mu.Unlock()
	if ok {
		return ws, nil
	}
	got, err := w.query(ctx, c, k.text)
	if err != nil {
		return nil, fmt.Errorf("weight of %q in %s: %w", text, c.name, err)
	}
	if !got.Valid {
		return nil, fmt.Errorf("weight of %q in %s: the server returned NULL (a weight string longer than max_allowed_packet)", text, c.name)
	}
	w.mu.Lock()
	if len(w.cache) >= maxCachedWeights {
		clear(w.cache)
	}
	w.cache[k] = got.V
	w.mu.Unlock()
	return got.V, nil
}

// weighRetries bounds how long weigh waits out a lost connection (a server restart):
// about a minute of doubling waits.
const weighRetries = 8

// query runs WEIGHT_STRING on the server, trying again while the connection is lost.
func (w *weigher) query(ctx context.Context, c *collation, text string) (sql.Null[[]byte], error) {
	var got sql.Null[[]byte]
	wait := 250 * time.Millisecond
	for try := 0; ; try++ {
		err := w.db.QueryRowContext(ctx, "SELECT WEIGHT_STRING("+paramText(c.name)+")", text).Scan(&got)
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
		if kc.coll == nil || !kc.coll.server || key[i].Kind != change.String {
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

// keyOf returns the orderable chunk key tuple of a row.
func (t *table) keyOf(ctx context.Context, row change.Row) ([]change.Value, error) {
	key := t.key.values(row)
	return key, t.sortable(ctx, key)
}
