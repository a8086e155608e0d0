// Package schemachange applies pipeline.schema.change.behavior between the source and the
// sink: it maps the rows of each table's current shape onto the shape the pipeline writes,
// or stops the pipeline on a DDL statement.
//
// The source (cdc, cdc/snapshot) always delivers rows in the table's shape of their time,
// and a SchemaChange (with the statement and the shape before it, change.DDL) when a DDL
// changes a captured table. A [Mapper] sees every batch before the sink does, snapshot and
// binlog alike, so one rule holds for both:
//
//   - [Evolve] (EVOLVE, TRY_EVOLVE): rows pass unchanged; later rows follow the new shape.
//   - [Lenient] (LENIENT): the written shape only grows. A column that is dropped, or
//     renamed away, stays in the written shape and is null from then on; a new column (or
//     a new name) is appended at the end; the other columns keep their place whatever the
//     table's order becomes.
//   - [Ignore] (IGNORE): the written shape is the table's first: added columns are left
//     out, dropped ones are null, so every value has the keys of the start.
//   - [Exception] (EXCEPTION): a DDL statement that changes the shape of a table that
//     existed, drops it or truncates it stops the pipeline with a [RefusedError] before any
//     row of its transaction or after it.
//
// Values are rendered from the current column type in every mode: a type change shows in
// the JSON of later rows, it is never coerced back to the start's type (Flink CDC coerces
// under IGNORE and writes null where it cannot, a loss this package does not make).
//
// The written shape of a table is set the first time the Mapper meets the table: the shape
// of its first row, or the shape before its first DDL when that comes first (the shape it
// was created with for a table created while the pipeline runs). The written shapes are part of the
// pipeline's state ([Mapper.Encode], [New]), stored with each checkpoint, so the start
// survives restarts. Under LENIENT and IGNORE the record key stays the start's key: a DDL
// that changes the key columns stops the pipeline ([KeyChangedError]), since keys of the
// old columns may no longer be unique.
package schemachange
