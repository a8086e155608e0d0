// Package binlog is the binlog reader of the source: [Stream] turns the events of a
// replication connection into [change.Batch]es, one source transaction at a time, bounded
// in size, with heartbeats, and survives reconnects without gaps or duplicates.
//
// The parts, each in a file named for its role:
//
//   - stream.go: [Stream], fed by go-mysql's reader goroutine through [Stream.Handle]; the
//     rows of captured tables are decoded through cdc/schema's row plans, DDL is applied to
//     the schema history of cdc/history, and a row change written as a statement stops the
//     stream ([StatementFormatError]); [SkipUncaptured] leaves the rows of other tables
//     undecoded.
//   - schemachanges.go: the schema changes (change.DDL) that a DDL or TRUNCATE statement
//     makes to captured tables, for the sink.
//   - watchdog.go: [Watchdog], which closes a connection on which the server has gone
//     silent for longer than its heartbeat promises.
//   - errors.go: the errors of the stream; [RetryableError] is the one a new connection may
//     cure.
//
// It stands on the third floor of the source, above cdc/history, cdc/schema and
// cdc/binlogpos; the source (package cdc) composes it with the connection, the checks and
// the reconnect loop (see cdc/doc.go for the floors). A Stream is owned by the goroutine
// running the source's Run.
package binlog
