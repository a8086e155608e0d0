package transform

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/suggest"
)

// The metadata columns of Flink CDC's transform (its MetadataColumns).
const (
	MetaNamespace = "__namespace_name__"
	MetaSchema    = "__schema_name__"
	MetaTable     = "__table_name__"
	MetaEventType = "__data_event_type__"
)

var metaColumns = []string{MetaNamespace, MetaSchema, MetaTable, MetaEventType}

// env is what an evaluation reads: the row and its metadata, and where results go.
type env struct {
	row change.Row
	// db and table are the row's table names; op its event type: "+I", "-U", "+U", "-D".
	db, table, op []byte
	now           time.Time
	loc           *time.Location
	// arena holds the bytes of computed strings; it is never reused, only replaced, so
	// values stay valid after later rows.
	arena []byte
	vals  []change.Value
	err   error
}

// fail records the first evaluation error of a row.
func (e *env) fail(format string, args ...any) change.Value {
	if e.err == nil {
		e.err = fmt.Errorf(format, args...)
	}
	return change.Value{}
}

// begin starts a computed byte string in the arena; end returns it.
func (e *env) begin() int {
	if cap(e.arena)-len(e.arena) < 256 {
		e.arena = make([]byte, 0, 32<<10)
	}
	return len(e.arena)
}

func (e *env) end(start int) []byte { return e.arena[start:len(e.arena):len(e.arena)] }

// str returns a String value of the bytes appended by fn.
func (e *env) str(fn func([]byte) []byte) change.Value {
	start := e.begin()
	e.arena = fn(e.arena)
	return change.StringValue(e.end(start))
}

// row returns a fresh row of n values from a shared chunk.
func (e *env) newRow(n int) change.Row {
	if cap(e.vals)-len(e.vals) < n {
		e.vals = make([]change.Value, 0, max(512, n))
	}
	start := len(e.vals)
	e.vals = e.vals[:start+n]
	return e.vals[start : start+n : start+n]
}

type evalFn func(*env) change.Value

// node is a compiled expression.
type node struct {
	typ  Type
	eval evalFn
	// konst, when set, says that the node is a literal, whose value is k.
	konst bool
	k     change.Value
	off   int
	// col is 1 + the index of the source column that the node reads as it is, 0 when the
	// node computes its value.
	col int
}

func constant(t Type, v change.Value, off int) *node {
	return &node{typ: t, konst: true, k: v, off: off, eval: func(*env) change.Value { return v }}
}

// compiler binds expressions to one table shape.
type compiler struct {
	text  string
	cols  []change.Column
	types []Type
	// outputs are the projection's items by name, which a filter may reference.
	outputs map[string]*node
	usesNow bool
	// open, when set, makes every name a column of unknown type ([Check]).
	open bool
}

func (c *compiler) errAt(off int, format string, args ...any) error {
	return errAt(c.text, off, format, args...)
}

func (c *compiler) compile(x Expr) (*node, error) {
	switch x := x.(type) {
	case *Ident:
		return c.ident(x)
	case *Lit:
		return c.literal(x)
	case *Unary:
		return c.unary(x)
	case *Binary:
		return c.binary(x)
	case *Is:
		return c.is(x)
	case *Between:
		return c.between(x)
	case *In:
		return c.in(x)
	case *Like:
		return c.like(x)
	case *Case:
		return c.caseExpr(x)
	case *Cast:
		return c.cast(x)
	case *Call:
		return c.call(x)
	}
	return nil, fmt.Errorf("transform: unknown expression %T", x)
}

func (c *compiler) compileAll(xs []Expr) ([]*node, error) {
	out := make([]*node, len(xs))
	for i, x := range xs {
		n, err := c.compile(x)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// column finds a column: by its exact name, else by the one name equal to it ignoring
// case (MySQL's column names ignore case).
func (c *compiler) column(name string) int {
	if i := slices.IndexFunc(c.cols, func(col change.Column) bool { return col.Name == name }); i >= 0 {
		return i
	}
	found := -1
	for i, col := range c.cols {
		if strings.EqualFold(col.Name, name) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

func (c *compiler) ident(x *Ident) (*node, error) {
	if c.outputs != nil {
		if n, ok := c.outputs[x.Name]; ok {
			return n, nil
		}
	}
	if i := c.column(x.Name); i >= 0 {
		return &node{typ: c.types[i], off: x.Off, eval: columnEval(i), col: i + 1}, nil
	}
	switch x.Name {
	case MetaNamespace:
		// MySQL tables have no namespace in Flink CDC (TableId of schema and table).
		return &node{typ: TString, off: x.Off, eval: func(*env) change.Value { return change.Value{} }}, nil
	case MetaSchema:
		return &node{typ: TString, off: x.Off, eval: func(e *env) change.Value { return change.StringValue(e.db) }}, nil
	case MetaTable:
		return &node{typ: TString, off: x.Off, eval: func(e *env) change.Value { return change.StringValue(e.table) }}, nil
	case MetaEventType:
		return &node{typ: TString, off: x.Off, eval: func(e *env) change.Value { return change.StringValue(e.op) }}, nil
	}
	if c.open {
		return &node{typ: TAny, off: x.Off, eval: func(*env) change.Value { return change.Value{} }}, nil
	}
	names := make([]string, 0, len(c.cols)+len(c.outputs)+len(metaColumns))
	for _, col := range c.cols {
		names = append(names, col.Name)
	}
	for n := range c.outputs {
		names = append(names, n)
	}
	slices.Sort(names[len(c.cols):])
	names = append(names, metaColumns...)
	return nil, c.errAt(x.Off, "unknown column %q%s", x.Name, suggest.DidYouMean(x.Name, names))
}
