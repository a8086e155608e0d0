package cdc

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/ingestkit/ingest/change"
)

// Open returns a connection pool to the source with cfg's address, credentials, TLS and
// timeout, in the session time zone +00:00 (so TIMESTAMP text is UTC). It does no I/O.
func Open(cfg Config) (*sql.DB, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return (&Source{cfg: c}).openDB()
}

// TableInfo is one base table of the server.
type TableInfo struct {
	ID change.TableID
	// EstimatedRows is information_schema.TABLES.TABLE_ROWS: an estimate for InnoDB.
	EstimatedRows int64
}

// ListTables returns the base tables that match, in (db, table) order, leaving out the
// server's own schemas.
func ListTables(ctx context.Context, db *sql.DB, match func(db, table string) bool) ([]TableInfo, error) {
	const q = `SELECT TABLE_SCHEMA, TABLE_NAME, COALESCE(TABLE_ROWS, 0) FROM information_schema.TABLES
WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')
ORDER BY 1, 2`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("cdc: list tables: %w", err)
	}
	defer rows.Close()
	var out []TableInfo
	for rows.Next() {
		var t TableInfo
		if err := rows.Scan(&t.ID.DB, &t.ID.Table, &t.EstimatedRows); err != nil {
			return nil, fmt.Errorf("cdc: list tables: %w", err)
		}
		if match(t.ID.DB, t.ID.Table) {
			out = append(out, t)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cdc: list tables: %w", err)
	}
	return out, nil
}
