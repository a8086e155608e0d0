// Package transform owns the transform block's expressions: the lexer and parser of Flink
// CDC's transform expression language (a Calcite SQL subset), the compiler that turns a
// projection and a filter into an evaluator for one table shape, and [Rules], which applies
// the first matching rule to the changes of a batch.
//
// Parsing needs no schema: [ParseProjection] and [ParseFilter] check the syntax and report an
// [*Error] with the line and column inside the expression. [Compile] binds the parsed
// expressions to a table's columns (a [*Error] names the unknown column or function
// with a suggestion) and checks their types. A compiled [Program] evaluates rows of that
// shape without reflection, reusing its buffers; only computed string results allocate.
//
// Semantics follow Flink CDC's github.com/apache/flink-cdc/docs/content/docs/core-concept/transform.md: comparisons
// with a NULL operand are FALSE (not NULL), AND, OR and NOT follow SQL's three-valued
// logic, and a function of a NULL argument is NULL unless the function says otherwise
// (COALESCE, IF, CONCAT_WS). docs/pipeline.md lists the grammar and the functions.
package transform
