package transform

import (
	"slices"
	"strconv"
	"strings"
)

// reserved are the words that cannot name a column without `backticks`, nor be an alias
// written without AS.
var reserved = []string{"AND", "OR", "NOT", "IS", "NULL", "TRUE", "FALSE", "UNKNOWN", "IN", "BETWEEN",
	"LIKE", "CASE", "WHEN", "THEN", "ELSE", "END", "AS", "CAST", "TRY_CAST", "FROM", "FOR", "ESCAPE",
	"DISTINCT", "SELECT", "WHERE", "SIMILAR"}

func isReserved(word string) bool { return slices.Contains(reserved, upper(word)) }

// niladic are the functions written without parentheses.
var niladic = []string{"CURRENT_TIMESTAMP", "LOCALTIMESTAMP", "CURRENT_DATE", "CURRENT_TIME", "LOCALTIME"}

// timeUnits are the units of TIMESTAMPDIFF, TIMESTAMPADD and EXTRACT.
var timeUnits = []string{"SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR"}

type parser struct {
	expr string
	toks []token
	i    int
}

// ParseProjection parses a projection: items separated by commas, each * or an
// expression, optionally followed by [AS] alias. A leading `\*` (YAML's escape of a
// leading *) is read as *.
func ParseProjection(text string) (*Projection, error) {
	src := text
	if t := strings.TrimLeft(text, " \t"); strings.HasPrefix(t, `\*`) {
		k := len(text) - len(t)
		src = text[:k] + " " + text[k+1:] // keep the offsets
	}
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	proj := &Projection{Text: text}
	if p.peek().Kind == tEOF {
		return nil, errAt(text, 0, "projection is empty; remove the option to keep every column")
	}
	for {
		it, err := p.item()
		if err != nil {
			return nil, err
		}
		proj.Items = append(proj.Items, it)
		if p.accept(tOp, ",") {
			continue
		}
		if t := p.peek(); t.Kind != tEOF {
			return nil, p.unexpected(t, "',' or the end of the projection")
		}
		return proj, nil
	}
}

// ParseFilter parses a filter: one boolean expression.
func ParseFilter(text string) (*Filter, error) {
	p, err := newParser(text)
	if err != nil {
		return nil, err
	}
	if p.peek().Kind == tEOF {
		return nil, errAt(text, 0, "filter is empty; remove the option to keep every row")
	}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.Kind != tEOF {
		return nil, p.unexpected(t, "an operator or the end of the filter")
	}
	return &Filter{Text: text, Expr: e}, nil
}

func newParser(text string) (*parser, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	return &parser{expr: text, toks: toks}, nil
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.Kind != tEOF {
		p.i++
	}
	return t
}

// isWord reports whether t is the (unquoted) keyword w.
func isWord(t token, w string) bool { return t.Kind == tIdent && strings.EqualFold(t.Text, w) }

func (p *parser) accept(kind tokKind, text string) bool {
	t := p.peek()
	if t.Kind == kind && (kind != tIdent && t.Text == text || kind == tIdent && strings.EqualFold(t.Text, text)) {
		p.i++
		return true
	}
	return false
}

func (p *parser) acceptWord(w string) bool { return p.accept(tIdent, w) }

func (p *parser) expect(kind tokKind, text, what string) (token, error) {
	t := p.peek()
	if p.accept(kind, text) {
		return t, nil
	}
	return t, p.unexpected(t, what)
}

func (p *parser) unexpected(t token, want string) error {
	if t.Kind == tEOF {
		return errAt(p.expr, t.Off, "unexpected end of expression; expected %s", want)
	}
	return errAt(p.expr, t.Off, "unexpected %s; expected %s", describe(t), want)
}

func describe(t token) string {
	switch t.Kind {
	case tStr:
		return "string '" + t.Text + "'"
	case tQuoted:
		return "name `" + t.Text + "`"
	case tOp:
		return "'" + t.Text + "'"
	}
	return strconv.Quote(t.Text)
}

func (p *parser) item() (Item, error) {
	start := p.peek()
	if start.Kind == tOp && start.Text == "*" {
		p.next()
		return Item{Star: true, Off: start.Off}, nil
	}
	e, err := p.or()
	if err != nil {
		return Item{}, err
	}
	end := p.peek().Off
	it := Item{Expr: e, Off: start.Off}
	t := p.peek()
	switch {
	case isWord(t, "AS"):
		p.next()
		a := p.next()
		if a.Kind != tIdent && a.Kind != tQuoted && a.Kind != tStr || a.Kind == tIdent && isReserved(a.Text) {
			return Item{}, p.unexpected(a, "an alias after AS")
		}
		it.Name, it.Aliased = a.Text, true
	case t.Kind == tQuoted || t.Kind == tIdent && !isReserved(t.Text):
		p.next()
		it.Name, it.Aliased = t.Text, true
	default:
		if id, ok := e.(*Ident); ok {
			it.Name = id.Name
		} else {
			it.Name = strings.TrimSpace(p.expr[start.Off:end])
		}
	}
	return it, nil
}

func (p *parser) or() (Expr, error) {
	x, err := p.and()
	for err == nil && isWord(p.peek(), "OR") {
		t := p.next()
		var y Expr
		if y, err = p.and(); err == nil {
			x = &Binary{Op: "OR", X: x, Y: y, Off: t.Off}
		}
	}
	return x, err
}

func (p *parser) and() (Expr, error) {
	x, err := p.not()
	for err == nil && isWord(p.peek(), "AND") {
		t := p.next()
		var y Expr
		if y, err = p.not(); err == nil {
			x = &Binary{Op: "AND", X: x, Y: y, Off: t.Off}
		}
	}
	return x, err
}

func (p *parser) not() (Expr, error) {
	if t := p.peek(); isWord(t, "NOT") {
		p.next()
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return &Unary{Op: "NOT", X: x, Off: t.Off}, nil
	}
	return p.comparison()
}

var comparisonOps = []string{"=", "<>", "!=", "<", "<=", ">", ">="}

func (p *parser) comparison() (Expr, error) {
	x, err := p.additive()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		switch {
		case t.Kind == tOp && slices.Contains(comparisonOps, t.Text):
			p.next()
			y, err := p.additive()
			if err != nil {
				return nil, err
			}
			op := t.Text
			if op == "!=" {
				op = "<>"
			}
			x = &Binary{Op: op, X: x, Y: y, Off: t.Off}
		case isWord(t, "IS"):
			p.next()
			is := &Is{X: x, Off: t.Off, Not: p.acceptWord("NOT")}
			w := p.next()
			switch {
			case isWord(w, "NULL"), isWord(w, "TRUE"), isWord(w, "FALSE"), isWord(w, "UNKNOWN"):
				is.What = upper(w.Text)
			case isWord(w, "DISTINCT"):
				if _, err := p.expect(tIdent, "FROM", "FROM after IS [NOT] DISTINCT"); err != nil {
					return nil, err
				}
				y, err := p.additive()
				if err != nil {
					return nil, err
				}
				name := "IS_DISTINCT_FROM"
				if is.Not {
					name = "IS_NOT_DISTINCT_FROM"
				}
				x = &Call{Name: name, Args: []Expr{x, y}, Off: t.Off}
				continue
			default:
				return nil, p.unexpected(w, "NULL, NOT NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM after IS")
			}
			x = is
		case isWord(t, "NOT") && (isWord(p.peekAt(1), "BETWEEN") || isWord(p.peekAt(1), "IN") || isWord(p.peekAt(1), "LIKE")):
			p.next()
			if x, err = p.postfix(x, true); err != nil {
				return nil, err
			}
		case isWord(t, "BETWEEN") || isWord(t, "IN") || isWord(t, "LIKE"):
			if x, err = p.postfix(x, false); err != nil {
				return nil, err
			}
		case isWord(t, "SIMILAR"):
			return nil, errAt(p.expr, t.Off, "SIMILAR TO is not supported yet; use REGEXP_REPLACE or LIKE")
		default:
			return x, nil
		}
	}
}

// postfix parses BETWEEN, IN or LIKE after x (and NOT, when not is set).
func (p *parser) postfix(x Expr, not bool) (Expr, error) {
	t := p.next()
	switch {
	case isWord(t, "BETWEEN"):
		p.acceptWord("ASYMMETRIC")
		if isWord(p.peek(), "SYMMETRIC") {
			return nil, errAt(p.expr, p.peek().Off, "BETWEEN SYMMETRIC is not supported")
		}
		lo, err := p.additive()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(tIdent, "AND", "AND of BETWEEN … AND …"); err != nil {
			return nil, err
		}
		hi, err := p.additive()
		if err != nil {
			return nil, err
		}
		return &Between{X: x, Lo: lo, Hi: hi, Not: not, Off: t.Off}, nil
	case isWord(t, "IN"):
		if _, err := p.expect(tOp, "(", "'(' after IN"); err != nil {
			return nil, err
		}
		in := &In{X: x, Not: not, Off: t.Off}
		for {
			e, err := p.or()
			if err != nil {
				return nil, err
			}
			in.List = append(in.List, e)
			if p.accept(tOp, ",") {
				continue
			}
			if _, err := p.expect(tOp, ")", "',' or ')' of the IN list"); err != nil {
				return nil, err
			}
			return in, nil
		}
	default: // LIKE
		pat, err := p.additive()
		if err != nil {
			return nil, err
		}
		l := &Like{X: x, Pattern: pat, Not: not, Off: t.Off}
		if p.acceptWord("ESCAPE") {
			if l.Escape, err = p.additive(); err != nil {
				return nil, err
			}
		}
		return l, nil
	}
}

func (p *parser) additive() (Expr, error) {
	x, err := p.multiplicative()
	for err == nil {
		t := p.peek()
		if t.Kind != tOp || t.Text != "+" && t.Text != "-" {
			break
		}
		p.next()
		var y Expr
		if y, err = p.multiplicative(); err == nil {
			x = &Binary{Op: t.Text, X: x, Y: y, Off: t.Off}
		}
	}
	return x, err
}

// multiplicative parses * / % and || (Calcite gives || the precedence of *).
func (p *parser) multiplicative() (Expr, error) {
	x, err := p.unary()
	for err == nil {
		t := p.peek()
		if t.Kind != tOp || t.Text != "*" && t.Text != "/" && t.Text != "%" && t.Text != "||" {
			break
		}
		p.next()
		var y Expr
		if y, err = p.unary(); err == nil {
			x = &Binary{Op: t.Text, X: x, Y: y, Off: t.Off}
		}
	}
	return x, err
}

func (p *parser) unary() (Expr, error) {
	t := p.peek()
	if t.Kind == tOp && (t.Text == "-" || t.Text == "+") {
		p.next()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		if l, ok := x.(*Lit); ok && t.Text == "-" && (l.Kind == tInt || l.Kind == tNum) && !strings.HasPrefix(l.Text, "-") {
			return &Lit{Kind: l.Kind, Text: "-" + l.Text, Off: t.Off}, nil
		}
		return &Unary{Op: t.Text, X: x, Off: t.Off}, nil
	}
	return p.primary()
}

func (p *parser) primary() (Expr, error) {
	t := p.next()
	switch t.Kind {
	case tInt, tNum, tStr:
		return &Lit{Kind: t.Kind, Text: t.Text, Off: t.Off}, nil
	case tQuoted:
		return p.qualified(&Ident{Name: t.Text, Quoted: true, Off: t.Off})
	case tOp:
		if t.Text == "(" {
			x, err := p.or()
			if err != nil {
				return nil, err
			}
			if _, err := p.expect(tOp, ")", "')'"); err != nil {
				return nil, err
			}
			return x, nil
		}
		return nil, p.unexpected(t, "an expression")
	case tEOF:
		return nil, p.unexpected(t, "an expression")
	}
	w := upper(t.Text)
	switch w {
	case "TRUE", "FALSE", "NULL":
		return &Lit{Kind: tIdent, Text: w, Off: t.Off}, nil
	case "CASE":
		return p.caseExpr(t)
	case "CAST", "TRY_CAST":
		return p.cast(t, w == "TRY_CAST")
	case "DATE", "TIMESTAMP", "TIME":
		if s := p.peek(); s.Kind == tStr {
			p.next()
			return &Cast{X: &Lit{Kind: tStr, Text: s.Text, Off: s.Off}, Type: TypeName{Name: w, Off: t.Off}, Off: t.Off}, nil
		}
	case "INTERVAL":
		return nil, errAt(p.expr, t.Off, "INTERVAL is not supported yet; use TIMESTAMPADD")
	}
	if p.peek().Kind == tOp && p.peek().Text == "(" {
		return p.call(t)
	}
	if slices.Contains(niladic, w) {
		return &Call{Name: w, Off: t.Off}, nil
	}
	if isReserved(t.Text) {
		return nil, errAt(p.expr, t.Off, "unexpected %s; a column named so must be quoted as `%s`", describe(t), t.Text)
	}
	return p.qualified(&Ident{Name: t.Text, Off: t.Off})
}

// qualified refuses a qualified name (t.col): columns are named without their table.
func (p *parser) qualified(id *Ident) (Expr, error) {
	if t := p.peek(); t.Kind == tOp && t.Text == "." {
		return nil, errAt(p.expr, t.Off, "qualified names are not supported: name the column %q without its table", id.Name)
	}
	return id, nil
}

func (p *parser) call(name token) (Expr, error) {
	p.next() // (
	c := &Call{Name: upper(name.Text), Off: name.Off}
	switch c.Name {
	case "TIMESTAMPDIFF", "TIMESTAMPADD", "EXTRACT":
		u := p.next()
		if u.Kind != tIdent || !slices.Contains(timeUnits, upper(u.Text)) {
			return nil, p.unexpected(u, "a time unit ("+strings.Join(timeUnits, ", ")+")")
		}
		c.Unit = upper(u.Text)
		sep, what := ",", "',' after the time unit"
		if c.Name == "EXTRACT" {
			sep, what = "FROM", "FROM after the time unit"
		}
		if sep == "," {
			if _, err := p.expect(tOp, ",", what); err != nil {
				return nil, err
			}
		} else if _, err := p.expect(tIdent, "FROM", what); err != nil {
			return nil, err
		}
	case "TRIM":
		return p.trim(c)
	}
	if p.accept(tOp, ")") {
		return c, nil
	}
	for {
		if isWord(p.peek(), "DISTINCT") {
			return nil, errAt(p.expr, p.peek().Off, "DISTINCT is not allowed in a function call")
		}
		a, err := p.or()
		if err != nil {
			return nil, err
		}
		c.Args = append(c.Args, a)
		if (c.Name == "SUBSTRING" || c.Name == "SUBSTR") && len(c.Args) == 1 && p.acceptWord("FROM") {
			from, err := p.or()
			if err != nil {
				return nil, err
			}
			c.Args = append(c.Args, from)
			if p.acceptWord("FOR") {
				n, err := p.or()
				if err != nil {
					return nil, err
				}
				c.Args = append(c.Args, n)
			}
			_, err = p.expect(tOp, ")", "')' of "+c.Name)
			return c, err
		}
		if p.accept(tOp, ",") {
			continue
		}
		_, err = p.expect(tOp, ")", "',' or ')' of "+c.Name)
		return c, err
	}
}

// trim parses TRIM([[BOTH|LEADING|TRAILING] [chars] FROM] s) into TRIM, LTRIM or RTRIM of
// (s[, chars]).
func (p *parser) trim(c *Call) (Expr, error) {
	switch {
	case p.acceptWord("BOTH"):
	case p.acceptWord("LEADING"):
		c.Name = "LTRIM"
	case p.acceptWord("TRAILING"):
		c.Name = "RTRIM"
	}
	var chars Expr
	if !p.acceptWord("FROM") {
		a, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.acceptWord("FROM") {
			if _, err := p.expect(tOp, ")", "FROM or ')' of TRIM"); err != nil {
				return nil, err
			}
			c.Args = []Expr{a}
			return c, nil
		}
		chars = a
	}
	s, err := p.or()
	if err != nil {
		return nil, err
	}
	c.Args = []Expr{s}
	if chars != nil {
		c.Args = append(c.Args, chars)
		if c.Name == "TRIM" {
			c.Name = "BTRIM"
		}
	}
	_, err = p.expect(tOp, ")", "')' of TRIM")
	return c, err
}

func (p *parser) caseExpr(t token) (Expr, error) {
	c := &Case{Off: t.Off}
	if !isWord(p.peek(), "WHEN") {
		op, err := p.or()
		if err != nil {
			return nil, err
		}
		c.Operand = op
	}
	for p.acceptWord("WHEN") {
		var w When
		for {
			e, err := p.or()
			if err != nil {
				return nil, err
			}
			w.Conds = append(w.Conds, e)
			if c.Operand == nil || !p.accept(tOp, ",") {
				break
			}
		}
		if _, err := p.expect(tIdent, "THEN", "THEN"); err != nil {
			return nil, err
		}
		th, err := p.or()
		if err != nil {
			return nil, err
		}
		w.Then = th
		c.Whens = append(c.Whens, w)
	}
	if len(c.Whens) == 0 {
		return nil, p.unexpected(p.peek(), "WHEN")
	}
	if p.acceptWord("ELSE") {
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		c.Else = e
	}
	if _, err := p.expect(tIdent, "END", "WHEN, ELSE or END of CASE"); err != nil {
		return nil, err
	}
	return c, nil
}

func (p *parser) cast(t token, try bool) (Expr, error) {
	if _, err := p.expect(tOp, "(", "'(' after "+upper(t.Text)); err != nil {
		return nil, err
	}
	x, err := p.or()
	if err != nil {
		return nil, err
	}
	if _, err := p.expect(tIdent, "AS", "AS of CAST"); err != nil {
		return nil, err
	}
	tn := p.next()
	if tn.Kind != tIdent {
		return nil, p.unexpected(tn, "a type name")
	}
	typ := TypeName{Name: upper(tn.Text), Off: tn.Off}
	for _, w := range []string{"PRECISION", "VARYING"} { // DOUBLE PRECISION, CHARACTER VARYING
		if p.acceptWord(w) {
			typ.Name += " " + w
		}
	}
	if p.accept(tOp, "(") {
		for {
			n := p.next()
			v, err := strconv.Atoi(n.Text)
			if n.Kind != tInt || err != nil {
				return nil, p.unexpected(n, "a number")
			}
			typ.Params = append(typ.Params, v)
			if p.accept(tOp, ",") {
				continue
			}
			if _, err := p.expect(tOp, ")", "',' or ')'"); err != nil {
				return nil, err
			}
			break
		}
	}
	if _, err := p.expect(tOp, ")", "')' of CAST"); err != nil {
		return nil, err
	}
	return &Cast{X: x, Type: typ, Try: try, Off: t.Off}, nil
}
