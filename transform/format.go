package transform

import "strings"

// Format writes e back as text, fully parenthesised, with upper-case keywords: the
// canonical form that tests and plan show.
func Format(e Expr) string {
	var b strings.Builder
	format(&b, e)
	return b.String()
}

func format(b *strings.Builder, e Expr) {
	switch e := e.(type) {
	case *Ident:
		b.WriteString("`" + strings.ReplaceAll(e.Name, "`", "``") + "`")
	case *Lit:
		if e.Kind == tStr {
			b.WriteString("'" + strings.ReplaceAll(e.Text, "'", "''") + "'")
		} else {
			b.WriteString(e.Text)
		}
	case *Unary:
		b.WriteString("(" + e.Op + " ") // "- -1", not the comment "--1"
		format(b, e.X)
		b.WriteByte(')')
	case *Binary:
		b.WriteByte('(')
		format(b, e.X)
		b.WriteString(" " + e.Op + " ")
		format(b, e.Y)
		b.WriteByte(')')
	case *Is:
		b.WriteByte('(')
		format(b, e.X)
		b.WriteString(" IS ")
		if e.Not {
			b.WriteString("NOT ")
		}
		b.WriteString(e.What + ")")
	case *Between:
		b.WriteByte('(')
		format(b, e.X)
		b.WriteString(not(e.Not) + " BETWEEN ")
		format(b, e.Lo)
		b.WriteString(" AND ")
		format(b, e.Hi)
		b.WriteByte(')')
	case *In:
		b.WriteByte('(')
		format(b, e.X)
		b.WriteString(not(e.Not) + " IN (")
		list(b, e.List)
		b.WriteString("))")
	case *Like:
		b.WriteByte('(')
		format(b, e.X)
		b.WriteString(not(e.Not) + " LIKE ")
		format(b, e.Pattern)
		if e.Escape != nil {
			b.WriteString(" ESCAPE ")
			format(b, e.Escape)
		}
		b.WriteByte(')')
	case *Case:
		b.WriteString("CASE")
		if e.Operand != nil {
			b.WriteByte(' ')
			format(b, e.Operand)
		}
		for _, w := range e.Whens {
			b.WriteString(" WHEN ")
			list(b, w.Conds)
			b.WriteString(" THEN ")
			format(b, w.Then)
		}
		if e.Else != nil {
			b.WriteString(" ELSE ")
			format(b, e.Else)
		}
		b.WriteString(" END")
	case *Cast:
		if e.Try {
			b.WriteString("TRY_")
		}
		b.WriteString("CAST(")
		format(b, e.X)
		b.WriteString(" AS " + e.Type.String() + ")")
	case *Call:
		b.WriteString(e.Name)
		if len(e.Args) == 0 && e.Unit == "" && isNiladic(e.Name) {
			return
		}
		b.WriteByte('(')
		if e.Unit != "" {
			b.WriteString(e.Unit)
			if e.Name == "EXTRACT" {
				b.WriteString(" FROM ")
			} else {
				b.WriteString(", ")
			}
		}
		list(b, e.Args)
		b.WriteByte(')')
	}
}

func isNiladic(name string) bool {
	for _, n := range niladic {
		if n == name {
			return true
		}
	}
	return false
}

func not(n bool) string {
	if n {
		return " NOT"
	}
	return ""
}

func list(b *strings.Builder, es []Expr) {
	for i, x := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		format(b, x)
	}
}

// String returns the type as CAST writes it.
func (t TypeName) String() string {
	s := t.Name
	if len(t.Params) > 0 {
		s += "("
		for i, p := range t.Params {
			if i > 0 {
				s += ", "
			}
			s += itoa(p)
		}
		s += ")"
	}
	return s
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var d []byte
	for i > 0 {
		d = append([]byte{byte('0' + i%10)}, d...)
		i /= 10
	}
	if neg {
		d = append([]byte{'-'}, d...)
	}
	return string(d)
}
