// Package cdc is the MySQL/MariaDB source of ingest: it reads the row binlog and turns it
// into [change.Batch]es of neutral [change.Value]s.
//
// The parts, each in a file named for its role:
//
//   - position.go: [Position], a point between two source transactions (file/offset, MariaDB
//     GTIDs kept as the last GTID per domain, MySQL GTID sets), with a text form that
//     round-trips through [ParsePosition].
//   - schema.go: [Column] and [Table], the description of a captured table built from the
//     binlog's TABLE_MAP event (binlog_row_metadata=FULL: names, keys, signedness, charsets,
//     labels) and the table's shape at that point of the binlog from the schema history,
//     cached per table (schemacache.go) and rebuilt after DDL.
//   - history.go, ddlapply.go, ddlparse.go: the schema history. The shapes of the captured
//     tables at the start position (information_schema), then each DDL applied in binlog
//     order (parsed with TiDB's parser, MariaDB syntax rewritten first), so that every event
//     decodes with the facts of its time (TINYINT(1), MariaDB JSON, SQL types; the names too
//     without FULL row metadata). It is stored next to the position ([Source.SchemaHistory],
//     [Config.SchemaHistory]).
//   - decode.go: the type conversion from a binlog value ([Column.FromBinlog]) or from the text
//     a SELECT returns ([Column.FromText]) to a [change.Value], so the snapshot and the binlog
//     produce identical values for the same row state; binary.go: the same from the binary
//     protocol's fixed forms of numbers and temporal types ([Column.FromBinary]); fixedbin.go:
//     MariaDB's UUID, INET4 and INET6, rendered as the server's text; charset.go and
//     charset_multibyte.go: the character sets, with the server's tables (charmaps.txt) and
//     corrections (mbmaps.txt).
//   - source.go and stream.go: [Source], which connects as a replica, groups row events per
//     source transaction, bounds batches, emits heartbeats and reconnects without gaps or
//     duplicates.
//   - preflight.go: [Preflight], the server checks with the exact fix for each problem, run by
//     the caller before the first read and by [Source.Run] before every reconnect;
//     checkpos.go: the position the stream reads from checked against the server's binlog;
//     serverid.go: [ServerIdentity], which tells a rebuilt or replaced server.
//
// Concurrency: a [Source] is used by one goroutine calling [Source.Run]; Run owns every
// goroutine it starts and returns only after they have stopped. Errors are typed: see
// [RetryableError], [PositionLostError], [ServerIDConflictError], [NoPrimaryKeyError],
// [PreflightError] and [StatementFormatError]. Each is classified in the fault model
// (internal/fault): [RetryableError] is retryable, the others terminal, and a server that
// refuses the user (access denied, a missing grant) is terminal too. Run retries the
// retryable ones itself; the last one, when it gives up, is marked terminal.
package cdc
