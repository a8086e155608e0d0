package history

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
)

// DescribeOptions are the table-shaping settings of a Config, for [DescribeTable].
type DescribeOptions struct {
	// TinyInt1AsNumber keeps TINYINT(1) a number (see Config.TinyInt1AsNumber).
	TinyInt1AsNumber bool
	// Keys is the pipeline's key override (see Config.Keys).
	Keys func(db, table string) ([]string, bool)
}

// DescribeTable describes a table as it is now, from information_schema: the snapshot
// reader's description, which decodes SELECT text ([Column.FromText]) to the same values
// the binlog stream gives for the same row state. It returns nil, nil when the table does
// not exist, and a [*NoPrimaryKeyError] when it has no key.
func DescribeTable(ctx context.Context, db *sql.DB, id change.TableID, opts DescribeOptions) (*schema.Table, error) {
	var version string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return nil, fmt.Errorf("cdc: describe %s: %w", id, err)
	}
	loader := SQLInfo{DB: db, MariaDB: strings.Contains(strings.ToLower(version), "mariadb")}
	info, err := loader.loadTable(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("cdc: describe %s: %w", id, err)
	}
	if info == nil {
		return nil, nil
	}
	t, err := schema.TableFromInfo(id, info, schema.Options{TinyInt1AsBool: !opts.TinyInt1AsNumber, Keys: opts.Keys})
	if err != nil {
		return nil, err
	}
	t.Schema.Version = 1
	return t, nil
}
