// Package pipeline loads a pipeline file: the Flink CDC / Realtime Compute
// "YAML data ingestion job" format restricted to a MySQL (or MariaDB)
// source and an upsert-kafka or kafka sink (docs/pipeline.md; type kafka is Flink CDC's
// Kafka pipeline sink, whose options schema.go marks with only).
//
// [Load] and [Parse] parse the YAML into nodes with gopkg.in/yaml.v3 and
// walk them against a schema that lists every option of every block with
// its type, default and allowed values (schema.go). Unknown options are
// errors with a "did you mean" suggestion; jdbc.properties.* (source) and
// properties.* (sink) are kept as maps and checked against the one
// description of each, which the packages that apply them own: internal/jdbctls
// for JDBC properties (jdbc.go), upsert for the Kafka producer configs
// (properties.go).
// An option whose value no code needs says why in the schema (asIs), and
// schema_test.go checks that every other option is read where it is applied. ${...}
// placeholders are expanded in scalar values after parsing, through a
// [secrets.Resolver]. Options that involve each other are then checked
// together (validate.go), and table patterns and routes are compiled with
// package route, as the runtime will.
//
// Every problem of a file is reported at once, as an [Errors] of [Error]s
// formatted file:line:col: path: message and sorted by position. A path is
// the block, a list item or an option: "sink", "route[1]",
// "source.scan.startup.mode", "route[0].sink-table". Option names contain
// dots themselves, so a sink option's path reads "sink.sink.topic.partitions".
//
// The result is a [Definition] with typed fields and defaults applied. It
// keeps the position of every option the file sets ([Definition.Pos],
// [Definition.ErrorAt]) so that later problems can point at the YAML, and
// which values are secret ([Definition.IsSecret]). Credentials are held as
// [secrets.Secret]s. [NewPlan] describes a Definition for `ingest plan`
// without revealing secrets.
//
// Loading does no I/O other than reading the file and asking the
// resolver's providers.
package pipeline
