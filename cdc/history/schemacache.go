package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
)

// Cache keeps the description of every captured table seen in the stream, built from
// the TABLE_MAP events and the schema history. It is owned by the stream goroutine.
type Cache struct {
	Opts     schema.Options
	Loader   infoLoader
	Hist     *History
	log      *slog.Logger
	tables   map[change.TableID]*cacheEntry
	versions map[change.TableID]uint64 // survives DROP TABLE, so versions never repeat
	// Keyless are the tables a DDL created (or renamed onto their name) without a key and
	// that no description was installed for: told neither as created nor as skipped yet.
	Keyless map[change.TableID]bool
}

type cacheEntry struct {
	binlogID uint64 // TABLE_MAP table id the description was built from; 0 after a DDL
	table    *schema.Table
}

// NewCache returns a cache of the tables of hist, reading what the binlog lacks through
// loader.
func NewCache(hist *History, loader infoLoader, opts schema.Options, log *slog.Logger) *Cache {
	return &Cache{Opts: opts, Loader: loader, Hist: hist, log: log, tables: map[change.TableID]*cacheEntry{},
		versions: map[change.TableID]uint64{}, Keyless: map[change.TableID]bool{}}
}

func (c *Cache) entry(id change.TableID) *cacheEntry {
	e := c.tables[id]
	if e == nil {
		e = &cacheEntry{}
		c.tables[id] = e
	}
	return e
}

// FromTableMap returns the description of the table a TABLE_MAP event maps, in the
// transaction that starts at position at. The schema keeps its version (and pointer) while
// the shape is unchanged. A table the history does not have (or has as dropped) is read from
// information_schema and recorded from at on.
func (c *Cache) FromTableMap(ctx context.Context, tm *replication.TableMapEvent, at binlogpos.Position) (*schema.Table, error) {
	id := change.TableID{DB: string(tm.Schema), Table: string(tm.Table)}
	e := c.entry(id)
	if e.table != nil && e.binlogID == tm.TableID {
		return e.table, nil
	}
	info, known := c.Hist.Shape(id)
	if info == nil && c.Loader != nil {
		loaded, err := c.Loader.loadTable(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("read information_schema of %s: %w", id, err)
		}
		if known {
			c.log.Warn("cdc: rows of a table the schema history holds as dropped; reading it from information_schema",
				"table", id.String(), "position", at.String())
		}
		c.Hist.Record(id, at, loaded)
		info = loaded
	}
	t, err := schema.TableFromMap(tm, info, c.Opts)
	if err != nil {
		return nil, err
	}
	c.install(id, e, t)
	e.binlogID = tm.TableID
	return e.table, nil
}

// install makes t the table's description, bumping the version when the shape changed.
func (c *Cache) install(id change.TableID, e *cacheEntry, t *schema.Table) bool {
	if e.table != nil && schema.SameShape(e.table, t) {
		return false
	}
	c.versions[id]++
	t.Schema.Version = c.versions[id]
	e.table = t
	return true
}

// AfterDDL rebuilds the descriptions of tables a DDL changed from the history's new shapes
// and returns those that still exist and changed shape, and, among them, those that had no
// description because they were created without a key (keyed: the DDL gave them one, so
// they are told as created). The next TABLE_MAP of each completes the description with the
// binlog's metadata. A table that the DDL at position at created (among created, the tables
// its CREATE TABLE makes, or one without a shape before it, renamed onto its name) without a
// key is kept in c.keyless and left out: a later DDL of its creation may still give it a
// key, and its first rows decide (stream.tableMap). A CREATE TABLE proves the table new even
// where the history had a shape before it (one read from information_schema at the start,
// after the binlog the stream reads had created the table).
func (c *Cache) AfterDDL(ids []change.TableID, at binlogpos.Position, created []change.TableID) (changed []*schema.Table, keyed map[change.TableID]bool, err error) {
	for _, id := range ids {
		info, _ := c.Hist.Shape(id)
		if info == nil { // dropped or renamed away
			delete(c.tables, id)
			delete(c.Keyless, id)
			continue
		}
		e := c.entry(id)
		e.binlogID = 0
		t, err := schema.TableFromInfo(id, info, c.Opts)
		if errors.As(err, new(*schema.NoPrimaryKeyError)) && (c.Keyless[id] || slices.Contains(created, id) || c.Hist.Previous(id, at) == nil) {
			c.Keyless[id] = true
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if c.Keyless[id] {
			delete(c.Keyless, id)
			if keyed == nil {
				keyed = map[change.TableID]bool{}
			}
			keyed[id] = true
		}
		if c.install(id, e, t) {
			changed = append(changed, t)
		}
	}
	return changed, keyed, nil
}

// systemSchemas are left out of bulk reads.
const systemSchemas = `('mysql', 'information_schema', 'performance_schema', 'sys')`

const tablesQuery = `SELECT TABLE_SCHEMA, TABLE_NAME, IFNULL(TABLE_COLLATION, '') FROM information_schema.TABLES
WHERE TABLE_TYPE NOT IN ('VIEW', 'SYSTEM VIEW') AND `

const columnsQuery = `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, LOWER(DATA_TYPE), COLUMN_TYPE, IFNULL(CHARACTER_SET_NAME, ''),
  IFNULL(NUMERIC_SCALE, IFNULL(DATETIME_PRECISION, 0)),
  IF(DATA_TYPE = 'bit', IFNULL(NUMERIC_PRECISION, 0), IFNULL(CHARACTER_OCTET_LENGTH, 0)),
  IS_NULLABLE = 'NO', COLUMN_COMMENT
FROM information_schema.COLUMNS WHERE `

const columnsOrder = ` ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`

const primaryKeyQuery = `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.STATISTICS
WHERE INDEX_NAME = 'PRIMARY' AND `

const primaryKeyOrder = ` ORDER BY TABLE_SCHEMA, TABLE_NAME, SEQ_IN_INDEX`

// checksQuery reads MariaDB's CHECK constraints; LEVEL (10.5.10+) tells a column's own check
// from a table constraint.
const checksQuery = `SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, LEVEL, CHECK_CLAUSE
FROM information_schema.CHECK_CONSTRAINTS WHERE `

const checksQueryNoLevel = `SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, '', CHECK_CLAUSE
FROM information_schema.CHECK_CONSTRAINTS WHERE `

var jsonValidCheck = regexp.MustCompile("(?i)json_valid\\(`((?:[^`]|``)+)`\\)")

// SQLInfo loads table shapes from information_schema over database/sql.
type SQLInfo struct {
	DB      *sql.DB
	MariaDB bool
}

func (s SQLInfo) loadTable(ctx context.Context, id change.TableID) (*schema.TableShape, error) {
	infos, err := s.load(ctx, "TABLE_SCHEMA = ? AND TABLE_NAME = ?", []any{id.DB, id.Table}, "CONSTRAINT_SCHEMA = ? AND TABLE_NAME = ?")
	if err != nil {
		return nil, err
	}
	return infos[id], nil
}

func (s SQLInfo) dbCharset(ctx context.Context, db string) (string, error) {
	var cs string
	err := s.DB.QueryRowContext(ctx, "SELECT DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", db).Scan(&cs)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return cs, err
}

// LoadAll reads every table match selects, in a few queries over the databases that hold
// one.
func (s SQLInfo) LoadAll(ctx context.Context, match func(db, table string) bool) (map[change.TableID]*schema.TableShape, error) {
	rows, err := s.DB.QueryContext(ctx, tablesQuery+"TABLE_SCHEMA NOT IN "+systemSchemas)
	if err != nil {
		return nil, err
	}
	var dbs []string
	for rows.Next() {
		var db, table, coll string
		if err := rows.Scan(&db, &table, &coll); err != nil {
			rows.Close()
			return nil, err
		}
		if match(db, table) && !slices.Contains(dbs, db) {
			dbs = append(dbs, db)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	if len(dbs) == 0 {
		return map[change.TableID]*schema.TableShape{}, nil
	}
	in := strings.TrimSuffix(strings.Repeat("?, ", len(dbs)), ", ")
	args := make([]any, len(dbs))
	for i, db := range dbs {
		args[i] = db
	}
	infos, err := s.load(ctx, "TABLE_SCHEMA IN ("+in+")", args, "CONSTRAINT_SCHEMA IN ("+in+")")
	if err != nil {
		return nil, err
	}
	for id := range infos {
		if !match(id.DB, id.Table) {
			delete(infos, id)
		}
	}
	return infos, nil
}

// load reads the tables a condition on TABLE_SCHEMA and TABLE_NAME selects (checkCond is the
// same condition for CHECK_CONSTRAINTS).
func (s SQLInfo) load(ctx context.Context, cond string, args []any, checkCond string) (map[change.TableID]*schema.TableShape, error) {
	infos := map[change.TableID]*schema.TableShape{}
	charsets := map[change.TableID]string{}
	err := queryRows(ctx, s.DB, tablesQuery+cond, args, func(rows *sql.Rows) error {
		var id change.TableID
		var coll string
		if err := rows.Scan(&id.DB, &id.Table, &coll); err != nil {
			return err
		}
		charsets[id] = coll
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = queryRows(ctx, s.DB, columnsQuery+cond+columnsOrder, args, func(rows *sql.Rows) error {
		var id change.TableID
		var ic schema.InfoColumn
		if err := rows.Scan(&id.DB, &id.Table, &ic.Name, &ic.DataType, &ic.ColumnType, &ic.Charset, &ic.Scale, &ic.Length, &ic.NotNull, &ic.Comment); err != nil {
			return err
		}
		coll, ok := charsets[id]
		if !ok { // a view
			return nil
		}
		info := infos[id]
		if info == nil {
			info = &schema.TableShape{}
			if coll != "" {
				info.Charset = charsetOfCollation(coll)
			}
			infos[id] = info
		}
		info.Columns = append(info.Columns, ic)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = queryRows(ctx, s.DB, primaryKeyQuery+cond+primaryKeyOrder, args, func(rows *sql.Rows) error {
		var id change.TableID
		var col string
		if err := rows.Scan(&id.DB, &id.Table, &col); err != nil {
			return err
		}
		if info := infos[id]; info != nil {
			info.PrimaryKey = append(info.PrimaryKey, col)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.MariaDB {
		if err := s.loadChecks(ctx, infos, checkCond, args); err != nil {
			return nil, err
		}
	}
	for _, info := range infos {
		info.RefreshJSON()
	}
	return infos, nil
}

// loadChecks marks the JSON columns of MariaDB: those a CHECK (json_valid(col)) validates.
func (s SQLInfo) loadChecks(ctx context.Context, infos map[change.TableID]*schema.TableShape, cond string, args []any) error {
	scan := func(rows *sql.Rows) error {
		var id change.TableID
		var name, level, clause string
		if err := rows.Scan(&id.DB, &id.Table, &name, &level, &clause); err != nil {
			return err
		}
		info := infos[id]
		if info == nil {
			return nil
		}
		var cols []string
		for _, m := range jsonValidCheck.FindAllStringSubmatch(clause, -1) {
			cols = append(cols, strings.ReplaceAll(m[1], "``", "`"))
		}
		if len(cols) == 0 {
			return nil
		}
		// A column's own check is named after the column (LEVEL says so from 10.5.10 on).
		if ic := info.Column(name); (level == "Column" || level == "" && len(cols) == 1) && ic != nil && strings.EqualFold(cols[0], ic.Name) {
			ic.ColumnCheck = true
			return nil
		}
		info.Checks = append(info.Checks, schema.JSONCheck{Name: name, Columns: cols})
		return nil
	}
	err := queryRows(ctx, s.DB, checksQuery+cond, args, scan)
	if err != nil && strings.Contains(err.Error(), "LEVEL") { // before MariaDB 10.5.10
		err = queryRows(ctx, s.DB, checksQueryNoLevel+cond, args, scan)
	}
	return err
}

func queryRows(ctx context.Context, db *sql.DB, query string, args []any, scan func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// QueryStrings runs a query that returns one string column and returns its values.
func QueryStrings(ctx context.Context, db *sql.DB, query string, args ...any) ([]string, error) {
	var out []string
	err := queryRows(ctx, db, query, args, func(rows *sql.Rows) error {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	return out, err
}
