// Package route decides which tables a pipeline reads, which Kafka topics
// their records go to, and which columns key them.
//
// It implements the table-matching rules of the Flink CDC YAML pipeline
// (docs/pipeline.md):
//
//   - [Selector] and [Filter]: the Flink CDC "Selectors" pattern syntax used by
//     the source options tables and tables.exclude and by transform
//     source-table. Comma-separated items, each db.table split on an unescaped
//     '.', each part a case-insensitive, full-match regular expression in which
//     `\.` means any character.
//   - [Table]: the route block with Flink CDC 3.6 TableIdRouter semantics. The
//     source-table becomes one case-sensitive regular expression matched
//     against "db.table"; sink-table is the topic, with replace-symbol or $1, $2
//     capture groups expanded; route-mode is [AllMatch] or [FirstMatch]. A
//     table no route matches goes to the topic "<db>.<table>", and the sink
//     option topic sends every table to one topic.
//   - [KeyOverrides]: transform primary-keys, where the first matching
//     transform wins, and [SplitKeys] for the option's comma list.
//   - [ValidateKafkaTopic] and [ValidateApsaraTopic]: topic name rules, for
//     the routed topics of the tables a plan lists.
//   - [Table.Collisions]: topics that several tables write to.
//
// Regular expressions use Go's RE2 syntax, which for table patterns agrees
// with Java's except that it has no look-around, back-references or
// possessive quantifiers; such patterns are rejected when parsed.
//
// Constructors validate everything they are given and return a [*FieldError]
// naming the offending pipeline field. The values they return are immutable
// (apart from an internal cache) and safe for concurrent use.
package route
