// Package snapshot reads the initial snapshot of the captured tables: lock-free, in chunks of
// primary-key ranges read in parallel, resumable chunk by chunk, with a consistent hand-off to
// the binlog stream. It is the DBLog / Flink CDC watermark algorithm.
//
// The parts, each in a file named for its role:
//
//   - plan.go: splits a table into key ranges of about Config.ChunkSize rows: evenly by MIN/MAX
//     for a dense single integer key, otherwise by walking the key with
//     "WHERE key > ? ORDER BY key LIMIT 1 OFFSET size-1".
//   - chunk.go: a [Chunk] (an exclusive lower and an inclusive upper [Bound]) and the SQL of its
//     range; composite keys are expanded to "a > ? OR (a = ? AND b > ?)" so that MariaDB uses a
//     range scan (its optimizer scans the whole index for a row constructor).
//   - key.go: the chunk key's columns, how their values are ordered in Go and sent as
//     parameters. Only keys whose order Go reproduces exactly are accepted (integers, DECIMAL,
//     temporal types, binary strings, and text in a *_bin collation, in one whose weights
//     collation.go reads from the server (the *_general_ci family and latin1_swedish_ci),
//     or in a single-level collation of a Unicode character set (the UCA ones), whose key
//     texts weigher.go asks the server to weigh), and MariaDB's UUID, INET4 and INET6, in the
//     server's order (fixedbin.go).
//   - table.go: a table's description ([Table], by default from cdc.DescribeTable through
//     [DescribeCDC]), chunk key, row estimate and discovery.
//   - reader.go: reads one chunk with a single autocommit SELECT, a prepared statement of
//     the reader's row connection (rowconn.go), whose rows in the binary protocol each
//     column's [Decoder] converts (cdc's FromBinary for numbers and temporal types, FromText
//     for the rest). A chunk planned too big (an even split over a skewed key) is cut at
//     2×ChunkSize rows and read on in pieces.
//   - watermark.go: the low and high binlog positions around each SELECT and the merge of the
//     binlog events between them into the chunk's rows, so the chunk holds the state at high.
//   - handoff.go: [Handoff], the filter the runner applies to the binlog stream started at
//     [Handoff.Start]: it drops an event on a key whose chunk already reflects it.
//   - weigher.go: the server's WEIGHT_STRING of key texts only the server can order; every
//     key tuple compared (chunk bounds, binlog keys) is made sortable there.
//   - progress.go: [Progress], the JSON-serialisable record of finished chunks a restart resumes
//     from.
//   - captured.go: [TableState], the pipeline's captured set in [Progress].Tables (the tables
//     the snapshot covers, each done, and those the stream captures from their CREATE TABLE),
//     the migration of progress stored without it, and the compact progress kept after the
//     hand-off.
//   - config.go: [Config], its defaults and the connection settings.
//   - snapshot.go: [Snapshot]: Begin, Run (planner, readers and emitter), ProgressAt.
//
// # Consistency
//
// For each chunk the reader takes the low watermark, SELECTs the chunk, takes the high
// watermark, reads the binlog from low to high and applies the events on the table whose chunk
// key lies in the chunk's range (insert and update upsert the after image, delete removes the
// row; an update that moves a row out of the range removes it). The chunk then holds the rows
// as they were at high, and is emitted. On MariaDB the low watermark comes from
// START TRANSACTION WITH CONSISTENT SNAPSHOT (Binlog_snapshot_file/position), which is
// consistent with the engine's commits; SHOW MASTER STATUS alone could name a point that
// includes a transaction written to the binlog but not yet visible to the SELECT.
//
// After the snapshot, the binlog stream starts at the smallest low watermark, and the
// [Handoff] drops an event on key k when its transaction ends at or before the high watermark
// of the chunk whose range holds k: the chunk already carried its effect. Each key belongs to
// exactly one chunk, so per key the records are: the chunk's row at its high watermark, then
// the binlog events after it. No value goes backwards and nothing is lost.
//
// The guarantee needs the chunk key to be the record key (the default) or a column that is
// never updated; with a chunk key-column that rows change, a row can move between chunks and
// the result is at-least-once, as Flink CDC documents for scan.incremental.snapshot.chunk.key-column.
//
// # Output and progress
//
// Run sends every chunk as one source transaction: batches of at most Config.FetchSize
// inserts, the last with End set and Position holding a progress token (see [IsToken]), not a
// binlog position. Once every batch up to and including a token's batch is acknowledged, the
// runner stores [Snapshot.ProgressAt] of that token; a restart passes it as Config.Resume and
// reads only the key ranges not covered by finished chunks. Before the first Run the runner
// stores [Snapshot.Begin]'s progress.
//
// Run reads the binlog position, then lists the tables: both go into every progress
// (Tables, ListedAt), and the end marker's progress marks each table done. The stream takes
// over at [Progress.HandoffPosition]: the smallest low watermark, or ListedAt when no table
// matched, so a table created after the listing is met from its CREATE TABLE. The [Handoff]
// covers the tables of the progress, never those that match later.
//
// A chunk emitted but not stored before a crash is read again at a later state, which keeps
// values moving forward; but a key it carried may have been deleted (or moved to another key)
// since, and the new read would simply not contain it. So a resumed run reads, for each
// chunk, the binlog from [Progress].Since (a point before the high watermark of any chunk
// that can have been emitted unstored) and sends a tombstone (a Delete change) for each key
// of the chunk that left it and is not in it at the new high watermark. This costs one binlog
// read from Since per chunk of a resumed run only.
//
// # Concurrency
//
// Run owns every goroutine it starts (a planner, Config.Parallelism readers, each with its own
// connection, and one emitter, in an errgroup with bounded channels between them) and returns
// only after they have stopped. ProgressAt may be called from any goroutine while Run runs.
// A [Handoff] is safe for concurrent use.
//
// # Errors
//
// Run, Begin, Handoff and Handoff.Filter classify their errors in the fault model
// (internal/fault, its MySQL classifier): a lost connection (a reader's connection killed,
// the server restarting) is retryable, and the runner then runs a new Snapshot from the
// progress it stored, which reads only the chunks not finished; what the server refuses
// (access denied, a missing grant, an unknown table) is terminal.
package snapshot
