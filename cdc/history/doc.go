// Package history keeps the schema of the captured tables through the binlog: the shapes
// read from information_schema at the start position, then each DDL statement applied in
// binlog order, so that every event decodes with the facts of its time (TINYINT(1), MariaDB
// JSON, SQL types; the names too without FULL row metadata).
//
// The parts, each in a file named for its role:
//
//   - ddl.go: what a statement of the binlog is (transaction control, DML, DDL) and which
//     tables it names; ddlparse.go: DDL parsed with TiDB's parser, MariaDB syntax rewritten
//     first; ddlapply.go: a DDL statement applied to the shapes it changes; created.go: the
//     tables a CREATE or RENAME brings into being.
//   - history.go: [History], the versions of each table's shape stamped with the position
//     from which they hold, stored next to the stream's position ([File], [Parse]);
//     historyparts.go: the stored history split into one part per table and joined again.
//   - schemacache.go: [Cache], the description ([schema.Table]) of each table the stream
//     meets, built from its TABLE_MAP event and the history, and rebuilt after DDL; [SQLInfo]
//     reads shapes from information_schema; describe.go: [DescribeTable] for the snapshot.
//
// It stands on the second floor of the source, above cdc/schema and cdc/binlogpos (see
// cdc/doc.go for the floors). A History is changed by the stream goroutine and encoded from
// any goroutine (it holds a mutex); a Cache is owned by the stream goroutine.
package history
