// Package schema describes a captured table and decodes its values: [Column] and [Table],
// built from the binlog's TABLE_MAP event (binlog_row_metadata=FULL: names, keys,
// signedness, charsets, labels) together with what information_schema says of the table
// ([TableShape], kept per DDL by the schema history one floor up), and the conversion of
// each value to a neutral [change.Value].
//
// The parts, each in a file named for its role:
//
//   - schema.go: [Column], [Table] and [TableShape], and the functions that build them
//     ([columnFromMap], [TableFromMap], [TableFromInfo]).
//   - decode.go: the conversion from a binlog value ([Column.FromBinlog]) or from the text a
//     SELECT returns ([Column.FromText]) to a [change.Value], so the snapshot and the binlog
//     produce identical values for the same row state; binary.go: the same from the binary
//     protocol's fixed forms ([Column.FromBinary]); fixedbin.go: MariaDB's UUID, INET4 and
//     INET6; geometry.go and jsontext.go: GeoJSON and compact JSON text.
//   - rowimage.go: the fast path of the binlog's row images ([RowPlan]), decoding a rows
//     event straight into values without go-mysql's per-row allocations, with a fallback to
//     go-mysql's decoder for the forms it does not cover ([ErrFallback]).
//   - charset.go and charset_multibyte.go: the character sets, with the server's tables
//     (charmaps.txt) and corrections (mbmaps.txt).
//   - errors.go: the tables a pipeline cannot key ([NoPrimaryKeyError], [NullableKeyError]).
//
// It stands on the first floor of the source, beside cdc/binlogpos, and imports no other
// package of cdc (see cdc/doc.go for the floors).
package schema
