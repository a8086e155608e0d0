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
// Every write is atomic (write a temporary file, fsync, rename, fsync the directory), so a
// crash or a full disk at any instant leaves the last good checkpoint in place.
package state
