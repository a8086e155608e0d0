package transform

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/ingestkit/ingest/change"
)

func (c *compiler) literal(x *Lit) (*node, error) {
	switch x.Kind {
	case tInt:
		if i, err := strconv.ParseInt(x.Text, 10, 64); err == nil {
			return constant(TInt, change.IntValue(i), x.Off), nil
		}
		return constant(TDecimal, change.DecimalValue([]byte(strings.TrimPrefix(x.Text, "+"))), x.Off), nil
	case tNum:
		if strings.ContainsAny(x.Text, "eE") {
			f, err := strconv.ParseFloat(x.Text, 64)
			if err != nil {
				return nil, c.errAt(x.Off, "number %s is out of range", x.Text)
			}
			return constant(TFloat, change.Float64Value(f), x.Off), nil
		}
		d, ok := parseDec(x.Text)
		if !ok {
			return nil, c.errAt(x.Off, "invalid number %s", x.Text)
		}
		return constant(TDecimal, change.DecimalValue(d.appendText(nil)), x.Off), nil
	case tStr:
		return constant(TString, change.StringValue([]byte(x.Text)), x.Off), nil
	}
	switch x.Text {
	case "TRUE":
		return constant(TBool, vTrue, x.Off), nil
	case "FALSE":
		return constant(TBool, vFalse, x.Off), nil
	}
	return constant(TNull, change.Value{}, x.Off), nil
}

func (c *compiler) unary(x *Unary) (*node, error) {
	a, err := c.compile(x.X)
	if err != nil {
		return nil, err
	}
	if x.Op == "NOT" {
		if err := c.wantBool(a, "NOT"); err != nil {
			return nil, err
		}
		return &node{typ: TBool, off: x.Off, eval: func(e *env) change.Value {
			v := a.eval(e)
			if v.IsNull() {
				return v
			}
			return boolVal(!truth(v))
		}}, nil
	}
	if !a.typ.numeric() && a.typ != TAny && a.typ != TNull {
		return nil, c.errAt(x.Off, "unary %s needs a number, not %s", x.Op, a.typ)
	}
	if x.Op == "+" {
		return a, nil
	}
	zero := constant(TInt, change.IntValue(0), x.Off)
	return c.arith("-", zero, a, x.Off)
}

// truth is the value of a non-NULL BOOLEAN (a number: not zero).
func truth(v change.Value) bool {
	switch v.Kind {
	case change.Bool, change.Int, change.Uint:
		return v.Num != 0
	case change.Float32, change.Float64:
		return v.Float() != 0
	case change.Decimal:
		d, _ := asDec(v)
		return d.u.Sign() != 0
	case change.String:
		return strings.EqualFold(string(v.Bytes), "true")
	}
	return false
}

func (c *compiler) wantBool(a *node, what string) error {
	if a.typ != TBool && a.typ != TAny && a.typ != TNull {
		return c.errAt(a.off, "%s needs a BOOLEAN, not %s", what, a.typ)
	}
	return nil
}

func (c *compiler) binary(x *Binary) (*node, error) {
	a, err := c.compile(x.X)
	if err != nil {
		return nil, err
	}
	b, err := c.compile(x.Y)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case "AND", "OR":
		if err := c.wantBool(a, x.Op); err != nil {
			return nil, err
		}
		if err := c.wantBool(b, x.Op); err != nil {
			return nil, err
		}
		and := x.Op == "AND"
		return &node{typ: TBool, off: x.Off, eval: func(e *env) change.Value {
			// Three-valued: AND is FALSE if either is FALSE, OR is TRUE if either is TRUE,
			// else NULL if either is NULL. The right side is evaluated only when needed.
			va := a.eval(e)
			if !va.IsNull() && truth(va) != and {
				return va
			}
			vb := b.eval(e)
			switch {
			case !vb.IsNull() && truth(vb) != and:
				return boolVal(!and)
			case va.IsNull() || vb.IsNull():
				return change.Value{}
			}
			return boolVal(and)
		}}, nil
	case "||":
		return c.concat([]*node{a, b}, x.Off)
	case "=", "<>", "<", "<=", ">", ">=":
		return c.comparison(x.Op, a, b, x.Off)
	}
	return c.arith(x.Op, a, b, x.Off)
}

// comparable checks that a and b may be compared, turning a string literal compared with
// a temporal value into that type (as Calcite coerces it).
func (c *compiler) comparable(a, b *node, off int) (*node, *node, error) {
	if a.konst && a.typ == TString && b.typ.temporal() {
		n, err := c.castConst(a, b.typ)
		return n, b, err
	}
	if b.konst && b.typ == TString && a.typ.temporal() {
		n, err := c.castConst(b, a.typ)
		return a, n, err
	}
	ok := a.typ == b.typ || a.typ == TAny || b.typ == TAny || a.typ == TNull || b.typ == TNull ||
		a.typ.numeric() && b.typ.numeric() || a.typ.stringy() && b.typ.stringy() ||
		a.typ == TDate && b.typ == TDateTime || a.typ == TDateTime && b.typ == TDate
	if !ok {
		return nil, nil, c.errAt(off, "cannot compare %s with %s; convert one side with CAST", a.typ, b.typ)
	}
	return a, b, nil
}

// castConst converts a string literal to the temporal type t at compile time.
func (c *compiler) castConst(a *node, t Type) (*node, error) {
	v, ok := castValue(a.k, t, 0, 0)
	if !ok {
		return nil, c.errAt(a.off, "%q is not a valid %s", a.k.Bytes, t)
	}
	return constant(t, v, a.off), nil
}

// comparison compiles = <> < <= > >=. As in Flink CDC (its ComparisonFunctions), a NULL
// operand makes = and the orderings FALSE, and <> (NOT =) TRUE; the result is never NULL.
func (c *compiler) comparison(op string, a, b *node, off int) (*node, error) {
	a, b, err := c.comparable(a, b, off)
	if err != nil {
		return nil, err
	}
	test := map[string]func(int) bool{
		"=": func(r int) bool { return r == 0 }, "<>": func(r int) bool { return r == 0 },
		"<": func(r int) bool { return r == -1 }, "<=": func(r int) bool { return r == -1 || r == 0 },
		">": func(r int) bool { return r == 1 }, ">=": func(r int) bool { return r == 0 || r == 1 },
	}[op]
	negate := op == "<>"
	return &node{typ: TBool, off: off, eval: func(e *env) change.Value {
		va, vb := a.eval(e), b.eval(e)
		if va.IsNull() || vb.IsNull() {
			return boolVal(negate)
		}
		r, ok := compare(va, vb)
		if !ok {
			return e.fail("cannot compare %s with %s", va.Kind, vb.Kind)
		}
		return boolVal(test(r) != negate)
	}}, nil
}

func (c *compiler) arith(op string, a, b *node, off int) (*node, error) {
	for _, n := range []*node{a, b} {
		if !n.typ.numeric() && n.typ != TAny && n.typ != TNull {
			return nil, c.errAt(n.off, "operator %s needs numbers, not %s", op, n.typ)
		}
	}
	typ := max(a.typ, b.typ) // TInt < TDecimal < TFloat
	if a.typ == TAny || b.typ == TAny {
		typ = TAny
	} else if a.typ == TNull || b.typ == TNull {
		if a.typ == TNull && b.typ == TNull {
			typ = TNull
		} else if a.typ == TNull {
			typ = b.typ
		} else {
			typ = a.typ
		}
	}
	if op == "%" && (typ == TDecimal || typ == TFloat) {
		return nil, c.errAt(off, "operator %% needs integers, not %s", typ)
	}
	return &node{typ: typ, off: off, eval: func(e *env) change.Value {
		va, vb := a.eval(e), b.eval(e)
		if va.IsNull() || vb.IsNull() {
			return change.Value{}
		}
		return arithValue(e, op, va, vb)
	}}, nil
}

func arithValue(e *env, op string, va, vb change.Value) change.Value {
	ca, cb := numClass(va), numClass(vb)
	if ca == numNone || cb == numNone {
		return e.fail("operator %s needs numbers, not %s and %s", op, va.Kind, vb.Kind)
	}
	switch max(ca, cb) {
	case numInt:
		x, y := asInt(va), asInt(vb)
		switch op {
		case "+":
			return change.IntValue(x + y)
		case "-":
			return change.IntValue(x - y)
		case "*":
			return change.IntValue(x * y)
		}
		if y == 0 {
			return e.fail("division by zero")
		}
		if op == "/" {
			if x == math.MinInt64 && y == -1 {
				return change.IntValue(x)
			}
			return change.IntValue(x / y)
		}
		if y == -1 {
			return change.IntValue(0)
		}
		return change.IntValue(x % y)
	case numFloat:
		x, y := asFloat(va), asFloat(vb)
		switch op {
		case "+":
			return change.Float64Value(x + y)
		case "-":
			return change.Float64Value(x - y)
		case "*":
			return change.Float64Value(x * y)
		case "/":
			return change.Float64Value(x / y)
		}
		return e.fail("operator %% needs integers")
	}
	x, ok1 := asDec(va)
	y, ok2 := asDec(vb)
	if !ok1 || !ok2 {
		return e.fail("invalid decimal")
	}
	switch op {
	case "+", "-":
		return decValue(e, decAdd(&x, &y, op == "-"))
	case "*":
		return decValue(e, decMul(&x, &y))
	case "/":
		r, ok := decDiv(&x, &y)
		if !ok {
			return e.fail("division by zero")
		}
		return decValue(e, r)
	}
	return e.fail("operator %% needs integers")
}

func (c *compiler) is(x *Is) (*node, error) {
	a, err := c.compile(x.X)
	if err != nil {
		return nil, err
	}
	if x.What == "TRUE" || x.What == "FALSE" {
		if err := c.wantBool(a, "IS "+x.What); err != nil {
			return nil, err
		}
	}
	what, not := x.What, x.Not
	return &node{typ: TBool, off: x.Off, eval: func(e *env) change.Value {
		v := a.eval(e)
		var r bool
		switch what {
		case "NULL", "UNKNOWN":
			r = v.IsNull()
		case "TRUE":
			r = !v.IsNull() && truth(v)
		default:
			r = !v.IsNull() && !truth(v)
		}
		return boolVal(r != not)
	}}, nil
}

// between: as Flink CDC's betweenAsymmetric and notBetweenAsymmetric, FALSE when any
// operand is NULL, also for NOT BETWEEN.
func (c *compiler) between(x *Between) (*node, error) {
	ns, err := c.compileAll([]Expr{x.X, x.Lo, x.Hi})
	if err != nil {
		return nil, err
	}
	v, lo, err := c.comparable(ns[0], ns[1], x.Off)
	if err != nil {
		return nil, err
	}
	_, hi, err := c.comparable(ns[0], ns[2], x.Off)
	if err != nil {
		return nil, err
	}
	not := x.Not
	return &node{typ: TBool, off: x.Off, eval: func(e *env) change.Value {
		a, l, h := v.eval(e), lo.eval(e), hi.eval(e)
		if a.IsNull() || l.IsNull() || h.IsNull() {
			return vFalse
		}
		r1, ok1 := compare(a, l)
		r2, ok2 := compare(a, h)
		if !ok1 || !ok2 {
			return e.fail("cannot compare %s in BETWEEN", a.Kind)
		}
		if r1 == unordered || r2 == unordered {
			return vFalse
		}
		if not {
			return boolVal(r1 < 0 || r2 > 0)
		}
		return boolVal(r1 >= 0 && r2 <= 0)
	}}, nil
}

// in: as Flink CDC's in (List.contains), FALSE for a NULL value; NOT IN is its negation.
func (c *compiler) in(x *In) (*node, error) {
	v, err := c.compile(x.X)
	if err != nil {
		return nil, err
	}
	list, err := c.compileAll(x.List)
	if err != nil {
		return nil, err
	}
	for i, n := range list {
		if _, list[i], err = c.comparable(v, n, n.off); err != nil {
			return nil, err
		}
	}
	not := x.Not
	return &node{typ: TBool, off: x.Off, eval: func(e *env) change.Value {
		a := v.eval(e)
		found := false
		if !a.IsNull() {
			for _, n := range list {
				b := n.eval(e)
				if b.IsNull() {
					continue
				}
				if r, ok := compare(a, b); ok && r == 0 {
					found = true
					break
				}
			}
		}
		return boolVal(found != not)
	}}, nil
}

// like is SQL LIKE: % any run, _ one character, and the optional one-character escape.
// NULL when an operand is NULL. (Flink CDC evaluates LIKE without ESCAPE as a Java regular
// expression search; docs/pipeline.md says so.)
func (c *compiler) like(x *Like) (*node, error) {
	exprs := []Expr{x.X, x.Pattern}
	if x.Escape != nil {
		exprs = append(exprs, x.Escape)
	}
	ns, err := c.compileAll(exprs)
	if err != nil {
		return nil, err
	}
	for _, n := range ns {
		if !n.typ.stringy() && n.typ != TAny && n.typ != TNull {
			return nil, c.errAt(n.off, "LIKE needs strings, not %s", n.typ)
		}
	}
	var fixed *regexp.Regexp
	if ns[1].konst && (len(ns) == 2 || ns[2].konst) {
		esc := change.Value{}
		if len(ns) == 3 {
			esc = ns[2].k
		}
		if !ns[1].k.IsNull() && !esc.IsNull() || len(ns) == 2 && !ns[1].k.IsNull() {
			re, err := likeRegexp(string(ns[1].k.Bytes), esc)
			if err != nil {
				return nil, c.errAt(ns[1].off, "%v", err)
			}
			fixed = re
		}
	}
	not := x.Not
	return &node{typ: TBool, off: x.Off, eval: func(e *env) change.Value {
		s := ns[0].eval(e)
		if s.IsNull() {
			return s
		}
		re := fixed
		if re == nil {
			p := ns[1].eval(e)
			esc := change.Value{Kind: change.String}
			if len(ns) == 3 {
				esc = ns[2].eval(e)
			}
			if p.IsNull() || esc.IsNull() {
				return change.Value{}
			}
			var err error
			if re, err = likeRegexp(string(p.Bytes), esc); err != nil {
				return e.fail("%v", err)
			}
		}
		return boolVal(re.Match(s.Bytes) != not)
	}}, nil
}

func likeRegexp(pattern string, escape change.Value) (*regexp.Regexp, error) {
	var esc rune = -1
	if !escape.IsNull() && len(escape.Bytes) > 0 {
		r := []rune(string(escape.Bytes))
		if len(r) != 1 {
			return nil, errString("the ESCAPE of LIKE must be one character")
		}
		esc = r[0]
	}
	var b strings.Builder
	b.WriteString("(?s)^")
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == esc:
			if i+1 == len(rs) {
				return nil, errString("LIKE pattern ends with its escape character")
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case r == '%':
			b.WriteString(".*")
		case r == '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

type errString string

func (e errString) Error() string { return string(e) }

func (c *compiler) caseExpr(x *Case) (*node, error) {
	var op *node
	var err error
	if x.Operand != nil {
		if op, err = c.compile(x.Operand); err != nil {
			return nil, err
		}
	}
	type arm struct {
		conds []*node
		then  *node
	}
	arms := make([]arm, len(x.Whens))
	var results []*node
	for i, w := range x.Whens {
		conds, err := c.compileAll(w.Conds)
		if err != nil {
			return nil, err
		}
		for j, cn := range conds {
			if op != nil {
				if _, conds[j], err = c.comparable(op, cn, cn.off); err != nil {
					return nil, err
				}
			} else if err := c.wantBool(cn, "WHEN"); err != nil {
				return nil, err
			}
		}
		then, err := c.compile(w.Then)
		if err != nil {
			return nil, err
		}
		arms[i] = arm{conds, then}
		results = append(results, then)
	}
	var els *node
	if x.Else != nil {
		if els, err = c.compile(x.Else); err != nil {
			return nil, err
		}
		results = append(results, els)
	}
	typ, err := c.common(results, "CASE")
	if err != nil {
		return nil, err
	}
	return &node{typ: typ, off: x.Off, eval: func(e *env) change.Value {
		var v change.Value
		if op != nil {
			v = op.eval(e)
		}
		for _, a := range arms {
			for _, cn := range a.conds {
				cv := cn.eval(e)
				if op == nil {
					if !cv.IsNull() && truth(cv) {
						return a.then.eval(e)
					}
					continue
				}
				if v.IsNull() || cv.IsNull() {
					continue
				}
				if r, ok := compare(v, cv); ok && r == 0 {
					return a.then.eval(e)
				}
			}
		}
		if els != nil {
			return els.eval(e)
		}
		return change.Value{}
	}}, nil
}

// common is the type of results that one expression may return (CASE, COALESCE, IF):
// numbers widen; otherwise the types must agree.
func (c *compiler) common(ns []*node, what string) (Type, error) {
	t := TNull
	for _, n := range ns {
		switch {
		case n.typ == TNull:
		case t == TNull || t == n.typ:
			t = n.typ
		case t == TAny || n.typ == TAny:
			t = TAny
		case t.numeric() && n.typ.numeric():
			t = max(t, n.typ)
		case t.stringy() && n.typ.stringy():
			t = TString
		default:
			return 0, c.errAt(n.off, "%s mixes %s and %s; convert one with CAST", what, t, n.typ)
		}
	}
	return t, nil
}
