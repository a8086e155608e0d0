package transform

import "strings"

// Expr is a parsed expression. Off is the byte offset in the expression text of the
// token that the node starts at (for a binary operator, the operator).
type Expr interface{ off() int }

type (
	// Ident is a column or metadata column reference.
	Ident struct {
		Name   string
		Quoted bool
		Off    int
	}
	// Lit is a literal: Kind is tInt, tNum, tStr, or tIdent for TRUE, FALSE and NULL.
	Lit struct {
		Kind tokKind
		Text string
		Off  int
	}
	// Unary is NOT x or -x / +x.
	Unary struct {
		Op  string // "NOT", "-", "+"
		X   Expr
		Off int
	}
	// Binary is x op y: arithmetic, ||, comparison, AND, OR.
	Binary struct {
		Op   string // upper case: "AND", "OR", "=", "<>", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "||"
		X, Y Expr
		Off  int
	}
	// Is is x IS [NOT] NULL|TRUE|FALSE|UNKNOWN.
	Is struct {
		X    Expr
		Not  bool
		What string // "NULL", "TRUE", "FALSE", "UNKNOWN"
		Off  int
	}
	// Between is x [NOT] BETWEEN lo AND hi.
	Between struct {
		X, Lo, Hi Expr
		Not       bool
		Off       int
	}
	// In is x [NOT] IN (list).
	In struct {
		X    Expr
		List []Expr
		Not  bool
		Off  int
	}
	// Like is x [NOT] LIKE pattern [ESCAPE esc].
	Like struct {
		X, Pattern, Escape Expr
		Not                bool
		Off                int
	}
	// Case is CASE [operand] WHEN … THEN … [ELSE …] END.
	Case struct {
		Operand Expr // nil for a searched CASE
		Whens   []When
		Else    Expr
		Off     int
	}
	// Cast is CAST(x AS type) or TRY_CAST(x AS type).
	Cast struct {
		X    Expr
		Type TypeName
		Try  bool
		Off  int
	}
	// Call is a function call; Name is upper case. Unit holds the time unit argument of
	// TIMESTAMPDIFF, TIMESTAMPADD and EXTRACT.
	Call struct {
		Name string
		Args []Expr
		Unit string
		Off  int
	}
)

// When is one WHEN … THEN … of a CASE.
type When struct {
	Conds []Expr // a simple CASE may list several values
	Then  Expr
}

// TypeName is a SQL type as CAST names it, e.g. VARCHAR, DECIMAL(10, 2).
type TypeName struct {
	Name   string // upper case
	Params []int
	Off    int
}

func (e *Ident) off() int   { return e.Off }
func (e *Lit) off() int     { return e.Off }
func (e *Unary) off() int   { return e.Off }
func (e *Binary) off() int  { return e.Off }
func (e *Is) off() int      { return e.Off }
func (e *Between) off() int { return e.Off }
func (e *In) off() int      { return e.Off }
func (e *Like) off() int    { return e.Off }
func (e *Case) off() int    { return e.Off }
func (e *Cast) off() int    { return e.Off }
func (e *Call) off() int    { return e.Off }

// Item is one item of a projection: * or an expression with its output name.
type Item struct {
	// Star is set for *; Expr and Name are then empty.
	Star bool
	Expr Expr
	// Name is the alias, or, without one, the column's name for a column reference and
	// the expression's text otherwise (as Calcite names an unaliased expression).
	Name string
	// Aliased is set when the projection gives the name with AS or after the expression.
	Aliased bool
	Off     int
}

// Projection is a parsed projection.
type Projection struct {
	Text  string
	Items []Item
}

// Filter is a parsed filter.
type Filter struct {
	Text string
	Expr Expr
}

func upper(s string) string { return strings.ToUpper(s) }
