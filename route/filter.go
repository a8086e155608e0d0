package route

// Filter selects the tables a pipeline captures: those matching the source
// option tables and not matching tables.exclude. Both use [Selector] syntax.
//
// A Filter is immutable and safe for concurrent use.
type Filter struct {
	include *Selector
	exclude *Selector
}

// NewFilter parses the source options tables (required) and tables.exclude
// (may be empty). Errors are [*FieldError]s for source.tables or
// source.tables.exclude.
func NewFilter(tables, exclude string) (*Filter, error) {
	include, err := ParseSelector(tables)
	if err != nil {
		return nil, fieldErr("source", -1, "tables", err)
	}
	f := &Filter{include: include}
	if javaTrim(exclude) == "" {
		return f, nil
	}
	if f.exclude, err = ParseSelector(exclude); err != nil {
		return nil, fieldErr("source", -1, "tables.exclude", err)
	}
	return f, nil
}

// Match reports whether the table db.table is included and not excluded.
func (f *Filter) Match(db, table string) bool {
	return f.include.Match(db, table) && !f.exclude.Match(db, table)
}

// MatchDB reports whether some table of database db could be captured. It
// looks at tables only, not at tables.exclude, so it may return true for a
// database whose tables are all excluded; it never returns false for a
// database that has a matching table.
func (f *Filter) MatchDB(db string) bool {
	return f.include.MatchDB(db)
}
