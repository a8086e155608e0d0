// Package cdc is the MySQL/MariaDB source of ingest: it reads the row binlog and turns it
// into [change.Batch]es of neutral [change.Value]s.
//
// # Floors
//
// The source is split by role into packages that import only downward; a test
// (internal/repocheck/floors_test.go) fails on an import that runs sideways or back up:
//
//	5  cdc/snapshot    the initial snapshot, lock-free, with watermarks in the binlog
//	4  cdc             the source: connection, checks, start positions, reconnects
//	3  cdc/binlog      the binlog reader: events to batches, row images, heartbeats, watchdog
//	2  cdc/history     DDL parsed and applied, the schema history, the schema cache
//	1  cdc/schema      columns and tables, and the decoding of their values
//	1  cdc/binlogpos   positions and GTID sets
//
// Below them stand only the change model (change) and internal helpers (internal/fault).
// A newcomer who changes how a DATETIME decodes reads cdc/schema; how DDL history is kept,
// cdc/history; how a transaction becomes batches, cdc/binlog.
//
// # This package
//
// The parts, each in a file named for its role:
//
//   - source.go: [Source], which connects as a replica, runs a [binlog.Stream] over each
//     connection, reconnects without gaps or duplicates, and keeps the schema history
//     ([Source.SchemaHistory], [Config.SchemaHistory]); config.go: [Config].
//   - preflight.go: [Preflight], the server checks with the exact fix for each problem, run by
//     the caller before the first read and by [Source.Run] before every reconnect;
//     checkpos.go: the position the stream reads from checked against the server's binlog;
//     serverid.go: [ServerIdentity], which tells a rebuilt or replaced server; startup.go:
//     the start position of each scan.startup.mode.
//   - tables.go: [ListTables], the server's base tables; logger.go: go-mysql's logs into
//     the source's logger.
//
// Concurrency: a [Source] is used by one goroutine calling [Source.Run]; Run owns every
// goroutine it starts and returns only after they have stopped. Errors are typed: see
// [binlog.RetryableError], [PositionLostError], [ServerIDConflictError],
// [schema.NoPrimaryKeyError], [PreflightError] and [binlog.StatementFormatError]. Each is
// classified in the fault model (internal/fault): [binlog.RetryableError] is retryable, the
// others terminal, and a server that refuses the user (access denied, a missing grant) is
// terminal too. Run retries the retryable ones itself; the last one, when it gives up, is
// marked terminal.
package cdc
