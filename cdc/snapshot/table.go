package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ingestkit/ingest/cdc/history"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
)

// Decoder turns one column's values into change.Values; *cdc.Column implements it. FromText
// converts the text a SELECT returns (with time_zone '+00:00' and character_set_results NULL);
// FromOwnedText does the same with text the caller hands over, which it may rewrite;
// FromBinary converts a value of the binary protocol's fixed forms (integers, FLOAT, DOUBLE,
// temporal types; BinaryForm reports whether the column's values come so), and BinaryText
// renders one as the text FromText takes; FromBinlog converts a value of go-mysql's row
// decoder (ParseTime, TimestampStringLocation UTC, UseDecimal off). All must give identical
// Values for the same row state. The Value may alias b.
type Decoder interface {
	FromText(b []byte) (change.Value, error)
	FromOwnedText(b []byte) (change.Value, error)
	BinaryForm() bool
	FromBinary(b []byte) (change.Value, error)
	BinaryText(b []byte) ([]byte, error)
	FromBinlog(v any) (change.Value, error)
}

// Table is what the snapshot needs of a table: its schema (columns in table order and the
// record key) and a decoder per column.
type Table struct {
	Schema  *change.Schema
	Columns []Decoder
}

// FromCDC adapts a description built by package cdc.
func FromCDC(t *schema.Table) *Table {
	cols := make([]Decoder, len(t.Columns))
	for i := range t.Columns {
		cols[i] = &t.Columns[i]
	}
	return &Table{Schema: t.Schema, Columns: cols}
}

// DescribeOptions are the table-shaping settings a describer applies: package cdc's, so
// that the snapshot and the binlog stream describe a table alike.
type DescribeOptions = history.DescribeOptions

// DescribeFunc describes a table as it is now, from information_schema. It returns nil, nil
// when the table does not exist.
type DescribeFunc func(ctx context.Context, db *sql.DB, id change.TableID, opts DescribeOptions) (*Table, error)

// DescribeCDC is the default DescribeFunc: package cdc's [cdc.DescribeTable], whose column
// decoders give the binlog stream's values for the text a SELECT returns.
func DescribeCDC(ctx context.Context, db *sql.DB, id change.TableID, opts DescribeOptions) (*Table, error) {
	t, err := history.DescribeTable(ctx, db, id, opts)
	if err != nil || t == nil {
		return nil, err
	}
	return FromCDC(t), nil
}

// errNoTable says a table to snapshot does not exist (any more): dropped or renamed away
// after it was listed or chosen. It has no rows to read, and its DROP or RENAME follows in
// the binlog, where the stream meets it.
var errNoTable = errors.New("the table does not exist")

// table is a table being snapshotted: its description, chunk key and row estimate.
type table struct {
	id        change.TableID
	desc      *Table
	key       chunkKey
	estimate  int64
	avgRow    int64  // information_schema.TABLES.AVG_ROW_LENGTH, bytes (0 when unknown)
	selectSQL string // "SELECT `a`,`b` FROM `db`.`t`"
	orderSQL  string // " ORDER BY `k1`,`k2`"
	// weigher weighs the key texts that only the server can order, through the pool the
	// table was loaded with; nil when the key has none.
	weigher *weigher
}

// name returns the table's quoted name.
func (t *table) name() string { return quoteName(t.id) }

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func quoteName(id change.TableID) string { return quoteIdent(id.DB) + "." + quoteIdent(id.Table) }

// loadTable describes a table and resolves its chunk key: the configured key column(s) first,
// then the record key.
func loadTable(ctx context.Context, db *sql.DB, cfg *Config, id change.TableID) (*table, error) {
	desc, err := cfg.Describe(ctx, db, id, DescribeOptions{TinyInt1AsNumber: cfg.TinyInt1AsNumber, Keys: cfg.Keys})
	if err != nil {
		return nil, fmt.Errorf("table %s: describe: %w", id, err)
	}
	if desc == nil {
		return nil, fmt.Errorf("table %s: %w", id, errNoTable)
	}
	if desc.Schema == nil || len(desc.Schema.Key) == 0 {
		return nil, fmt.Errorf("table %s has no primary key: give it one with transform primary-keys (and, for chunking, scan.incremental.snapshot.chunk.key-column)", id)
	}
	if len(desc.Columns) != len(desc.Schema.Columns) {
		return nil, fmt.Errorf("table %s: %d decoders for %d columns", id, len(desc.Columns), len(desc.Schema.Columns))
	}
	if err := checkRecordKey(ctx, db, id, desc.Schema); err != nil {
		return nil, err
	}
	names := chunkKeyNames(cfg, id, desc.Schema)
	facts, err := keyFacts(ctx, db, id, names)
	if err != nil {
		return nil, err
	}
	key, err := buildChunkKey(desc.Schema, facts)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", id, err)
	}
	for i := range key {
		if key[i].typ != keyText {
			continue
		}
		if key[i].coll, err = loadCollation(ctx, db, cfg.Addr, key[i].collation); err != nil {
			return nil, fmt.Errorf("table %s: chunk key column %s: %w; choose another key column with scan.incremental.snapshot.chunk.key-column",
				id, key[i].name, err)
		}
	}
	t := &table{id: id, desc: desc, key: key}
	if slices.ContainsFunc(key, func(kc keyColumn) bool { return kc.serverWeighed() }) {
		t.weigher = newWeigher(db)
	}
	t.estimate, t.avgRow, err = tableSize(ctx, db, id)
	if err != nil {
		return nil, err
	}
	t.selectSQL, t.orderSQL = selectSQL(t), orderSQL(key)
	return t, nil
}

// checkRecordKey refuses a record key column that may hold NULL (one named in transform
// primary-keys), as the binlog stream does: rows with NULL there would share a record key.
func checkRecordKey(ctx context.Context, db *sql.DB, id change.TableID, s *change.Schema) error {
	names := make([]string, len(s.Key))
	for i, k := range s.Key {
		names[i] = s.Columns[k].Name
	}
	facts, err := keyFacts(ctx, db, id, names)
	if err != nil {
		return err
	}
	for _, f := range facts {
		if f.Nullable {
			return &schema.NullableKeyError{Table: id, Column: f.Name}
		}
	}
	return nil
}

func chunkKeyNames(cfg *Config, id change.TableID, s *change.Schema) []string {
	if cfg.ChunkKey != nil {
		if names := cfg.ChunkKey(id); len(names) > 0 {
			return names
		}
	}
	names := make([]string, len(s.Key))
	for i, k := range s.Key {
		names[i] = s.Columns[k].Name
	}
	return names
}

func buildChunkKey(s *change.Schema, facts []columnFacts) (chunkKey, error) {
	key := make(chunkKey, len(facts))
	for i, f := range facts {
		index := -1
		for j, c := range s.Columns {
			if strings.EqualFold(c.Name, f.Name) {
				index = j
			}
		}
		if index < 0 {
			return nil, fmt.Errorf("chunk key column %s is not a column of the description", f.Name)
		}
		kc, err := newKeyColumn(f, index)
		if err != nil {
			return nil, err
		}
		key[i] = kc
	}
	return key, nil
}

const keyFactsQuery = `SELECT COLUMN_NAME, LOWER(DATA_TYPE), COLUMN_TYPE, IFNULL(COLLATION_NAME, ''), IS_NULLABLE = 'YES'
FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?`

// keyFacts reads the information_schema facts of the named columns, in that order.
func keyFacts(ctx context.Context, db *sql.DB, id change.TableID, names []string) ([]columnFacts, error) {
	out := make([]columnFacts, len(names))
	for i, name := range names {
		f := &out[i]
		err := db.QueryRowContext(ctx, keyFactsQuery, id.DB, id.Table, name).
			Scan(&f.Name, &f.DataType, &f.ColumnType, &f.Collation, &f.Nullable)
		if errors.Is(err, sql.ErrNoRows) {
			// Dropped or renamed away since it was described: as if it had not been found.
			if _, _, err := tableSize(ctx, db, id); errors.Is(err, errNoTable) {
				return nil, err
			}
			return nil, fmt.Errorf("table %s: chunk key column %q does not exist", id, name)
		}
		if err != nil {
			return nil, fmt.Errorf("table %s: read facts of key column %s: %w", id, name, err)
		}
	}
	return out, nil
}

// tableSize returns information_schema.TABLES.TABLE_ROWS and AVG_ROW_LENGTH (InnoDB's
// estimates, off-page columns included; 0 when unknown).
func tableSize(ctx context.Context, db *sql.DB, id change.TableID) (rows, avgRow int64, err error) {
	var n, avg sql.NullInt64
	err = db.QueryRowContext(ctx, `SELECT TABLE_ROWS, AVG_ROW_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`,
		id.DB, id.Table).Scan(&n, &avg)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("table %s: %w", id, errNoTable)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("table %s: read row estimate: %w", id, err)
	}
	return n.Int64, avg.Int64, nil
}

// pieceBytes is about the most row bytes one SELECT of a chunk reads, by the table's
// AVG_ROW_LENGTH: a piece is held whole until it is emitted, and a chunk of
// Config.ChunkSize rows of 1 MB each would be gigabytes.
const pieceBytes = 4 << 20

// pieceRows returns the most rows one SELECT of t reads: limit, or fewer for wide rows (at
// least minPieceRows).
func (t *table) pieceRows(limit int) int {
	if t.avgRow <= 0 {
		return limit
	}
	return int(min(int64(limit), max(minPieceRows, pieceBytes/t.avgRow)))
}

// minPieceRows bounds how far pieceRows cuts a piece of rows wider than pieceBytes/minPieceRows.
const minPieceRows = 4

// discoverTables lists the base tables match accepts, outside the system schemas.
func discoverTables(ctx context.Context, db *sql.DB, match func(db, table string) bool) ([]change.TableID, error) {
	rows, err := db.QueryContext(ctx, `SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES
WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN ('information_schema', 'mysql', 'performance_schema', 'sys')
ORDER BY TABLE_SCHEMA, TABLE_NAME`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var ids []change.TableID
	for rows.Next() {
		var id change.TableID
		if err := rows.Scan(&id.DB, &id.Table); err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		if match(id.DB, id.Table) {
			ids = append(ids, id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	return ids, nil
}

// selectSQL lists the columns in table order.
func selectSQL(t *table) string {
	names := make([]string, len(t.desc.Schema.Columns))
	for i, c := range t.desc.Schema.Columns {
		names[i] = quoteIdent(c.Name)
	}
	return "SELECT " + strings.Join(names, ",") + " FROM " + t.name()
}

func orderSQL(k chunkKey) string {
	var b strings.Builder
	b.WriteString(" ORDER BY ")
	for i, kc := range k {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(quoteIdent(kc.name))
	}
	return b.String()
}

// CheckTable loads a table as a snapshot with cfg would, its chunk key included (reading a
// collation's weights from the server), and returns why it could not be snapshotted, or nil.
// Only cfg's Addr, Describe, TinyInt1AsNumber, Keys and ChunkKey are used.
func CheckTable(ctx context.Context, db *sql.DB, cfg Config, id change.TableID) error {
	if cfg.Describe == nil {
		cfg.Describe = DescribeCDC
	}
	_, err := loadTable(ctx, db, &cfg, id)
	return err
}
