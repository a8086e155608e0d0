package transform

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the kind of a token.
type tokKind uint8

const (
	tEOF    tokKind = iota
	tIdent          // a name: column, function or keyword (Word holds it as written)
	tQuoted         // a `quoted` name
	tInt            // 42
	tNum            // 4.2, 4e2
	tStr            // 'text' (Text holds the unescaped value)
	tOp             // an operator or punctuation: ( ) , * + - / % || = <> != < <= > >= .
)

// token is one lexical token; Off is its byte offset in the expression.
type token struct {
	Kind tokKind
	Text string
	Off  int
}

// Error is an expression that does not parse or does not fit its table. Line and Col count from 1 within the
// expression (Col in characters); Offset is the byte offset.
type Error struct {
	Line, Col, Offset int
	Msg               string
	// Filter is set when the error is in the filter (by [Compile]), else it is in the
	// projection.
	Filter bool
}

func (e *Error) Error() string {
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
}

// LineCol returns the line and column (from 1, in characters) of the byte offset off of
// expr.
func LineCol(expr string, off int) (line, col int) {
	line, col = 1, 1
	for i, r := range expr {
		if i >= off {
			break
		}
		if r == '\n' {
			line, col = line+1, 1
			continue
		}
		col++
	}
	return line, col
}

func errAt(expr string, off int, format string, args ...any) *Error {
	l, c := LineCol(expr, off)
	return &Error{Line: l, Col: c, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// lex splits expr into tokens.
func lex(expr string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(expr) {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '-' && i+1 < len(expr) && expr[i+1] == '-':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '\'':
			s, n, err := lexString(expr, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tStr, s, i})
			i = n
		case c == '"':
			return nil, errAt(expr, i, "double quotes are not allowed: write a string as 'text' and a quoted name as `name`")
		case c == '`':
			end := strings.IndexByte(expr[i+1:], c)
			for end >= 0 && i+1+end+1 < len(expr) && expr[i+1+end+1] == c { // doubled: escaped
				next := strings.IndexByte(expr[i+1+end+2:], c)
				if next < 0 {
					end = -1
					break
				}
				end += 2 + next
			}
			if end < 0 {
				return nil, errAt(expr, i, "unterminated quoted name: add the closing %c", c)
			}
			name := strings.ReplaceAll(expr[i+1:i+1+end], string([]byte{c, c}), string(c))
			if name == "" {
				return nil, errAt(expr, i, "empty quoted name")
			}
			toks = append(toks, token{tQuoted, name, i})
			i += end + 2
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(expr) && expr[i+1] >= '0' && expr[i+1] <= '9':
			t, n := lexNumber(expr, i)
			toks = append(toks, t)
			i = n
		case isIdentStart(expr, i):
			j := i
			for j < len(expr) {
				r, size := utf8.DecodeRuneInString(expr[j:])
				if r != '_' && r != '$' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				j += size
			}
			toks = append(toks, token{tIdent, expr[i:j], i})
			i = j
		default:
			op := ""
			for _, o := range []string{"||", "<>", "!=", "<=", ">=", "(", ")", ",", "*", "+", "-", "/", "%", "=", "<", ">", "."} {
				if strings.HasPrefix(expr[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				r, _ := utf8.DecodeRuneInString(expr[i:])
				return nil, errAt(expr, i, "unexpected character %q", r)
			}
			toks = append(toks, token{tOp, op, i})
			i += len(op)
		}
	}
	return append(toks, token{tEOF, "", len(expr)}), nil
}

func isIdentStart(expr string, i int) bool {
	r, _ := utf8.DecodeRuneInString(expr[i:])
	return r == '_' || r == '$' || unicode.IsLetter(r)
}

// lexString reads the 'quoted' string starting at i (” is a quote) and returns its value
// and the offset after it.
func lexString(expr string, i int) (string, int, error) {
	var b strings.Builder
	j := i + 1
	for {
		k := strings.IndexByte(expr[j:], '\'')
		if k < 0 {
			return "", 0, errAt(expr, i, "unterminated string literal: add the closing '")
		}
		b.WriteString(expr[j : j+k])
		j += k + 1
		if j < len(expr) && expr[j] == '\'' {
			b.WriteByte('\'')
			j++
			continue
		}
		return b.String(), j, nil
	}
}

func lexNumber(expr string, i int) (token, int) {
	j := i
	digits := func() {
		for j < len(expr) && expr[j] >= '0' && expr[j] <= '9' {
			j++
		}
	}
	digits()
	kind := tInt
	if j < len(expr) && expr[j] == '.' {
		kind = tNum
		j++
		digits()
	}
	if j < len(expr) && (expr[j] == 'e' || expr[j] == 'E') {
		k := j + 1
		if k < len(expr) && (expr[k] == '+' || expr[k] == '-') {
			k++
		}
		if k < len(expr) && expr[k] >= '0' && expr[k] <= '9' {
			kind = tNum
			j = k
			digits()
		}
	}
	return token{kind, expr[i:j], i}, j
}
