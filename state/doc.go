// Package state keeps a pipeline's local state directory: the lock that makes one `ingest
// apply` the only writer of a pipeline, the pipeline's identity (which source server and
// which tables the stored position belongs to), and, unless the sink keeps it in Kafka, the
// last stored checkpoint. It also records the partition count of every topic the pipeline
// has written to (topics.json, see topics.go), which the sink checks before writing.
//
// Nothing stored holds a secret value (OpenSecret): an identity field that holds one is
// stored as a salted SHA-256, and a checkpoint has each secret value replaced by its
// placeholder, put back when it is read.
//
// A checkpoint is kept in parts, each written only when it changes: checkpoint.json (the
// position, the snapshot progress without its chunks, how many chunks count), chunks.jsonl
// (one finished chunk a line, appended; replaced only by a Store's first Save, or when a
// new snapshot starts its chunks again) and schema.json (the schema history).
// checkpoint.json is written last and says how many lines of chunks.jsonl are its own, so a
// crash between the writes leaves a consistent checkpoint.
//
// Every file is replaced atomically (write a temporary file, fsync, rename, fsync the
// directory) and appended lines are synced before checkpoint.json counts them, so a crash
// or a full disk at any instant leaves the last good checkpoint in place.
package state
