package schemachange

import (
	"fmt"
	"strings"

	"github.com/ingestkit/ingest/change"
)

// RefusedError says that, under EXCEPTION, a DDL statement changed the shape of a captured
// table. It is terminal: nothing of the statement's transaction or after it reaches the
// sink, so the stored position stays before it and every run stops at it again.
type RefusedError struct {
	Table     change.TableID
	Kind      change.DDLKind // what the statement did to the table
	Statement string
	Position  string // the source position after the statement
}

var ddlKindNames = [...]string{"schema change", "drop", "truncate", "re-snapshot", "re-snapshot"}

func (e *RefusedError) Error() string {
	what := "schema change"
	if int(e.Kind) < len(ddlKindNames) {
		what = ddlKindNames[e.Kind]
	}
	return fmt.Sprintf("%s of %s refused (pipeline.schema.change.behavior is EXCEPTION): %q at binlog position %s; "+
		"nothing from this statement on was written and the stored position stays before it, so every run stops here: "+
		"to go on, set schema.change.behavior to EVOLVE (rows follow the new shape), LENIENT (columns are only added) "+
		"or IGNORE (rows keep the shape of the start)", what, e.Table, e.Statement, e.Position)
}

// KeyChangedError says that, under LENIENT or IGNORE, a table's key columns changed: the
// record key stays that of the start, whose values may no longer be unique, so records of
// different rows could overwrite each other in the topic.
type KeyChangedError struct {
	Table     change.TableID
	Mode      Mode
	From, To  []string // the key columns written, and those of the table now
	Statement string   // the DDL, when a SchemaChange told it
	Position  string   // the source position after the DDL, when known
}

func (e *KeyChangedError) Error() string {
	by := " (in the rows read)"
	if e.Statement != "" {
		by = fmt.Sprintf(" by %q at binlog position %s", e.Statement, e.Position)
	}
	return fmt.Sprintf("the key of %s changed from (%s) to (%s)%s; under schema.change.behavior %s the record key stays (%s), "+
		"which may no longer be unique: set schema.change.behavior to EVOLVE (keys follow the table; records of the old "+
		"keys stay in the topic), or keep the old key with a transform (source-table: %s, primary-keys: %s)",
		e.Table, strings.Join(e.From, ", "), strings.Join(e.To, ", "), by, e.Mode, strings.Join(e.From, ", "),
		e.Table, strings.Join(e.From, ","))
}
