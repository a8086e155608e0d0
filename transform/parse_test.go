package transform

import (
	"strings"
	"testing"
)

func TestParseFilter(t *testing.T) {
	tests := []struct{ in, want string }{
		// github.com/apache/flink-cdc/docs/content/docs/core-concept/transform.md (apache/flink-cdc), "Add filter rule".
		{"id > 10 AND order_id > 100", "((`id` > 10) AND (`order_id` > 100))"},
		{"new_province = 'SHANGHAI'", "(`new_province` = 'SHANGHAI')"},
		{"id > 10 AND status <> 'x'", "((`id` > 10) AND (`status` <> 'x'))"},
		{"a OR b AND NOT c", "(`a` OR (`b` AND (NOT `c`)))"},
		{"a + b * c - d / 2 % 3", "((`a` + (`b` * `c`)) - ((`d` / 2) % 3))"},
		{"a || 'x' || b = 'y'", "(((`a` || 'x') || `b`) = 'y')"},
		{"a IS NOT NULL AND b IS NULL", "((`a` IS NOT NULL) AND (`b` IS NULL))"},
		{"a NOT BETWEEN 1 AND 2 OR b BETWEEN -1 AND c+1", "((`a` NOT BETWEEN 1 AND 2) OR (`b` BETWEEN -1 AND (`c` + 1)))"},
		{"a IN (1, 2, 3) AND b NOT IN ('x')", "((`a` IN (1, 2, 3)) AND (`b` NOT IN ('x')))"},
		{"name LIKE 'a%' ESCAPE '!' OR name NOT LIKE '_b'", "((`name` LIKE 'a%' ESCAPE '!') OR (`name` NOT LIKE '_b'))"},
		{"CASE WHEN a > 1 THEN 'x' WHEN a < 0 THEN 'y' ELSE 'z' END = 'x'", "(CASE WHEN (`a` > 1) THEN 'x' WHEN (`a` < 0) THEN 'y' ELSE 'z' END = 'x')"},
		{"CASE a WHEN 1, 2 THEN TRUE END", "CASE `a` WHEN 1, 2 THEN TRUE END"},
		{"CAST(a AS DECIMAL(10, 2)) > 1.5", "(CAST(`a` AS DECIMAL(10, 2)) > 1.5)"},
		{"upper(`select`) != 'it''s'", "(UPPER(`select`) <> 'it''s')"},
		{"SUBSTRING(s FROM 2 FOR 3) = 'abc'", "(SUBSTRING(`s`, 2, 3) = 'abc')"},
		{"TRIM(LEADING 'x' FROM s) = TRIM(s)", "(LTRIM(`s`, 'x') = TRIM(`s`))"},
		{"TRIM('x' FROM s)", "BTRIM(`s`, 'x')"},
		{"TIMESTAMPDIFF(DAY, a, CURRENT_TIMESTAMP) < 7", "(TIMESTAMPDIFF(DAY, `a`, CURRENT_TIMESTAMP) < 7)"},
		{"a IS DISTINCT FROM b", "IS_DISTINCT_FROM(`a`, `b`)"},
		{"-(a) = -1.5e3", "((- `a`) = -1.5e3)"},
		{"DATE '2024-01-02' < d", "(CAST('2024-01-02' AS DATE) < `d`)"},
	}
	for _, tc := range tests {
		f, err := ParseFilter(tc.in)
		if err != nil {
			t.Errorf("ParseFilter(%q): %v", tc.in, err)
			continue
		}
		if got := Format(f.Expr); got != tc.want {
			t.Errorf("ParseFilter(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestParseProjection(t *testing.T) {
	tests := []struct {
		in   string
		want []string // name=expr, or *
	}{
		// github.com/apache/flink-cdc/docs/content/docs/core-concept/transform.md (apache/flink-cdc), "Add computed columns".
		{"id, order_id, UPPER(product_name) as product_name, localtimestamp as new_timestamp",
			[]string{"id=`id`", "order_id=`order_id`", "product_name=UPPER(`product_name`)", "new_timestamp=LOCALTIMESTAMP"}},
		// "Reference metadata columns" (an alias without AS).
		{"id, __namespace_name__ || '.' || __schema_name__ || '.' || __table_name__ identifier_name",
			[]string{"id=`id`", "identifier_name=((((`__namespace_name__` || '.') || `__schema_name__`) || '.') || `__table_name__`)"}},
		// "Use wildcard character to project all fields".
		{`\*, UPPER(product_name) as product_name`, []string{"*", "product_name=UPPER(`product_name`)"}},
		{"UPPER(product_name) as product_name, *", []string{"product_name=UPPER(`product_name`)", "*"}},
		{"a + 1", []string{"a + 1=(`a` + 1)"}},
	}
	for _, tc := range tests {
		p, err := ParseProjection(tc.in)
		if err != nil {
			t.Errorf("ParseProjection(%q): %v", tc.in, err)
			continue
		}
		var got []string
		for _, it := range p.Items {
			if it.Star {
				got = append(got, "*")
			} else {
				got = append(got, it.Name+"="+Format(it.Expr))
			}
		}
		if strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
			t.Errorf("ParseProjection(%q) =\n  %s\nwant\n  %s", tc.in, strings.Join(got, "; "), strings.Join(tc.want, "; "))
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"id >", "1:5: unexpected end of expression; expected an expression"},
		{"id > 10 AND", "1:12: unexpected end of expression; expected an expression"},
		{"name = 'abc", "1:8: unterminated string literal: add the closing '"},
		{"a = \"x\"", "1:5: double quotes are not allowed: write a string as 'text' and a quoted name as `name`"},
		{"a >\n  10 10", "2:6: unexpected \"10\"; expected an operator or the end of the filter"},
		{"UPPER(a", "1:8: unexpected end of expression; expected ',' or ')' of UPPER"},
		{"t.a > 1", "1:2: qualified names are not supported: name the column \"t\" without its table"},
		{"a BETWEEN 1 OR 2", "1:13: unexpected \"OR\"; expected AND of BETWEEN … AND …"},
		{"CASE WHEN a THEN 1", "1:19: unexpected end of expression; expected WHEN, ELSE or END of CASE"},
		{"a # 1", "1:3: unexpected character '#'"},
		{"é = ü ?", "1:7: unexpected character '?'"},
		{"", "1:1: filter is empty; remove the option to keep every row"},
	}
	for _, tc := range tests {
		_, err := ParseFilter(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseFilter(%q) error = %v, want %s", tc.in, err, tc.want)
		}
	}
	if _, err := ParseProjection("a, , b"); err == nil || err.Error() != "1:4: unexpected ','; expected an expression" {
		t.Errorf("ParseProjection: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"id > 10 AND status <> 'x'", `\*, UPPER(name) AS name_u, __table_name__ AS src`,
		"CASE a WHEN 1 THEN 'x' ELSE NULL END", "CAST(a AS DECIMAL(10,2))", "SUBSTRING(s FROM 1 FOR 2)",
		"TRIM(BOTH 'x' FROM s)", "a NOT IN (1,2) OR b LIKE 'x%' ESCAPE '!'", "`a``b` IS NOT NULL", "-1.5e3 + .5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, parse := range []func(string) (Expr, error){
			func(s string) (Expr, error) {
				fl, err := ParseFilter(s)
				if err != nil {
					return nil, err
				}
				return fl.Expr, nil
			},
		} {
			e, err := parse(s)
			if err != nil {
				var se *Error
				if !asSyntax(err, &se) || se.Offset < 0 || se.Offset > len(s) || se.Line < 1 || se.Col < 1 {
					t.Fatalf("%q: bad error %v", s, err)
				}
				continue
			}
			// The canonical form parses to itself.
			text := Format(e)
			again, err := ParseFilter(text)
			if err != nil {
				t.Fatalf("%q formats as %q, which does not parse: %v", s, text, err)
			}
			if got := Format(again.Expr); got != text {
				t.Fatalf("%q: %q reparses as %q", s, text, got)
			}
		}
		if p, err := ParseProjection(s); err == nil && len(p.Items) == 0 {
			t.Fatalf("%q: projection without items", s)
		}
	})
}

func asSyntax(err error, se **Error) bool {
	e, ok := err.(*Error)
	*se = e
	return ok
}
