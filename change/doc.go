// Package change is the neutral model where the MySQL source and the Kafka sink meet.
//
// The source (package cdc) decodes binlog events and snapshot rows into [Value]s whose
// [Kind] already says how the value is to be rendered (a TINYINT(1) arrives as [Bool], a
// zero DATE as [Null], a latin1 string as UTF-8 [String]); the sink (package upsert) encodes
// them without knowing anything about MySQL. Because both the snapshot and the binlog produce
// the same Values for the same row state, the bytes written to Kafka are identical whichever
// path read the row.
//
// Changes travel in [Batch]es. A source transaction is one or more batches, the last of which
// has End set and carries the position reached; a position is never attached to the middle of
// a transaction, so storing it after the batch is acknowledged is always safe.
package change
