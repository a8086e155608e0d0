package schemachange

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ingestkit/ingest/change"
)

// The stored form of the written shapes. Format 1: every table with its columns in written
// order and its key columns.
type stateFile struct {
	Format int          `json:"format"`
	Tables []stateTable `json:"tables"`
}

type stateTable struct {
	DB      string        `json:"db"`
	Table   string        `json:"table"`
	Columns []stateColumn `json:"columns"`
	Key     []string      `json:"key"`
}

type stateColumn struct {
	Name string `json:"name"`
	Type string `json:"type,omitempty"`
}

const stateFormat = 1

// Encode returns the written shapes as opaque JSON, to be stored with the checkpoint of
// the batches applied so far and given back to [New] on restart; nil when the mode keeps
// none. The slice is never modified and stays the same slice until a written shape changes,
// so a caller may compare by identity.
func (m *Mapper) Encode() []byte {
	if !m.tracks() || len(m.tables) == 0 {
		return nil
	}
	if m.encoded != nil {
		return m.encoded
	}
	f := stateFile{Format: stateFormat, Tables: make([]stateTable, 0, len(m.tables))}
	for id, w := range m.tables {
		t := stateTable{DB: id.DB, Table: id.Table, Key: w.keys, Columns: make([]stateColumn, len(w.schema.Columns))}
		for i, c := range w.schema.Columns {
			t.Columns[i] = stateColumn{Name: c.Name, Type: c.SQLType}
		}
		f.Tables = append(f.Tables, t)
	}
	slices.SortFunc(f.Tables, func(a, b stateTable) int {
		if c := strings.Compare(a.DB, b.DB); c != 0 {
			return c
		}
		return strings.Compare(a.Table, b.Table)
	})
	b, err := json.Marshal(f)
	if err != nil { // cannot happen: plain strings
		panic(fmt.Sprintf("schemachange: encode the written shapes: %v", err))
	}
	m.encoded = b
	return b
}

// decode reads stored written shapes and checks them.
func decode(data []byte) ([]*change.Schema, error) {
	var f stateFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("schemachange: stored written shapes: %w", err)
	}
	if f.Format != stateFormat {
		return nil, fmt.Errorf("schemachange: stored written shapes: format %d is not known (this version writes %d)", f.Format, stateFormat)
	}
	shapes := make([]*change.Schema, 0, len(f.Tables))
	for _, t := range f.Tables {
		id := change.TableID{DB: t.DB, Table: t.Table}
		s := &change.Schema{Table: id, Version: 1, Columns: make([]change.Column, len(t.Columns))}
		for i, c := range t.Columns {
			s.Columns[i] = change.Column{Name: c.Name, SQLType: c.Type}
		}
		for _, k := range t.Key {
			i := columnIndex(s.Columns, k)
			if i < 0 {
				return nil, fmt.Errorf("schemachange: stored written shape of %s: key column %q is not one of its columns", id, k)
			}
			s.Key = append(s.Key, i)
		}
		if len(s.Columns) == 0 || len(s.Key) == 0 {
			return nil, fmt.Errorf("schemachange: stored written shape of %s: no columns or no key", id)
		}
		shapes = append(shapes, s)
	}
	return shapes, nil
}
