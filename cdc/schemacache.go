package cdc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/ingestkit/ingest/change"
)

// infoLoader reads a table's information_schema facts. It returns nil, nil for a table
// that does not exist.
type infoLoader interface {
	loadTable(ctx context.Context, id change.TableID) (*tableInfo, error)
}

// schemaCache keeps the description of every captured table seen in the stream. It is
// owned by the stream goroutine.
type schemaCache struct {
	opts     schemaOptions
	loader   infoLoader
	tables   map[change.TableID]*cacheEntry
	versions map[change.TableID]uint64 // survives DROP TABLE, so versions never repeat
}

type cacheEntry struct {
	binlogID uint64 // TABLE_MAP table id the description was built from; 0 after a DDL
	table    *Table
	info     *tableInfo
	infoOK   bool // info was loaded (it may be nil: no such table)
}

func newSchemaCache(loader infoLoader, opts schemaOptions) *schemaCache {
	return &schemaCache{opts: opts, loader: loader, tables: map[change.TableID]*cacheEntry{},
		versions: map[change.TableID]uint64{}}
}

func (c *schemaCache) entry(id change.TableID) *cacheEntry {
	e := c.tables[id]
	if e == nil {
		e = &cacheEntry{}
		c.tables[id] = e
	}
	return e
}

func (c *schemaCache) loadInfo(ctx context.Context, id change.TableID, e *cacheEntry) error {
	if e.infoOK || c.loader == nil {
		return nil
	}
	info, err := c.loader.loadTable(ctx, id)
	if err != nil {
		return fmt.Errorf("read information_schema of %s: %w", id, err)
	}
	e.info, e.infoOK = info, true
	return nil
}

// fromTableMap returns the description of the table a TABLE_MAP event maps. The schema
// keeps its version (and pointer) while the shape is unchanged.
func (c *schemaCache) fromTableMap(ctx context.Context, tm *replication.TableMapEvent) (*Table, error) {
	id := change.TableID{DB: string(tm.Schema), Table: string(tm.Table)}
	e := c.entry(id)
	if e.table != nil && e.binlogID == tm.TableID {
		return e.table, nil
	}
	if err := c.loadInfo(ctx, id, e); err != nil {
		return nil, err
	}
	t, err := tableFromMap(tm, e.info, c.opts)
	if err != nil {
		return nil, err
	}
	c.install(id, e, t)
	e.binlogID = tm.TableID
	return e.table, nil
}

// install makes t the table's description, bumping the version when the shape changed.
func (c *schemaCache) install(id change.TableID, e *cacheEntry, t *Table) bool {
	if e.table != nil && sameShape(e.table, t) {
		return false
	}
	c.versions[id]++
	t.Schema.Version = c.versions[id]
	e.table = t
	return true
}

// afterDDL forgets what is known of the tables a DDL touched and returns the new
// descriptions of those that still exist and changed shape, read from information_schema
// (the state now, which is the state after the DDL unless the stream lags behind later DDL;
// the next TABLE_MAP corrects it).
func (c *schemaCache) afterDDL(ctx context.Context, ids []change.TableID) ([]*Table, error) {
	var changed []*Table
	for _, id := range ids {
		e := c.entry(id)
		e.binlogID, e.infoOK, e.info = 0, false, nil
		if err := c.loadInfo(ctx, id, e); err != nil {
			return nil, err
		}
		if e.info == nil { // dropped or renamed away
			delete(c.tables, id)
			continue
		}
		t, err := tableFromInfo(id, e.info, c.opts)
		if err != nil {
			return nil, err
		}
		if c.install(id, e, t) {
			changed = append(changed, t)
		}
	}
	return changed, nil
}

// capturedInDB lists the cached tables of db (for a DDL that could not be parsed).
func (c *schemaCache) capturedInDB(db string) []change.TableID {
	var ids []change.TableID
	for id := range c.tables {
		if id.DB == db {
			ids = append(ids, id)
		}
	}
	return ids
}

// sqlInfo loads tableInfo from information_schema over database/sql.
type sqlInfo struct {
	db      *sql.DB
	mariaDB bool
}

const columnsQuery = `SELECT COLUMN_NAME, LOWER(DATA_TYPE), COLUMN_TYPE, IFNULL(CHARACTER_SET_NAME, ''),
  IFNULL(NUMERIC_SCALE, IFNULL(DATETIME_PRECISION, 0)),
  IF(DATA_TYPE = 'bit', IFNULL(NUMERIC_PRECISION, 0), IFNULL(CHARACTER_OCTET_LENGTH, 0))
FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`

const primaryKeyQuery = `SELECT COLUMN_NAME FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX`

const checksQuery = `SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS
WHERE CONSTRAINT_SCHEMA = ? AND TABLE_NAME = ?`

var jsonValidCheck = regexp.MustCompile("(?i)json_valid\\(`((?:[^`]|``)+)`\\)")

func (s sqlInfo) loadTable(ctx context.Context, id change.TableID) (*tableInfo, error) {
	info := &tableInfo{}
	rows, err := s.db.QueryContext(ctx, columnsQuery, id.DB, id.Table)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var ic infoColumn
		if err := rows.Scan(&ic.Name, &ic.DataType, &ic.ColumnType, &ic.Charset, &ic.Scale, &ic.Length); err != nil {
			rows.Close()
			return nil, err
		}
		info.Columns = append(info.Columns, ic)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	if len(info.Columns) == 0 {
		return nil, nil
	}
	if info.PrimaryKey, err = queryStrings(ctx, s.db, primaryKeyQuery, id.DB, id.Table); err != nil {
		return nil, err
	}
	if !s.mariaDB {
		return info, nil
	}
	checks, err := queryStrings(ctx, s.db, checksQuery, id.DB, id.Table)
	if err != nil {
		return nil, err
	}
	for _, clause := range checks {
		for _, m := range jsonValidCheck.FindAllStringSubmatch(clause, -1) {
			if ic := info.column(strings.ReplaceAll(m[1], "``", "`")); ic != nil {
				ic.JSON = true
			}
		}
	}
	return info, nil
}

func queryStrings(ctx context.Context, db *sql.DB, query string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
