package change

import "time"

// TableID names a source table.
type TableID struct {
	DB    string
	Table string
}

// String returns "db.table".
func (t TableID) String() string { return t.DB + "." + t.Table }

// Column is one column of a table schema.
type Column struct {
	// Name is the column name as the server reports it.
	Name string
	// SQLType is the column's type as information_schema.COLUMNS.COLUMN_TYPE writes it
	// (e.g. "decimal(20,6)", "int(10) unsigned"); informational, for plan output and logs.
	SQLType string
	// NotNull says the column is declared NOT NULL (a primary key column is): the binlog's
	// TABLE_MAP says so for the stream, information_schema for the snapshot.
	NotNull bool
	// Comment is the column's COMMENT, "" when it has none or the source does not know it.
	Comment string
}

// Schema is the shape of a table at one point of the binlog.
type Schema struct {
	Table   TableID
	Columns []Column
	// Key holds the indexes into Columns of the primary key (or of the key the pipeline
	// gave the table), in key order. Every captured table has a non-empty Key.
	Key []int
	// Version increases each time the table's shape changes, so that a consumer can cache
	// per-schema work (pre-encoded column names) and notice a change by comparing pointers
	// or versions.
	Version uint64
}

// Op is the kind of a change.
type Op uint8

// The kinds of change.
const (
	Insert       Op = iota + 1 // After holds the new row (also every snapshot row)
	Update                     // Before and After hold the row's images
	Delete                     // Before holds the deleted row
	SchemaChange               // the table's shape changed; Schema is the new shape, no rows
)

var opNames = [...]string{"", "insert", "update", "delete", "schema-change"}

// String returns the lower-case name of the op.
func (o Op) String() string {
	if int(o) < len(opNames) && o != 0 {
		return opNames[o]
	}
	return "op(" + itoa(int64(o)) + ")"
}

// Change is one row change of a captured table.
type Change struct {
	Schema *Schema
	Op     Op
	Before Row
	After  Row
	// DDL, for a SchemaChange, is the statement that changed the shape (nil otherwise).
	DDL *DDL
}

// DDL tells what a DDL statement did to a table.
type DDL struct {
	// Kind says what the statement did.
	Kind DDLKind
	// Statement is the statement as the binlog holds it.
	Statement string
	// Position is the source position just after the statement, in the source's text form.
	Position string
	// Previous is the table's shape before the statement: nil when the table did not exist
	// before it (CREATE TABLE, RENAME TABLE onto the name) or was not known to the source.
	Previous *Schema
}

// DDLKind is what a DDL statement did to a table, and so what the SchemaChange's Schema is.
type DDLKind uint8

// The kinds of DDL.
const (
	// Reshaped: the shape changed, or the table was created; Schema is the new shape.
	Reshaped DDLKind = iota
	// Dropped: DROP TABLE, or RENAME TABLE away; Schema is the last shape (Previous).
	Dropped
	// Truncated: TRUNCATE TABLE; Schema is the shape, unchanged (Previous).
	Truncated
	// Resnapshotting is no statement: the table is about to be snapshotted again while it
	// is captured (it joins the captured set, or `ingest resnapshot` asked for it). A sink
	// that keeps the last record per key notes where the table's records end. Schema names
	// the table; Statement says why.
	Resnapshotting
	// Resnapshotted is no statement: the snapshot that Resnapshotting began has written
	// every row the table had. A key of the table that it did not write is no longer in the
	// table, and a sink that keeps the last record per key writes a tombstone for it.
	Resnapshotted
)

// Batch is a run of changes from one source transaction, in commit order.
//
// A source transaction is delivered as one or more batches; the last has End set and Position
// holds the source position just after the transaction, in the source's own text form (opaque
// to the sink, which only stores it). A batch with End set and no changes is a heartbeat: it
// moves the position on without writing anything.
type Batch struct {
	Changes []Change
	// CommitTime is the source commit time (second precision from the binlog event header),
	// or the time a snapshot chunk was read.
	CommitTime time.Time
	End        bool
	Position   []byte
	// Mark, when set on an End batch, is the source's own typed form of Position (a
	// cdc.Position for the binlog stream), so that a consumer that compares positions
	// need not parse the text again. The sink ignores it.
	Mark any
	// Release, when set, is called once by the last consumer of the batch when it no longer
	// needs the rows of the batch or of any batch sent before it: the producer may then
	// reuse their memory. A consumer that keeps rows must not call it.
	Release func()
}
