package schema

import (
	"fmt"
	"strings"

	"github.com/ingestkit/ingest/change"
)

// NoPrimaryKeyError names captured tables that have no primary key and no key given by the
// pipeline: they cannot be written as keyed upserts.
type NoPrimaryKeyError struct {
	Tables []change.TableID
}

func (e *NoPrimaryKeyError) Error() string {
	names := make([]string, len(e.Tables))
	for i, t := range e.Tables {
		names[i] = t.String()
	}
	return fmt.Sprintf("cdc: table %s has no primary key: give it a key in the pipeline "+
		"(transform: - source-table: %s, primary-keys: <columns>), add a primary key to the table, or exclude it "+
		"(source option tables.exclude)", strings.Join(names, ", "), names[0])
}

// Retry reports false: a restart meets it again (fault.Classified).
func (e *NoPrimaryKeyError) Retry() bool { return false }

// NullableKeyError says a column that keys a captured table's records (named in transform
// primary-keys) may hold NULL. Rows with NULL there would share one record key, and an
// upsert topic would keep only the last of them, so the snapshot and the binlog stream both
// refuse the table, at the start and when a TABLE_MAP shows the column nullable.
type NullableKeyError struct {
	Table  change.TableID
	Column string
}

func (e *NullableKeyError) Error() string {
	return fmt.Sprintf("cdc: table %s: key column %s is nullable, and rows with NULL there would share one record key "+
		"(a compacted topic keeps only the last of them): declare it NOT NULL (ALTER TABLE %s MODIFY %s … NOT NULL), "+
		"or name NOT NULL columns in the table's transform primary-keys", e.Table, e.Column, e.Table, e.Column)
}

// Retry reports false: a restart meets it again (fault.Classified).
func (e *NullableKeyError) Retry() bool { return false }
