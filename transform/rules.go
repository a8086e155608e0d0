package transform

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/route"
)

// Rule is one item of the transform block, parsed.
type Rule struct {
	// SourceTable is the table pattern in route.Selector syntax.
	SourceTable string
	// Projection and Filter are nil when the item does not set them.
	Projection *Projection
	Filter     *Filter
	// SoftDelete is converter-after-transform: SOFT_DELETE.
	SoftDelete bool
}

// Active reports whether the rule changes rows (it has a projection, a filter or a
// converter); a rule of only primary-keys does not.
func (r *Rule) Active() bool { return r.Projection != nil || r.Filter != nil || r.SoftDelete }

// Rules applies the transform block to changes: the first rule whose source-table matches
// a table decides (Flink CDC's "Classification mapping", docs/pipeline.md), also when it
// has no projection or filter. Programs are compiled once per table shape.
//
// Rules is not safe for concurrent use.
type Rules struct {
	rules []rule
	loc   *time.Location
	progs map[change.TableID]*compiled
	last  *compiled
}

type rule struct {
	Rule
	sel *route.Selector
}

type compiled struct {
	from    *change.Schema
	version uint64
	prog    *Program // nil: no active rule matches
}

// TableError is a rule that does not fit a table's shape: the rule's index, the table,
// and the [*Error] inside the projection or filter.
type TableError struct {
	Index int
	Table change.TableID
	Err   error
}

func (e *TableError) Error() string {
	what := "projection"
	var ee *Error
	if errors.As(e.Err, &ee) && ee.Filter {
		what = "filter"
	}
	return fmt.Sprintf("transform[%d].%s for table %s: %v", e.Index, what, e.Table, e.Err)
}

func (e *TableError) Unwrap() error { return e.Err }

// NewRules parses the rules' source-table patterns. loc is pipeline.local-time-zone
// (nil: time.Local).
func NewRules(rules []Rule, loc *time.Location) (*Rules, error) {
	r := &Rules{loc: loc, progs: map[change.TableID]*compiled{}}
	for i, ru := range rules {
		sel, err := route.ParseSelector(ru.SourceTable)
		if err != nil {
			return nil, fmt.Errorf("transform[%d].source-table: %w", i, err)
		}
		r.rules = append(r.rules, rule{Rule: ru, sel: sel})
	}
	return r, nil
}

// Active reports whether any rule changes rows.
func (r *Rules) Active() bool {
	return slices.ContainsFunc(r.rules, func(ru rule) bool { return ru.Active() })
}

// Match returns the index of the rule that decides for the table, or -1.
func (r *Rules) Match(id change.TableID) int {
	for i, ru := range r.rules {
		if ru.sel.Match(id.DB, id.Table) {
			return i
		}
	}
	return -1
}

// Program returns the program for the table shape s, compiling it when s is new; nil when
// no rule that changes rows decides for the table. Errors are [*TableError]s.
func (r *Rules) Program(s *change.Schema) (*Program, error) {
	if c := r.last; c != nil && c.from == s && c.version == s.Version {
		return c.prog, nil
	}
	if c := r.progs[s.Table]; c != nil && c.from == s && c.version == s.Version {
		r.last = c
		return c.prog, nil
	}
	c := &compiled{from: s, version: s.Version}
	if i := r.Match(s.Table); i >= 0 && r.rules[i].Active() {
		ru := r.rules[i]
		p, err := Compile(ru.Projection, ru.Filter, s, Options{Location: r.loc, SoftDelete: ru.SoftDelete})
		if err != nil {
			return nil, &TableError{Index: i, Table: s.Table, Err: err}
		}
		c.prog = p
	}
	r.progs[s.Table] = c
	r.last = c
	return c.prog, nil
}

// Apply returns b as the sink is to receive it: each row change of a table that an active
// rule decides for is projected and filtered ([Program.Apply]); b itself is not modified.
// A schema change passes as it is, after its new shape is compiled (a DDL that drops a
// column the rule needs stops the pipeline here).
func (r *Rules) Apply(b change.Batch) (change.Batch, error) {
	if len(r.rules) == 0 {
		return b, nil
	}
	var out []change.Change // made on the first change that is transformed
	for i := range b.Changes {
		c := &b.Changes[i]
		if c.Schema == nil || c.Op == change.SchemaChange && (c.DDL != nil && c.DDL.Kind != change.Reshaped) {
			if out != nil {
				out = append(out, *c)
			}
			continue
		}
		p, err := r.Program(c.Schema)
		if err != nil {
			return b, err
		}
		if p == nil || c.Op == change.SchemaChange {
			if out != nil {
				out = append(out, *c)
			}
			continue
		}
		if out == nil {
			out = make([]change.Change, i, len(b.Changes))
			copy(out, b.Changes[:i])
		}
		t, ok, err := p.Apply(*c)
		if err != nil {
			return b, err
		}
		if ok {
			out = append(out, t)
		}
	}
	if out != nil {
		b.Changes = out
	}
	return b, nil
}
