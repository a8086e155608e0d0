// Package upsert is the Kafka sink of ingest: it turns the neutral changes of package change
// into keyed JSON upserts and tombstones, exactly as docs/output.md specifies, and
// writes them to Kafka with the delivery guarantee the pipeline asks for.
//
// The parts, each usable on its own:
//
//   - [Encoder] renders a change as [Message]s: the PK JSON key, the row JSON value (nil for a
//     tombstone), the table and custom headers, the commit time. It appends into shared slabs
//     and caches the pre-encoded column names of each schema; no reflection, no maps per row.
//     Floats follow ECMAScript's Number::toString; strings are escaped as
//     Jackson does, and invalid UTF-8 (which the source never hands over) becomes U+FFFD.
//   - [EventEncoder] renders a change as the change event of Flink CDC's Kafka pipeline sink
//     (sink type kafka): a debezium-json or canal-json value, a {"TableId":…} JSON or CSV key,
//     one record per change (event.go, with Java's number forms in java.go and Jackson's CSV
//     quoting in csv.go). Both encoders are a [Format], which is all the sink sees of them;
//     [Target] names the topic and the (routed) table id of a table's records.
//   - [Partitioner] is the Java client's default partitioner for keyed records
//     (toPositive(murmur2(key)) % partitions), so ingest and a Java or Flink producer agree
//     on the partition of every key. The sink holds each topic's partition count fixed: it
//     checks it against the count recorded for the pipeline ([PartitionLedger]) and
//     sink.topic.partitions before the first record, and partitions over it for the whole
//     run (layout.go); a changed count is a [PartitionCountError].
//   - [ParseProperties] maps the Java producer configs of properties.* (security, SASL,
//     TLS stores, acks, compression, timeouts…) onto franz-go options, refusing what has no
//     meaning here; [Options] returns them all as franz-go options. This is the one
//     description of properties.*: the bounds of each number are franz-go's, the result
//     passes kgo.ValidateOpts, and every problem is a [PropertyError] naming its option,
//     which the pipeline loader places at the option's file position
//     ([CheckPropertyName], [ParsePropertiesOffline]).
//   - [Sink] runs the writer.
//
// # The writer
//
// A runner creates a [Sink] with [New], calls [Sink.Start] (which in exactly-once mode fences
// earlier writers and returns the stored [Checkpoint]), then [Sink.Run] with a bounded channel
// of [Input]s: one Input per batch of a source transaction, the last with End and Position
// set. Run blocks while Kafka is slow (the client's buffer is bounded), so the channel fills
// and the source waits: memory stays bounded. Config.Acked receives, in order, the
// checkpoint of each source transaction whose records, and all before them, are
// acknowledged (at-least-once, none) or committed (exactly-once); the runner stores it.
// Closing the channel or cancelling the context stops Run after a final flush (and commit)
// bounded by Config.StopTimeout. Errors are [*Error]s with the topic, table and key
// involved; [IsRetryable] tells whether a restart from the last checkpoint may succeed (an
// Error carries its class in the fault model, internal/fault, which the runner's supervisor
// follows), and [ErrFenced] marks a writer that another took over.
//
// Exactly-once uses one transactional id per pipeline. Each Kafka transaction holds whole
// source transactions plus the state records of the newest checkpoint in it, committed
// every Config.TransactionInterval or TransactionMaxBytes. Every record's result is checked
// before EndTransaction, because Kafka commits a transaction even when records in it
// failed.
//
// # The state topic
//
// The compacted state topic (Config.StateTopic, default [DefaultStateTopic]) holds each
// pipeline's checkpoint as small records, all in the partition of the pipeline's name
// (PartitionFor(name)), keyed "<name>/<part>" and written only when they change
// (statewrite.go): "position" ({"version":2,"position":...}, with every checkpoint),
// "identity" (Config.Identity), "snapshot" (State.Snapshot), "chunk/<n>" (State.Chunks[n],
// n zero-padded to 8 digits) and "schema/<key>" (each of State.SchemaParts); a part that is
// gone is tombstoned. So no record grows with the chunk count, and a checkpoint costs the bytes of
// what changed. Reading (state.go) takes the last committed value of every key of the
// pipeline; a version-1 record (key "<name>", everything in one value) is returned as
// State.Legacy and tombstoned by the next write. With exactly-once the records are in the
// transactions; at-least-once (and none) writes them without a transaction, behind the
// acknowledgements, at most every Config.StateInterval and when Run stops, in an order
// (new parts, the position, tombstones) that leaves a state to resume from at every point.
//
// Run owns all mutable state of the writer in one goroutine; franz-go's promise callbacks
// only count acknowledgements and record the first failure. No goroutine outlives Run.
//
// Nothing in this package knows MySQL; the source has already turned every column into a
// [change.Value] whose Kind says how to render it.
package upsert
