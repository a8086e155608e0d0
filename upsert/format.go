package upsert

import (
	"strings"
	"time"

	"github.com/ingestkit/ingest/change"
)

// Format turns changes into messages: the sink writes with one. [Encoder] writes the
// upsert rows of docs/output.md (type upsert-kafka), [EventEncoder] the change events of
// Flink CDC's Kafka sink (type kafka). Everything else of the sink is the same for both.
type Format interface {
	// EncodeTo appends to dst the messages of one change, committed at commit, for the
	// target to (whose table id the messages may name), and returns the extended slice.
	EncodeTo(dst []Message, c *change.Change, commit time.Time, to *Target) ([]Message, error)
	// PerTarget reports whether the messages depend on the target: when false, the sink
	// encodes a change once and writes the same messages to every topic of its table.
	PerTarget() bool
}

// Target is where the records of a table go: a topic, and the table id that the records
// name (a routed table takes its route's sink-table as its id, as in Flink CDC).
type Target struct {
	Topic string
	Table SinkTable
}

// SinkTable is Flink CDC's TableId: up to three parts, of which MySQL tables fill schema
// (the database) and table.
type SinkTable struct {
	Namespace, Schema, Table string
}

// ParseSinkTable splits a routed sink-table name as Flink CDC's TableId.parse does: one
// part is the table, two are schema.table, three namespace.schema.table (more parts stay
// in the table name).
func ParseSinkTable(name string) SinkTable {
	parts := strings.SplitN(name, ".", 3)
	switch len(parts) {
	case 1:
		return SinkTable{Table: parts[0]}
	case 2:
		return SinkTable{Schema: parts[0], Table: parts[1]}
	}
	return SinkTable{Namespace: parts[0], Schema: parts[1], Table: parts[2]}
}

// SourceTable is the SinkTable of a table that no route renames: db.table.
func SourceTable(id change.TableID) SinkTable { return SinkTable{Schema: id.DB, Table: id.Table} }

// String returns the id as Flink CDC's TableId.toString does: the parts that are set,
// joined by '.'.
func (t SinkTable) String() string {
	switch {
	case t.Namespace != "":
		return t.Namespace + "." + t.Schema + "." + t.Table
	case t.Schema != "":
		return t.Schema + "." + t.Table
	}
	return t.Table
}

// EncodeTo implements [Format]: the upsert messages do not depend on the target.
func (e *Encoder) EncodeTo(dst []Message, c *change.Change, commit time.Time, _ *Target) ([]Message, error) {
	return e.Encode(dst, c, commit)
}

// PerTarget implements [Format]: false.
func (e *Encoder) PerTarget() bool { return false }
