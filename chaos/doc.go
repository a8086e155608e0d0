// Package chaos is the fault suite of ingest: it runs the real `ingest apply` binary against a
// MariaDB and a Kafka broker under a randomized workload, injects faults (SIGKILL, SIGTERM,
// broker and database restarts, a killed replication connection, a full state disk, a
// throttled broker), and checks the outcome with a checker that is independent of ingest's
// own encoder.
//
// The pieces:
//
//   - [Services] drives scripts/services for a private MariaDB and Kafka (their own cache
//     directory and ports), so that restarting them disturbs no other test.
//   - [Workload] writes inserts, updates, deletes, primary-key changes, small DDL and
//     occasional large transactions at a controlled rate until told to stop.
//   - [Ingest] and [Process] build, start, signal and observe `ingest apply` (exit code,
//     metrics endpoint, resident memory, log).
//   - [Checker] consumes the output topics (read_committed for exactly-once), materialises the
//     last value per key, renders the tables' rows by the wire contract of docs/output.md
//     itself, compares the two, and analyses each key's versions for duplicates and lost
//     changes.
//
// The scenarios live in chaos_integration_test.go (build tag integration), and the tables
// that come and go (created then keyed, truncated, renamed out and back in, dropped, keyless)
// under SIGKILLs in lifecycle_integration_test.go. `make test` runs
// the short mode; `make chaos` runs the long mode (INGEST_CHAOS_LONG=1, CHAOS_DURATION).
package chaos
