package transform

import (
	"strings"
	"testing"
	"time"

	"github.com/ingestkit/ingest/change"
)

// pto is apache/flink-cdc's
// flink-cdc-runtime/src/test/java/org/apache/flink/cdc/runtime/operators/transform/PostTransformOperatorTest.java
// (commit 23fb108e9), whose testBuildInFunctionTransform asserts that each expression is
// TRUE for the row col1 = '1'.
const pto = "PostTransformOperatorTest.java:"

var conditionSchema = &change.Schema{
	Table:   change.TableID{DB: "db", Table: "t"},
	Columns: []change.Column{{Name: "col1", SQLType: "varchar(10)"}, {Name: "id", SQLType: "int(11)"}},
	Key:     []int{1},
}

func evalFilter(t *testing.T, s *change.Schema, expr string, row change.Row) (bool, error) {
	t.Helper()
	f, err := ParseFilter(expr)
	if err != nil {
		return false, err
	}
	p, err := Compile(nil, f, s, Options{Location: time.UTC})
	if err != nil {
		return false, err
	}
	return p.passes(row, opInsert)
}

func TestFlinkConditions(t *testing.T) {
	tests := []struct {
		line int
		expr string
	}{
		{2982, "TO_TIMESTAMP('1970-01-01 00:00:00') = TO_TIMESTAMP('1970-01-01', 'yyyy-MM-dd')"},
		{2984, "TIMESTAMPDIFF(DAY, TO_TIMESTAMP('1970-01-01 00:00:00'), TO_TIMESTAMP('1970-01-02 00:00:00')) = 1"},
		{2985, "2 between 1 and 3"},
		{2986, "4 not between 1 and 3"},
		{2987, "2 in (1, 2, 3)"},
		{2988, "4 not in (1, 2, 3)"},
		{2989, "CHAR_LENGTH('abc') = 3"},
		{2990, "trim(' abc ') = 'abc'"},
		{2991, "REGEXP_REPLACE('123abc', '[a-zA-Z]', '') = '123'"},
		{2992, "concat('123', 'abc') = '123abc'"},
		{2993, "upper('abc') = 'ABC'"},
		{2994, "lower('ABC') = 'abc'"},
		{3003, "LTRIM('  abc  ') = 'abc  '"},
		{3004, "RTRIM('  abc  ') = '  abc'"},
		{3005, "BTRIM('  abc  ') = 'abc'"},
		{3010, "BTRIM('xyabcxy', 'xy') = 'abc'"},
		{3025, "SUBSTR('ABC', -1) = 'C'"},
		{3026, "SUBSTR('ABC', -2, 2) = 'BC'"},
		{3027, "SUBSTR('ABC', 0) = 'ABC'"},
		{3028, "SUBSTR('ABC', 1) = 'ABC'"},
		{3029, "SUBSTR('ABC', 2, 2) = 'BC'"},
		{3030, "SUBSTR('ABC', 2, 100) = 'BC'"},
		{3031, "SUBSTRING('ABC', -1) = 'C'"},
		{3032, "SUBSTRING('ABC', -2, 2) = 'BC'"},
		{3033, "SUBSTRING('ABC', 0) = 'ABC'"},
		{3034, "SUBSTRING('ABC', 1) = 'ABC'"},
		{3035, "SUBSTRING('ABC', 2, 2) = 'BC'"},
		{3036, "SUBSTRING('ABC', 2, 100) = 'BC'"},
		{3037, "SUBSTRING('ABC' FROM -1) = 'C'"},
		{3038, "SUBSTRING('ABC' FROM -2 FOR 2) = 'BC'"},
		{3039, "SUBSTRING('ABC' FROM 0) = 'ABC'"},
		{3040, "SUBSTRING('ABC' FROM 1) = 'ABC'"},
		{3041, "SUBSTRING('ABC' FROM 2 FOR 2) = 'BC'"},
		{3042, "SUBSTRING('ABC' FROM 2 FOR 100) = 'BC'"},
		{3044, "'123' not like '^[a-zA-Z]'"}, // true under SQL LIKE as well
		{3045, "abs(2) = 2"},
		{3046, "ceil(2.4) = 3.0"},
		{3047, "ceiling(2.4) = 3.0"},
		{3048, "floor(2.5) = 2.0"},
		{3049, "round(3.1415926, 2) = 3.14"},
		{3050, "IF(2>0,1,0) = 1"},
		{3051, "COALESCE(null,1,2) = 1"},
		{3052, "TRY_CAST('invalid' AS INT) IS NULL"},
		{3053, "TRY_CAST('invalid' AS BOOLEAN) IS NULL"},
		{3054, "TRY_CAST('128' AS TINYINT) IS NULL"},
		{3055, "TRY_CAST('1.5' AS INT) IS NULL"},
		{3056, "TRY_CAST('invalid-timestamp' AS TIMESTAMP) IS NULL"},
		{3057, "IFNULL(TRY_CAST('invalid' AS INT), 42) = 42"},
		{3058, "NULLIF(1, 1) IS NULL"},
		{3059, "NULLIF(1, 2) = 1"},
		{3060, "NULLIF(CAST(1 AS INT), CAST(1 AS BIGINT)) IS NULL"},
		{3061, "NULLIF(NULL, 1) IS NULL"},
		{3062, "NULLIF(1, NULL) = 1"},
		{3064, "NULLIF(CAST(16777217 AS BIGINT), CAST(16777217 AS FLOAT)) = CAST(16777217 AS BIGINT)"},
		{3067, "NULLIF(CAST('-0.0' AS DOUBLE), CAST('0.0' AS DOUBLE)) IS NULL"},
		{3069, "NULLIF(CAST('NaN' AS DOUBLE), CAST('NaN' AS DOUBLE)) IS NOT NULL"},
		{3071, "NULLIF(CAST('Infinity' AS DOUBLE), CAST('Infinity' AS DOUBLE)) IS NULL"},
		{3072, "1 + 1 = 2"},
		{3073, "1 - 1 = 0"},
		{3074, "1 * 1 = 1"},
		{3075, "3 % 2 = 1"},
		{3076, "1 < 2"},
		{3077, "1 <= 1"},
		{3078, "1 > 0"},
		{3079, "1 >= 1"},
		{3081, "case 1 when 1 then 'a' when 2 then 'b' else 'c' end = 'a'"},
		{3082, "case col1 when '1' then true else false end"},
		{3083, "case when col1 = '1' then true else false end"},
		{3084, "cast(col1 as int) = 1"},
		{3085, "cast('true' as boolean)"},
		{3086, "cast(col1 as tinyint) = cast(1 as tinyint)"},
		{3087, "cast(col1 as smallint) = cast(1 as smallint)"},
		{3088, "cast(col1 as bigint) = cast(1 as bigint)"},
		{3089, "cast(col1 as float) = cast(1 as float)"},
		{3090, "cast(col1 as double) = cast(1 as double)"},
		{3091, "cast('1' as char) = '1'"},
		{3092, "cast(col1 as varchar) = '1'"},
		{3093, "cast(col1 as DECIMAL(4,2)) = cast(1.0 as DECIMAL(4,2))"},
		{3094, "cast(null as int) is null"},
		{3095, "cast(null as boolean) is null"},
		{3096, "cast(null as tinyint) is null"},
		{3097, "cast(null as smallint) is null"},
		{3098, "cast(null as bigint) is null"},
		{3099, "cast(null as float) is null"},
		{3100, "cast(null as double) is null"},
		{3101, "cast(null as char) is null"},
		{3102, "cast(null as varchar) is null"},
		{3103, "cast(null as DECIMAL(4,2)) is null"},
		{3104, "cast(null as TIMESTAMP(3)) is null"},
	}
	row := change.Row{change.StringValue([]byte("1")), change.IntValue(7)}
	for _, tc := range tests {
		ok, err := evalFilter(t, conditionSchema, tc.expr, row)
		if err != nil || !ok {
			t.Errorf("%s%d: %s = %v, %v; want TRUE", pto, tc.line, tc.expr, ok, err)
		}
	}
}

// TestValues checks computed values and their NULL and type rules. Vectors without a cited
// line are of the semantics of Flink CDC's sources named in the comment.
func TestValues(t *testing.T) {
	s := &change.Schema{
		Table: change.TableID{DB: "app_db", Table: "orders_1"},
		Columns: []change.Column{
			{Name: "id", SQLType: "int(11)"}, {Name: "name", SQLType: "varchar(20)"},
			{Name: "price", SQLType: "decimal(10,2)"}, {Name: "ratio", SQLType: "double"},
			{Name: "n", SQLType: "varchar(20)"}, {Name: "d", SQLType: "date"},
			{Name: "ts", SQLType: "datetime(3)"},
		},
		Key: []int{0},
	}
	row := change.Row{change.IntValue(12), change.StringValue([]byte("Bob")), change.DecimalValue([]byte("-12.35")),
		change.Float64Value(2.5), {}, change.DateValue(2024, 2, 29), change.DateTimeValue(2024, 2, 29, 13, 14, 15, 123000)}
	tests := []struct{ expr, want string }{
		// github.com/apache/flink-cdc/docs/content/docs/core-concept/transform.md: metadata columns of a MySQL table.
		{"__schema_name__", `string:app_db`},
		{"__table_name__", `string:orders_1`},
		{"__namespace_name__", `null`},
		{"__data_event_type__", `string:+I`},
		{"UPPER(name)", `string:BOB`},
		{"LOWER(name) || '-' || id", `string:bob-12`},
		{"CONCAT(name, n)", `null`}, // a NULL argument
		{"UPPER(n)", `null`},
		{"CHAR_LENGTH('😀x')", `int:3`}, // StringFunctions.charLength: String.length (UTF-16)
		{"SUBSTR(name, 2)", `string:ob`},
		{"SUBSTR(n, 2)", `null`},
		{"TRIM(n)", `null`},
		{"REGEXP_REPLACE('foobar', 'oo|ar', '')", `string:fb`}, // transform.md, REGEXP_REPLACE
		{"REGEXP_REPLACE(name, 'o', '$1')", `string:B$1b`},     // the replacement is literal (quoteReplacement)
		{"ABS(price)", `decimal:12.35`},
		{"ABS(-3)", `int:3`},
		{"CEIL(price)", `decimal:-12`},
		{"FLOOR(price)", `decimal:-13`},
		{"ROUND(price, 1)", `decimal:-12.4`}, // HALF_UP, as BigDecimal.setScale
		{"ROUND(ratio)", `float64:3.0`},
		{"ROUND(2.5)", `decimal:3`},
		{"MOD(id, 5)", `int:2`},
		{"id % 5", `int:2`},
		{"id / 5", `int:2`},            // integer division, as Java
		{"price / 3", `decimal:-4.11`}, // BigDecimal.divide(RoundingMode.DOWN): the dividend's scale
		{"price * 2", `decimal:-24.70`},
		{"price + 1", `decimal:-11.35`},
		{"ratio * 2", `float64:5.0`},
		{"id + ratio", `float64:14.5`},
		{"id + NULL", `null`},
		{"COALESCE(n, name)", `string:Bob`},
		{"IFNULL(n, 'x')", `string:x`},
		{"IF(id > 10, 'big', 'small')", `string:big`},
		{"IF(n = 'x', 1, 2)", `int:2`}, // a comparison with NULL is FALSE (ComparisonFunctions.valueEquals)
		{"CASE WHEN id > 100 THEN 'a' WHEN id > 10 THEN 'b' END", `string:b`},
		{"CASE WHEN id > 100 THEN 'a' END", `null`},
		{"CASE id WHEN 1, 12 THEN 'one or twelve' ELSE 'other' END", `string:one or twelve`},
		{"CAST(id AS STRING)", `string:12`},
		{"CAST(ratio AS VARCHAR)", `string:2.5`},
		{"CAST(1.0E10 AS STRING)", `string:1.0E10`}, // Double.toString
		{"CAST(d AS STRING)", `string:2024-02-29`},
		{"CAST(price AS INT)", `int:-12`},
		{"CAST(price AS DECIMAL(10, 1))", `decimal:-12.4`},
		{"CAST('2024-01-02 03:04:05' AS TIMESTAMP)", `datetime:2024-01-02 03:04:05`},
		{"d > '2024-01-01'", `bool:true`}, // a string literal compared with a date is a date
		{"n IS NULL", `bool:true`},
		{"n = 'x' IS NOT TRUE", `bool:true`},
		{"NOT (n = 'x')", `bool:true`}, // = with NULL is FALSE, so NOT is TRUE (Flink CDC, not SQL)
		{"n <> 'x'", `bool:true`},      // JaninoCompiler: NOT_EQUALS is !valueEquals
		{"n IS NULL OR n LIKE 'x'", `bool:true`},
		{"n LIKE 'x%' AND FALSE", `bool:false`}, // NULL AND FALSE
		{"n LIKE 'x%' OR TRUE", `bool:true`},    // NULL OR TRUE
		{"n LIKE 'x%' OR FALSE", `null`},        // NULL OR FALSE
		{"name LIKE 'B_b'", `bool:true`},
		{"name LIKE 'b%'", `bool:false`},
		{"'a%b' LIKE 'a!%b' ESCAPE '!'", `bool:true`},
		{"id BETWEEN 10 AND 12", `bool:true`},
		{"id IN (1, 2)", `bool:false`},
		{"DATE_FORMAT(ts, 'yyyy/MM/dd HH:mm:ss.SSS')", `string:2024/02/29 13:14:15.123`},
		{"DATE_FORMAT(d, 'yyyyMMdd')", `string:20240229`},
		{"TO_DATE('2024-03-01')", `date:2024-03-01`},
		{"TO_DATE('01/03/2024', 'dd/MM/yyyy')", `date:2024-03-01`},
		{"TO_TIMESTAMP('2024-03-01 10:11:12')", `datetime:2024-03-01 10:11:12`},
		{"FROM_UNIXTIME(0)", `string:1970-01-01 00:00:00`},
		{"UNIX_TIMESTAMP('1970-01-02 00:00:00')", `int:86400`},
		{"TIMESTAMPDIFF(MONTH, d, TO_DATE('2024-03-28'))", `int:0`},
		{"TIMESTAMPDIFF(MONTH, d, TO_DATE('2024-03-29'))", `int:1`},
		{"TIMESTAMPDIFF(HOUR, ts, TO_TIMESTAMP('2024-02-28 13:14:15'))", `int:-24`},
	}
	for _, tc := range tests {
		p, err := ParseProjection(tc.expr + " AS out")
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		prog, err := Compile(&Projection{Text: p.Text, Items: append(p.Items, Item{Expr: &Ident{Name: "id"}, Name: "id"})}, nil, s, Options{Location: time.UTC})
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		out, err := prog.project(row, opInsert)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if got := render(out[0]); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.expr, got, tc.want)
		}
	}
}

func render(v change.Value) string {
	if v.IsNull() {
		return "null"
	}
	return v.Kind.String() + ":" + string(appendText(nil, v))
}

func TestCompileErrors(t *testing.T) {
	tests := []struct{ proj, filter, want string }{
		{"id, nmae", "", "1:5: unknown column \"nmae\" (did you mean \"name\"?)"},
		{"id, UPPR(name) AS u", "", "1:5: unknown function UPPR (did you mean \"UPPER\"?)"},
		{"id, LPAD(name, 3, 'x') AS u", "", "1:5: function LPAD is a Flink CDC function that ingest does not support yet (docs/pipeline.md lists those it does)"},
		{"id, UPPER(name)", "", "1:5: computed column UPPER(name) needs a name: write UPPER(name) AS name"},
		{"id, name AS __table_name__", "", "1:5: column name __table_name__ is reserved for the metadata column; choose another alias"},
		{"name", "", "1:1: projection does not keep key column \"id\" as it is; the topic's records are keyed by it: add id to the projection (or set primary-keys)"},
		{"UPPER(name) AS id, name", "", "1:1: projection does not keep key column \"id\" as it is; the topic's records are keyed by it: add id to the projection (or set primary-keys)"},
		{"", "id > 10 AND status <> 'x'", "1:13: unknown column \"status\""},
		{"", "id > 10 AND\n  name > 1", "2:8: cannot compare STRING with BIGINT; convert one side with CAST"},
		{"", "id + name > 1", "1:6: operator + needs numbers, not STRING"},
		{"", "UPPER(id) = 'x'", "1:7: UPPER needs a string, not BIGINT; convert it with CAST(… AS STRING)"},
		{"", "SUBSTR(name)", "1:1: function SUBSTR takes 2 to 3 arguments, not 1"},
		{"", "id + 1", "1:4: a filter needs a BOOLEAN, not BIGINT"},
		{"", "REGEXP_REPLACE(name, '(', '') = ''", "1:22: invalid regular expression: error parsing regexp: missing closing ): `(`"},
		{"", "CAST(name AS BLOB) IS NULL", "1:14: CAST to BLOB is not supported (did you mean \"BOOL\"?)"},
	}
	s := &change.Schema{
		Table:   change.TableID{DB: "db", Table: "t"},
		Columns: []change.Column{{Name: "id", SQLType: "bigint(20)"}, {Name: "name", SQLType: "varchar(20)"}},
		Key:     []int{0},
	}
	for _, tc := range tests {
		var proj *Projection
		var filter *Filter
		var err error
		if tc.proj != "" {
			proj, err = ParseProjection(tc.proj)
		}
		if err == nil && tc.filter != "" {
			filter, err = ParseFilter(tc.filter)
		}
		if err == nil {
			_, err = Compile(proj, filter, s, Options{})
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q / %q: error %v\n want %s", tc.proj, tc.filter, err, tc.want)
		}
		if e, ok := err.(*Error); ok && e.Filter != (tc.filter != "" && !strings.HasPrefix(tc.want, "1:1: projection")) {
			t.Errorf("%q / %q: Filter = %v", tc.proj, tc.filter, e.Filter)
		}
	}
}
