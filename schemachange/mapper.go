package schemachange

import (
	"slices"

	"github.com/ingestkit/ingest/change"
)

// Mode is a schema change behaviour, as the Mapper applies it.
type Mode uint8

// The modes; see the package documentation.
const (
	Evolve    Mode = iota // EVOLVE and TRY_EVOLVE
	Lenient               // LENIENT
	Ignore                // IGNORE
	Exception             // EXCEPTION
)

var modeNames = [...]string{"EVOLVE", "LENIENT", "IGNORE", "EXCEPTION"}

// String returns the option value of the mode.
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "mode(?)"
}

// Mapper applies a mode to the batches on their way to the sink. It is not safe for
// concurrent use; one goroutine (the runner's forwarder) owns it.
type Mapper struct {
	mode    Mode
	tables  map[change.TableID]*written
	last    *written // the table of the last change: most batches hold one table
	encoded []byte   // Encode's result, nil when stale
}

// written is the shape written for one table (LENIENT, IGNORE), with the mapping from the
// source shape last met.
type written struct {
	schema *change.Schema
	keys   []string // the key column names, in key order
	// from and fromVersion identify the source schema index was built for.
	from        *change.Schema
	fromVersion uint64
	index       []int // index[i] is the source column of written column i; -1: null
	same        bool  // the source shape is the written one: rows pass unchanged
}

// New returns a Mapper for mode, resuming the written shapes of stored (an earlier
// [Mapper.Encode]; nil or empty for none). Only LENIENT and IGNORE keep written shapes; the
// other modes drop what is stored.
func New(mode Mode, stored []byte) (*Mapper, error) {
	m := &Mapper{mode: mode, tables: map[change.TableID]*written{}}
	if !m.tracks() || len(stored) == 0 {
		return m, nil
	}
	shapes, err := decode(stored)
	if err != nil {
		return nil, err
	}
	for _, s := range shapes {
		m.tables[s.Table] = newWritten(s, keyNames(s))
	}
	return m, nil
}

// Mode returns the mapper's mode.
func (m *Mapper) Mode() Mode { return m.mode }

func (m *Mapper) tracks() bool { return m.mode == Lenient || m.mode == Ignore }

// Apply returns b as the sink is to receive it. Under EVOLVE it is b itself. Under
// EXCEPTION it is b, or a [*RefusedError] for its first SchemaChange of a table that
// existed before the statement (changed, dropped or truncated; a table created passes). Under LENIENT and IGNORE the rows of each table are mapped
// onto its written shape (b's rows are not modified: mapped changes get new rows, whose
// values alias b's), or a [*KeyChangedError] stops it.
func (m *Mapper) Apply(b change.Batch) (change.Batch, error) {
	switch m.mode {
	case Exception:
		for i := range b.Changes {
			c := &b.Changes[i]
			if c.Op == change.SchemaChange && c.DDL != nil && c.DDL.Previous != nil {
				return b, &RefusedError{Table: c.Schema.Table, Kind: c.DDL.Kind, Statement: c.DDL.Statement, Position: c.DDL.Position}
			}
		}
		return b, nil
	case Lenient, Ignore:
		return m.mapBatch(b)
	}
	return b, nil
}

func (m *Mapper) mapBatch(b change.Batch) (change.Batch, error) {
	var out []change.Change // b.Changes copied on the first change that is mapped
	for i := range b.Changes {
		c := &b.Changes[i]
		if c.Schema == nil {
			continue
		}
		var prev *change.Schema
		var ddl *change.DDL
		if c.Op == change.SchemaChange {
			if ddl = c.DDL; ddl != nil && ddl.Kind != change.Reshaped {
				continue // dropped or truncated: no new shape
			}
			if ddl != nil {
				prev = ddl.Previous
			}
		}
		w, err := m.prepare(c.Schema, prev, ddl)
		if err != nil {
			return b, err
		}
		if w.same || c.Op == change.SchemaChange {
			continue
		}
		if out == nil {
			out = slices.Clone(b.Changes)
		}
		out[i] = change.Change{Schema: w.schema, Op: c.Op, Before: w.mapRow(c.Before), After: w.mapRow(c.After)}
	}
	if out != nil {
		b.Changes = out
	}
	return b, nil
}

// prepare returns the written shape of s's table, ready to map rows of s: it sets the
// table's written shape when the table is new to the mapper (from prev, the shape before a
// DDL, when there is one), widens it (LENIENT) and checks the key when s is a source shape
// not met before.
func (m *Mapper) prepare(s, prev *change.Schema, ddl *change.DDL) (*written, error) {
	if w := m.last; w != nil && w.from == s && w.fromVersion == s.Version {
		return w, nil
	}
	id := s.Table
	w := m.tables[id]
	if w != nil && w.from == s && w.fromVersion == s.Version {
		m.last = w
		return w, nil
	}
	if w == nil {
		base := s
		if prev != nil && len(prev.Key) > 0 {
			base = prev
		}
		w = newWritten(base, keyNames(base))
		m.tables[id] = w
		m.encoded = nil
	}
	if keys := keyNames(s); !slices.Equal(keys, w.keys) {
		e := &KeyChangedError{Table: id, Mode: m.mode, From: w.keys, To: keys}
		if ddl != nil {
			e.Statement, e.Position = ddl.Statement, ddl.Position
		}
		return nil, e
	}
	if m.mode == Lenient && w.widen(s) {
		m.encoded = nil
	}
	w.build(s)
	m.last = w
	return w, nil
}

func newWritten(s *change.Schema, keys []string) *written {
	w := &written{keys: keys}
	w.set(slices.Clone(s.Columns), s.Table, 1)
	return w
}

// set installs cols as the written columns, as schema version v.
func (w *written) set(cols []change.Column, table change.TableID, v uint64) {
	s := &change.Schema{Table: table, Columns: cols, Version: v}
	for _, k := range w.keys {
		s.Key = append(s.Key, columnIndex(cols, k))
	}
	w.schema, w.from = s, nil
}

// widen adds to the written shape the columns of s it lacks, at the end in s's order, and
// takes s's SQL types; it reports whether the written shape changed.
func (w *written) widen(s *change.Schema) bool {
	cols := slices.Clone(w.schema.Columns)
	changed := false
	for _, c := range s.Columns {
		i := columnIndex(cols, c.Name)
		switch {
		case i < 0:
			cols = append(cols, c)
			changed = true
		case cols[i].SQLType != c.SQLType:
			cols[i].SQLType = c.SQLType
			changed = true
		}
	}
	if changed {
		w.set(cols, s.Table, w.schema.Version+1)
	}
	return changed
}

// build makes the mapping from rows of s.
func (w *written) build(s *change.Schema) {
	cols := w.schema.Columns
	w.index = w.index[:0]
	w.same = len(cols) == len(s.Columns)
	for i, c := range cols {
		j := columnIndex(s.Columns, c.Name)
		w.index = append(w.index, j)
		w.same = w.same && j == i
	}
	w.from, w.fromVersion = s, s.Version
}

// mapRow returns row (of the source shape index was built for) in the written shape.
func (w *written) mapRow(row change.Row) change.Row {
	if row == nil {
		return nil
	}
	out := make(change.Row, len(w.index))
	for i, j := range w.index {
		if j >= 0 && j < len(row) {
			out[i] = row[j]
		}
	}
	return out
}

// keyNames returns the names of s's key columns in key order.
func keyNames(s *change.Schema) []string {
	names := make([]string, 0, len(s.Key))
	for _, k := range s.Key {
		if k >= 0 && k < len(s.Columns) {
			names = append(names, s.Columns[k].Name)
		}
	}
	return names
}

// columnIndex finds a column by its exact name (as Flink CDC matches them): a rename that
// only changes the case is a rename.
func columnIndex(cols []change.Column, name string) int {
	return slices.IndexFunc(cols, func(c change.Column) bool { return c.Name == name })
}
