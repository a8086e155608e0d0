package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"

	"github.com/ingestkit/ingest/change"
)

// maxReshapes is how many times one piece is read again after its table changed shape.
const maxReshapes = 5

// shapeError reports that a table no longer has the shape it was described with: a binlog
// row of a chunk's watermark window has another number of columns, or a value the column
// decoders refuse. The reader describes the table again and reads the piece again.
type shapeError struct {
	Table change.TableID
	Err   error
}

func (e *shapeError) Error() string {
	return fmt.Sprintf("table %s changed shape during the snapshot: %v", e.Table, e.Err)
}

func (e *shapeError) Unwrap() error { return e.Err }

// errBadField is MySQL's ER_BAD_FIELD_ERROR: a SELECT named a column that was dropped.
const errBadField = 1054

// errNoSuchTable is MySQL's ER_NO_SUCH_TABLE: a SELECT named a table that was dropped or
// renamed away.
const errNoSuchTable = 1146

// gone reports whether err says that the table does not exist any more.
func gone(err error) bool {
	var me *mysql.MySQLError
	var ge *gomysql.MyError
	return errors.As(err, &me) && me.Number == errNoSuchTable || errors.As(err, &ge) && ge.Code == errNoSuchTable
}

// reshaped reports whether err says that the table changed shape since it was described.
func reshaped(err error) bool {
	var se *shapeError
	if errors.As(err, &se) {
		return true
	}
	var me *mysql.MySQLError
	var ge *gomysql.MyError
	return errors.As(err, &me) && me.Number == errBadField || errors.As(err, &ge) && ge.Code == errBadField
}

// shapes keeps the current description of every table being read. An ALTER TABLE during the
// snapshot makes the description the snapshot started with stale; the first reader to notice
// describes the table again, and every span read afterwards uses the new description. Rows
// already emitted keep the shape they were read with, as rows streamed before a DDL do.
type shapes struct {
	db  *sql.DB
	cfg *Config
	mu  sync.Mutex
	cur map[change.TableID]*table
}

func newShapes(db *sql.DB, cfg *Config, tables []*table) *shapes {
	sh := &shapes{db: db, cfg: cfg, cur: make(map[change.TableID]*table, len(tables))}
	for _, t := range tables {
		sh.cur[t.id] = t
	}
	return sh
}

// current returns s bound to its table's current description.
func (sh *shapes) current(ctx context.Context, s span) (span, error) {
	sh.mu.Lock()
	t := sh.cur[s.t.id]
	sh.mu.Unlock()
	if t == nil || t == s.t {
		return s, nil
	}
	return newSpan(ctx, t, s.lo, s.hi)
}

// refresh describes stale's table again, unless another reader already has, and returns
// the new description. The chunk key must stay the same columns: the chunks are ranges of it.
func (sh *shapes) refresh(ctx context.Context, stale *table) (*table, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if t := sh.cur[stale.id]; t != nil && t != stale {
		return t, nil
	}
	t, err := loadTable(ctx, sh.db, sh.cfg, stale.id)
	if err != nil {
		return nil, err
	}
	if !sameKey(t.key, stale.key) {
		return nil, fmt.Errorf("table %s: its chunk key changed during the snapshot, and the chunks read so far are ranges of the old one; snapshot it again with a fresh state",
			stale.id)
	}
	t.estimate = stale.estimate // progress keeps counting against the first estimate
	sh.cur[t.id] = t
	sh.cfg.Logger.Info("snapshot: table changed shape; described again, reading its chunks with the new columns",
		slog.String("table", t.id.String()), slog.Int("columns_before", len(stale.desc.Schema.Columns)),
		slog.Int("columns", len(t.desc.Schema.Columns)))
	return t, nil
}

// sameKey reports whether two chunk keys are the same columns of the same types.
func sameKey(a, b chunkKey) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || a[i].typ != b[i].typ || a[i].sqlType != b[i].sqlType {
			return false
		}
	}
	return true
}
