package transform

import (
	"crypto/rand"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/suggest"
)

// function is one built-in function: its argument count and how it compiles.
type function struct {
	min, max int // max -1: any number
	build    func(c *compiler, x *Call, args []*node) (*node, error)
}

var functions map[string]function

func init() {
	functions = map[string]function{
		"CONCAT":           {1, -1, func(c *compiler, x *Call, a []*node) (*node, error) { return c.concat(a, x.Off) }},
		"SUBSTR":           {2, 3, buildSubstr},
		"SUBSTRING":        {2, 3, buildSubstr},
		"UPPER":            {1, 1, stringFn(func(dst, s []byte) []byte { return appendMapped(dst, s, unicode.ToUpper) })},
		"LOWER":            {1, 1, stringFn(func(dst, s []byte) []byte { return appendMapped(dst, s, unicode.ToLower) })},
		"TRIM":             {1, 1, stringFn(func(dst, s []byte) []byte { return append(dst, javaTrim(s)...) })},
		"BTRIM":            {1, 2, trimFn(true, true)},
		"LTRIM":            {1, 2, trimFn(true, false)},
		"RTRIM":            {1, 2, trimFn(false, true)},
		"CHAR_LENGTH":      {1, 1, buildCharLength},
		"CHARACTER_LENGTH": {1, 1, buildCharLength},
		"REGEXP_REPLACE":   {3, 3, buildRegexpReplace},
		"ABS":              {1, 1, numFn("ABS", absValue)},
		"CEIL":             {1, 1, numFn("CEIL", func(e *env, v change.Value) change.Value { return roundValue(e, v, 'c', 0) })},
		"CEILING":          {1, 1, numFn("CEILING", func(e *env, v change.Value) change.Value { return roundValue(e, v, 'c', 0) })},
		"FLOOR":            {1, 1, numFn("FLOOR", func(e *env, v change.Value) change.Value { return roundValue(e, v, 'f', 0) })},
		"ROUND":            {1, 2, buildRound},
		"MOD": {2, 2, func(c *compiler, x *Call, a []*node) (*node, error) {
			for _, n := range a {
				if n.typ != TInt && n.typ != TAny && n.typ != TNull {
					return nil, c.errAt(n.off, "MOD needs integers, not %s", n.typ)
				}
			}
			return c.arith("%", a[0], a[1], x.Off)
		}},
		"UUID":                 {0, 0, buildUUID},
		"COALESCE":             {1, -1, buildCoalesce},
		"IFNULL":               {2, 2, buildCoalesce},
		"IF":                   {3, 3, buildIf},
		"NULLIF":               {2, 2, buildNullIf},
		"IS_DISTINCT_FROM":     {2, 2, distinctFn(true)},
		"IS_NOT_DISTINCT_FROM": {2, 2, distinctFn(false)},
	}
	for name, f := range temporalFunctions {
		functions[name] = f
	}
}

// flinkFunctions are the other functions of Flink CDC's transform documentation, which
// ingest refuses by name.
var flinkFunctions = []string{"REGEXP_EXTRACT", "REGEXP_EXTRACT_ALL", "REGEXP_COUNT", "REGEXP_INSTR",
	"REGEXP_SUBSTR", "OVERLAY", "POSITION", "LOCATE", "INSTR", "CONCAT_WS", "LPAD", "RPAD", "REPLACE",
	"REPEAT", "LEFT", "RIGHT", "STARTSWITH", "ENDSWITH", "TO_BASE64", "FROM_BASE64", "FROM_BASE64_BINARY",
	"EXTRACT", "YEAR", "QUARTER", "MONTH", "WEEK", "DAYOFYEAR", "DAYOFMONTH", "DAYOFWEEK", "HOUR", "MINUTE",
	"SECOND", "DATE_FORMAT_TZ", "TIMESTAMPADD", "TO_TIMESTAMP_LTZ", "DATE_ADD", "LOCALTIME", "CURRENT_TIME",
	"PARSE_JSON", "TRY_PARSE_JSON", "CARDINALITY", "ARRAY_CONTAINS", "ARRAY_POSITION", "ELEMENT", "ARRAY", "MAP", "ROW"}

func (c *compiler) call(x *Call) (*node, error) {
	f, ok := functions[x.Name]
	if !ok {
		if slices.Contains(flinkFunctions, x.Name) {
			return nil, c.errAt(x.Off, "function %s is a Flink CDC function that ingest does not support yet (docs/pipeline.md lists those it does)", x.Name)
		}
		names := make([]string, 0, len(functions))
		for n := range functions {
			if !strings.HasPrefix(n, "IS_") {
				names = append(names, n)
			}
		}
		return nil, c.errAt(x.Off, "unknown function %s%s", x.Name, didYouMeanSorted(x.Name, names))
	}
	if len(x.Args) < f.min || f.max >= 0 && len(x.Args) > f.max {
		want := fmt.Sprintf("%d", f.min)
		switch {
		case f.max < 0:
			want = fmt.Sprintf("at least %d", f.min)
		case f.max != f.min:
			want = fmt.Sprintf("%d to %d", f.min, f.max)
		}
		return nil, c.errAt(x.Off, "function %s takes %s arguments, not %d", x.Name, want, len(x.Args))
	}
	args, err := c.compileAll(x.Args)
	if err != nil {
		return nil, err
	}
	return f.build(c, x, args)
}

func didYouMeanSorted(s string, names []string) string {
	slices.Sort(names)
	return suggest.DidYouMean(s, names)
}

func (c *compiler) wantString(n *node, fn string) error {
	if !n.typ.stringy() && n.typ != TAny && n.typ != TNull {
		return c.errAt(n.off, "%s needs a string, not %s; convert it with CAST(… AS STRING)", fn, n.typ)
	}
	return nil
}

func (c *compiler) wantInt(n *node, fn string) error {
	if n.typ != TInt && n.typ != TAny && n.typ != TNull {
		return c.errAt(n.off, "%s needs an integer, not %s", fn, n.typ)
	}
	return nil
}

// concat is CONCAT and ||: NULL when any argument is NULL; a non-string argument is
// written as CAST(… AS STRING) writes it.
func (c *compiler) concat(args []*node, off int) (*node, error) {
	for _, a := range args {
		if a.typ == TBytes {
			return nil, c.errAt(a.off, "CONCAT of BYTES is not supported")
		}
	}
	vals := make([]change.Value, len(args)) // the arguments, evaluated before the result is written
	return &node{typ: TString, off: off, eval: func(e *env) change.Value {
		for i, a := range args {
			if vals[i] = a.eval(e); vals[i].IsNull() {
				return change.Value{}
			}
		}
		start := e.begin()
		for _, v := range vals {
			e.arena = appendText(e.arena, v)
		}
		return change.StringValue(e.end(start))
	}}, nil
}

// stringFn builds a function of one string, NULL for NULL.
func stringFn(fn func(dst, s []byte) []byte) func(*compiler, *Call, []*node) (*node, error) {
	return func(c *compiler, x *Call, a []*node) (*node, error) {
		if err := c.wantString(a[0], x.Name); err != nil {
			return nil, err
		}
		return &node{typ: TString, off: x.Off, eval: func(e *env) change.Value {
			v := a[0].eval(e)
			if v.IsNull() {
				return v
			}
			return e.str(func(dst []byte) []byte { return fn(dst, v.Bytes) })
		}}, nil
	}
}

func appendMapped(dst, s []byte, fn func(rune) rune) []byte {
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		if r < utf8.RuneSelf {
			b := byte(r)
			if fn(r) != r {
				b = byte(fn(r))
			}
			dst = append(dst, b)
		} else {
			dst = utf8.AppendRune(dst, fn(r))
		}
		s = s[n:]
	}
	return dst
}

// javaTrim is Java's String.trim: it removes the characters up to U+0020 at both ends.
func javaTrim(s []byte) []byte {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

func trimFn(left, right bool) func(*compiler, *Call, []*node) (*node, error) {
	return func(c *compiler, x *Call, a []*node) (*node, error) {
		for _, n := range a {
			if err := c.wantString(n, x.Name); err != nil {
				return nil, err
			}
		}
		return &node{typ: TString, off: x.Off, eval: func(e *env) change.Value {
			v := a[0].eval(e)
			cut := " "
			if len(a) > 1 {
				cv := a[1].eval(e)
				if cv.IsNull() {
					return cv
				}
				cut = string(cv.Bytes)
			}
			if v.IsNull() {
				return v
			}
			s := string(v.Bytes)
			if left {
				s = strings.TrimLeft(s, cut)
			}
			if right {
				s = strings.TrimRight(s, cut)
			}
			return e.str(func(dst []byte) []byte { return append(dst, s...) })
		}}, nil
	}
}

// buildSubstr is SUBSTR(s, start[, length]) as Flink CDC's StringFunctions.substring:
// positions count characters from 1, a negative start counts from the end, 0 is 1.
func buildSubstr(c *compiler, x *Call, a []*node) (*node, error) {
	if err := c.wantString(a[0], x.Name); err != nil {
		return nil, err
	}
	for _, n := range a[1:] {
		if err := c.wantInt(n, x.Name); err != nil {
			return nil, err
		}
	}
	return &node{typ: TString, off: x.Off, eval: func(e *env) change.Value {
		v := a[0].eval(e)
		sv := a[1].eval(e)
		length := int64(math.MaxInt32)
		if len(a) > 2 {
			lv := a[2].eval(e)
			if lv.IsNull() {
				return lv
			}
			length = asInt(lv)
		}
		if v.IsNull() || sv.IsNull() {
			return change.Value{}
		}
		if length < 0 {
			return e.fail("length of SUBSTR must be >= 0, not %d", length)
		}
		rs := []rune(string(v.Bytes))
		begin := asInt(sv)
		var startPos int64
		switch {
		case begin > 0:
			startPos = begin - 1
			if startPos >= int64(len(rs)) {
				return change.StringValue([]byte{})
			}
		case begin < 0:
			startPos = int64(len(rs)) + begin
			if startPos < 0 {
				return change.StringValue([]byte{})
			}
		}
		endPos := int64(len(rs))
		if endPos-startPos >= length {
			endPos = startPos + length
		}
		out := string(rs[startPos:endPos])
		return e.str(func(dst []byte) []byte { return append(dst, out...) })
	}}, nil
}

// buildCharLength is CHAR_LENGTH: Java's String.length, which counts UTF-16 code units (a
// character outside the BMP counts 2).
func buildCharLength(c *compiler, x *Call, a []*node) (*node, error) {
	if err := c.wantString(a[0], x.Name); err != nil {
		return nil, err
	}
	return &node{typ: TInt, off: x.Off, eval: func(e *env) change.Value {
		v := a[0].eval(e)
		if v.IsNull() {
			return v
		}
		n := 0
		for _, r := range string(v.Bytes) {
			n++
			if r > 0xFFFF {
				n++
			}
		}
		return change.IntValue(int64(n))
	}}, nil
}

// buildRegexpReplace is REGEXP_REPLACE(s, regex, replacement): every match replaced by the
// replacement taken literally; NULL for a NULL argument or an invalid regex (as Flink CDC).
// The regex is RE2 syntax (Go), which lacks Java's back-references and look-arounds; a
// constant regex is checked when the pipeline is validated.
func buildRegexpReplace(c *compiler, x *Call, a []*node) (*node, error) {
	for _, n := range a {
		if err := c.wantString(n, x.Name); err != nil {
			return nil, err
		}
	}
	var fixed *regexp.Regexp
	if a[1].konst && !a[1].k.IsNull() {
		re, err := regexp.Compile(string(a[1].k.Bytes))
		if err != nil {
			return nil, c.errAt(a[1].off, "invalid regular expression: %v", err)
		}
		fixed = re
	}
	return &node{typ: TString, off: x.Off, eval: func(e *env) change.Value {
		v, rv, pv := a[0].eval(e), a[1].eval(e), a[2].eval(e)
		if v.IsNull() || rv.IsNull() || pv.IsNull() {
			return change.Value{}
		}
		re := fixed
		if re == nil {
			var err error
			if re, err = regexp.Compile(string(rv.Bytes)); err != nil {
				return change.Value{}
			}
		}
		out := re.ReplaceAllLiteral(v.Bytes, pv.Bytes)
		return e.str(func(dst []byte) []byte { return append(dst, out...) })
	}}, nil
}

// numFn builds a function of one number, NULL for NULL, keeping the argument's type.
func numFn(name string, fn func(*env, change.Value) change.Value) func(*compiler, *Call, []*node) (*node, error) {
	return func(c *compiler, x *Call, a []*node) (*node, error) {
		if !a[0].typ.numeric() && a[0].typ != TAny && a[0].typ != TNull {
			return nil, c.errAt(a[0].off, "%s needs a number, not %s", name, a[0].typ)
		}
		return &node{typ: a[0].typ, off: x.Off, eval: func(e *env) change.Value {
			v := a[0].eval(e)
			if v.IsNull() {
				return v
			}
			if numClass(v) == numNone {
				return e.fail("%s needs a number, not %s", name, v.Kind)
			}
			return fn(e, v)
		}}, nil
	}
}

func absValue(e *env, v change.Value) change.Value {
	switch numClass(v) {
	case numInt:
		if v.Kind == change.Uint || v.Kind == change.Bool {
			return v
		}
		i := asInt(v)
		if i < 0 {
			i = -i
		}
		return change.IntValue(i)
	case numFloat:
		return change.Float64Value(math.Abs(asFloat(v)))
	}
	d, _ := asDec(v)
	d.u.Abs(&d.u)
	return decValue(e, d)
}

// roundValue rounds v to n decimal places: 'h' ROUND (half up, as BigDecimal.setScale
// with HALF_UP), 'c' CEIL, 'f' FLOOR. Integers and floats keep their type.
func roundValue(e *env, v change.Value, mode byte, n int) change.Value {
	switch numClass(v) {
	case numInt:
		if n >= 0 {
			return v
		}
		d := decInt(asInt(v))
		r := d.setScale(n, mode)
		return change.IntValue(r.rescaled(0).Int64())
	case numFloat:
		f := asFloat(v)
		switch mode {
		case 'c':
			return change.Float64Value(math.Ceil(f))
		case 'f':
			return change.Float64Value(math.Floor(f))
		}
		d, ok := parseDec(javaFloatText(f))
		if !ok {
			return v
		}
		r := d.setScale(n, 'h')
		return change.Float64Value(r.float())
	}
	d, _ := asDec(v)
	return decValue(e, d.setScale(n, mode))
}

// javaFloatText is the value of BigDecimal.valueOf(double): the shortest text of f, here
// without an exponent.
func javaFloatText(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func buildRound(c *compiler, x *Call, a []*node) (*node, error) {
	if !a[0].typ.numeric() && a[0].typ != TAny && a[0].typ != TNull {
		return nil, c.errAt(a[0].off, "ROUND needs a number, not %s", a[0].typ)
	}
	places := 0
	if len(a) == 2 {
		if !a[1].konst || a[1].k.Kind != change.Int {
			return nil, c.errAt(a[1].off, "the places of ROUND must be an integer literal")
		}
		places = int(asInt(a[1].k))
	}
	return &node{typ: a[0].typ, off: x.Off, eval: func(e *env) change.Value {
		v := a[0].eval(e)
		if v.IsNull() {
			return v
		}
		if numClass(v) == numNone {
			return e.fail("ROUND needs a number, not %s", v.Kind)
		}
		return roundValue(e, v, 'h', places)
	}}, nil
}

func buildUUID(c *compiler, x *Call, a []*node) (*node, error) {
	return &node{typ: TString, off: x.Off, eval: func(e *env) change.Value {
		var b [16]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		return e.str(func(dst []byte) []byte {
			const hex = "0123456789abcdef"
			for i, c := range b {
				if i == 4 || i == 6 || i == 8 || i == 10 {
					dst = append(dst, '-')
				}
				dst = append(dst, hex[c>>4], hex[c&15])
			}
			return dst
		})
	}}, nil
}

func buildCoalesce(c *compiler, x *Call, a []*node) (*node, error) {
	typ, err := c.common(a, x.Name)
	if err != nil {
		return nil, err
	}
	return &node{typ: typ, off: x.Off, eval: func(e *env) change.Value {
		for _, n := range a {
			if v := n.eval(e); !v.IsNull() {
				return v
			}
		}
		return change.Value{}
	}}, nil
}

func buildIf(c *compiler, x *Call, a []*node) (*node, error) {
	if err := c.wantBool(a[0], "IF"); err != nil {
		return nil, err
	}
	typ, err := c.common(a[1:], "IF")
	if err != nil {
		return nil, err
	}
	return &node{typ: typ, off: x.Off, eval: func(e *env) change.Value {
		if v := a[0].eval(e); !v.IsNull() && truth(v) {
			return a[1].eval(e)
		}
		return a[2].eval(e)
	}}, nil
}

func buildNullIf(c *compiler, x *Call, a []*node) (*node, error) {
	if _, _, err := c.comparable(a[0], a[1], x.Off); err != nil {
		return nil, err
	}
	return &node{typ: a[0].typ, off: x.Off, eval: func(e *env) change.Value {
		v, w := a[0].eval(e), a[1].eval(e)
		if !v.IsNull() && !w.IsNull() {
			if r, ok := compare(v, w); ok && r == 0 {
				return change.Value{}
			}
		}
		return v
	}}, nil
}

func distinctFn(distinct bool) func(*compiler, *Call, []*node) (*node, error) {
	return func(c *compiler, x *Call, a []*node) (*node, error) {
		l, r, err := c.comparable(a[0], a[1], x.Off)
		if err != nil {
			return nil, err
		}
		return &node{typ: TBool, off: x.Off, eval: func(e *env) change.Value {
			v, w := l.eval(e), r.eval(e)
			same := v.IsNull() && w.IsNull()
			if !v.IsNull() && !w.IsNull() {
				res, ok := compare(v, w)
				same = ok && res == 0
			}
			return boolVal(same != distinct)
		}}, nil
	}
}
