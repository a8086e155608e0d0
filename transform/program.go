package transform

import (
	"fmt"
	"slices"
	"time"

	"github.com/ingestkit/ingest/change"
)

// Program is a projection and a filter compiled for one table shape. It is not safe for
// concurrent use.
type Program struct {
	in  *change.Schema
	out *change.Schema
	// cols computes each output column; identity is set when the projection is the
	// source row as it is (no projection, or one of only *).
	cols     []*node
	identity bool
	filter   *node
	// filterText is the filter's text, for plan.
	filterText string
	usesNow    bool
	soft       bool
	env        env
}

// Options are the settings a compilation needs besides the expressions.
type Options struct {
	// Location is the local time zone (pipeline.local-time-zone); nil is time.Local.
	Location *time.Location
	// SoftDelete is converter-after-transform: SOFT_DELETE.
	SoftDelete bool
}

// Column is an output column of a projection, for plan.
type Column struct {
	Name string
	Type Type
	// Expr is the canonical text of a computed column's expression, "" for a source column.
	Expr string
}

// Compile binds proj and filter (either may be nil) to the table shape s. The output key
// is s's key: the projection must keep each key column under its own name. Errors are
// [*Error]s whose position is inside proj's or filter's text; Error.Filter tells which.
func Compile(proj *Projection, filter *Filter, s *change.Schema, opts Options) (*Program, error) {
	p := &Program{in: s, soft: opts.SoftDelete}
	p.env.loc = opts.Location
	if p.env.loc == nil {
		p.env.loc = time.Local
	}
	p.env.db, p.env.table = []byte(s.Table.DB), []byte(s.Table.Table)
	types := make([]Type, len(s.Columns))
	for i, c := range s.Columns {
		types[i] = columnType(c.SQLType)
	}
	out := &change.Schema{Table: s.Table, Version: s.Version}
	outputs := map[string]*node{}
	if proj == nil {
		p.identity = true
		out.Columns = s.Columns
	} else {
		c := &compiler{text: proj.Text, cols: s.Columns, types: types}
		identity := true
		add := func(col change.Column, n *node) {
			if i := slices.IndexFunc(out.Columns, func(o change.Column) bool { return o.Name == col.Name }); i >= 0 {
				out.Columns[i], p.cols[i] = col, n // a later column of the same name replaces it
				identity = false
			} else {
				out.Columns = append(out.Columns, col)
				p.cols = append(p.cols, n)
			}
			outputs[col.Name] = n
		}
		for _, it := range proj.Items {
			if it.Star {
				for i, col := range s.Columns {
					add(col, &node{typ: types[i], off: it.Off, eval: columnEval(i), col: i + 1})
				}
				continue
			}
			if slices.Contains(metaColumns, it.Name) && it.Aliased {
				return nil, errAt(proj.Text, it.Off, "column name %s is reserved for the metadata column; choose another alias", it.Name)
			}
			id, isIdent := it.Expr.(*Ident)
			if !isIdent && !it.Aliased {
				return nil, errAt(proj.Text, it.Off, "computed column %s needs a name: write %s AS name", it.Name, it.Name)
			}
			n, err := c.compile(it.Expr)
			if err != nil {
				return nil, err
			}
			col := change.Column{Name: it.Name, SQLType: n.typ.sqlType()}
			if isIdent {
				if i := c.column(id.Name); i >= 0 {
					col.SQLType = s.Columns[i].SQLType
					if !it.Aliased {
						col.Name = s.Columns[i].Name
					}
				}
			}
			identity = false
			add(col, n)
		}
		p.usesNow = c.usesNow
		if identity && len(out.Columns) == len(s.Columns) {
			p.identity, p.cols = true, nil
		}
	}
	// The key: each key column of s, by name, must be an output column that is the source
	// column itself.
	for _, k := range s.Key {
		name := s.Columns[k].Name
		i := slices.IndexFunc(out.Columns, func(o change.Column) bool { return o.Name == name })
		if i < 0 || !p.identity && p.cols[i].col != k+1 {
			return nil, &Error{Line: 1, Col: 1, Msg: fmt.Sprintf("projection does not keep key column %q as it is; "+
				"the topic's records are keyed by it: add %s to the projection (or set primary-keys)", name, name)}
		}
		out.Key = append(out.Key, i)
	}
	p.out = out
	if filter != nil {
		c := &compiler{text: filter.Text, cols: s.Columns, types: types, outputs: outputs}
		n, err := c.compile(filter.Expr)
		if err != nil {
			if e, ok := err.(*Error); ok {
				e.Filter = true
			}
			return nil, err
		}
		if err := c.wantBool(n, "a filter"); err != nil {
			e := err.(*Error)
			e.Filter = true
			return nil, e
		}
		p.filter, p.filterText = n, filter.Text
		p.usesNow = p.usesNow || c.usesNow
	}
	return p, nil
}

// Check checks what can be checked of proj and filter (either may be nil) without the
// table's shape: the functions and their argument counts, the constant arguments
// (regular expressions, formats), the names of computed columns. Columns are checked by
// [Compile].
func Check(proj *Projection, filter *Filter) error {
	if proj != nil {
		c := &compiler{text: proj.Text, open: true}
		for _, it := range proj.Items {
			if it.Star {
				continue
			}
			if slices.Contains(metaColumns, it.Name) && it.Aliased {
				return errAt(proj.Text, it.Off, "column name %s is reserved for the metadata column; choose another alias", it.Name)
			}
			if _, isIdent := it.Expr.(*Ident); !isIdent && !it.Aliased {
				return errAt(proj.Text, it.Off, "computed column %s needs a name: write %s AS name", it.Name, it.Name)
			}
			if _, err := c.compile(it.Expr); err != nil {
				return err
			}
		}
	}
	if filter != nil {
		c := &compiler{text: filter.Text, open: true}
		if _, err := c.compile(filter.Expr); err != nil {
			if e, ok := err.(*Error); ok {
				e.Filter = true
			}
			return err
		}
	}
	return nil
}

func columnEval(i int) evalFn { return func(e *env) change.Value { return e.row[i] } }

// Schema returns the output shape: the topic's columns and key.
func (p *Program) Schema() *change.Schema { return p.out }

// FilterText is the filter as the file gives it, "" without one.
func (p *Program) FilterText() string { return p.filterText }

// Columns describes the output columns, for plan.
func (p *Program) Columns() []Column {
	cols := make([]Column, len(p.out.Columns))
	for i, c := range p.out.Columns {
		t := columnType(c.SQLType)
		if p.cols != nil {
			t = p.cols[i].typ
		}
		cols[i] = Column{Name: c.Name, Type: t}
	}
	return cols
}

var (
	opInsert      = []byte("+I")
	opUpdateAfter = []byte("+U")
	opUpdateBefor = []byte("-U")
	opDelete      = []byte("-D")
)

// passes reports whether row passes the filter, evaluated as op.
func (p *Program) passes(row change.Row, op []byte) (bool, error) {
	if p.filter == nil {
		return true, nil
	}
	e := &p.env
	e.row, e.op, e.err = row, op, nil
	v := p.filter.eval(e)
	if e.err != nil {
		return false, fmt.Errorf("transform: %s: filter: %w", p.in.Table, e.err)
	}
	return !v.IsNull() && truth(v), nil
}

// project returns row in the output shape, evaluated as op.
func (p *Program) project(row change.Row, op []byte) (change.Row, error) {
	if p.identity || row == nil {
		return row, nil
	}
	e := &p.env
	e.row, e.op, e.err = row, op, nil
	out := e.newRow(len(p.cols))
	for i, n := range p.cols {
		out[i] = n.eval(e)
		if e.err != nil {
			return nil, fmt.Errorf("transform: %s: column %s: %w", p.in.Table, p.out.Columns[i].Name, e.err)
		}
	}
	return out, nil
}

// Apply transforms one row change into at most one change of the output shape; ok is
// false when nothing is to be written. A change whose rows leave or enter the filter
// becomes a delete or an insert, as Flink CDC's PostTransformOperator does: an update
// whose before image passes and after image does not is a delete of the before image, the
// opposite an insert of the after image, neither nothing; an insert or a delete whose row
// does not pass is dropped. With SOFT_DELETE a delete becomes an insert of the before image
// (its __data_event_type__ is "-D", or "-U" for an update that left the filter).
func (p *Program) Apply(c change.Change) (change.Change, bool, error) {
	if p.usesNow {
		p.env.now = time.Now()
	}
	out := change.Change{Schema: p.out, Op: c.Op}
	switch c.Op {
	case change.Insert:
		ok, err := p.passes(c.After, opInsert)
		if err != nil || !ok {
			return out, false, err
		}
		out.After, err = p.project(c.After, opInsert)
		return out, err == nil, err
	case change.Delete:
		ok, err := p.passes(c.Before, opDelete)
		if err != nil || !ok {
			return out, false, err
		}
		out.Before, err = p.project(c.Before, opDelete)
		return p.soften(out), err == nil, err
	case change.Update:
		after, err := p.passes(c.After, opUpdateAfter)
		if err != nil {
			return out, false, err
		}
		before := after
		if c.Before != nil {
			if before, err = p.passes(c.Before, opUpdateBefor); err != nil {
				return out, false, err
			}
		}
		switch {
		case before && after:
			if out.Before, err = p.project(c.Before, opUpdateBefor); err == nil {
				out.After, err = p.project(c.After, opUpdateAfter)
			}
		case after: // enters the filter
			out.Op = change.Insert
			out.After, err = p.project(c.After, opUpdateAfter)
		case before || c.Before == nil: // leaves it (or may have: no before image)
			out.Op = change.Delete
			row, op := c.Before, opUpdateBefor
			if row == nil {
				row, op = c.After, opUpdateAfter
			}
			out.Before, err = p.project(row, op)
			out = p.soften(out)
		default:
			return out, false, nil
		}
		return out, err == nil, err
	}
	return out, true, nil
}

func (p *Program) soften(c change.Change) change.Change {
	if !p.soft || c.Op != change.Delete {
		return c
	}
	return change.Change{Schema: c.Schema, Op: change.Insert, After: c.Before}
}
