// Package cdc is the MySQL/MariaDB source of ingest: it reads the row binlog and turns it
// into [change.Batch]es of neutral [change.Value]s.
//
// The parts, each in a file named for its role:
//
//   - position.go: [Position], a point between two source transactions (file/offset, MariaDB
//     GTIDs kept as the last GTID per domain, MySQL GTID sets), with a text form that
//     round-trips through [ParsePosition].
//   - schema.go: [Column] and [Table], the description of a captured table built from the
//     binlog's TABLE_MAP event (binlog_row_metadata=FULL) and information_schema, cached per
//     table and invalidated by DDL.
//   - decode.go: the type conversion from a binlog value ([Column.FromBinlog]) or from the text
//     a SELECT returns ([Column.FromText]) to a [change.Value], so the snapshot and the binlog
//     produce identical values for the same row state.
//   - source.go and stream.go: [Source], which connects as a replica, groups row events per
//     source transaction, bounds batches, emits heartbeats and reconnects without gaps or
//     duplicates.
//   - preflight.go: [Preflight], the server checks with the exact fix for each problem.
//
// Concurrency: a [Source] is used by one goroutine calling [Source.Run]; Run owns every
// goroutine it starts and returns only after they have stopped. Errors are typed: see
// [RetryableError], [PositionLostError], [ServerIDConflictError] and [NoPrimaryKeyError].
package cdc
