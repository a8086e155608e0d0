// Package gctune sets the garbage collector's defaults of the ingest binaries.
//
// ingest allocates at a high rate (every row is decoded into values and encoded into
// records) over a small live heap (the batches in flight: some tens of MiB). With Go's
// default GOGC=100 the collector then runs very often; measured on the benchmark suite
// (bench/README.md), it took about 15% of ingest's CPU. Apply sets GOGC=200, which halves
// the number of collections, and a soft memory limit of 160 MiB, which makes the collector
// run earlier again when the heap approaches it, so that the peak resident memory stays
// under 200 MiB (issue 8's target) whatever the heap does between collections.
//
// The limit is soft: a pipeline whose live heap needs more (very wide rows, a large
// properties.buffer.memory) still runs, with more frequent collections. The environment
// variables GOGC and GOMEMLIMIT, when set, take precedence (GOMEMLIMIT=off removes the
// limit; GOGC=100 restores Go's default). docs/metrics.md describes the settings.
package gctune

import "runtime/debug"

const (
	// Percent is the GOGC value Apply sets.
	Percent = 200
	// MemoryLimit is the soft memory limit Apply sets, in bytes.
	MemoryLimit = 160 << 20
)

// Apply sets GOGC and the memory limit unless the environment (read through lookupEnv)
// sets them.
func Apply(lookupEnv func(string) (string, bool)) {
	if _, ok := lookupEnv("GOGC"); !ok {
		debug.SetGCPercent(Percent)
	}
	if _, ok := lookupEnv("GOMEMLIMIT"); !ok {
		debug.SetMemoryLimit(MemoryLimit)
	}
}
