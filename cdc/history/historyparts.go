package history

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Part is one table's part of a schema history ([Source.SchemaHistory]): Key names
// the table (database and table, escaped, joined by a '.': it has no '/' and one '.'),
// Value is the table's versions. A history is stored as its parts so that no stored record
// grows with the number of tables.
type Part struct {
	Key   string
	Value []byte
}

// Split splits a schema history into its tables' parts, in the history's order.
func Split(history []byte) ([]Part, error) {
	if len(history) == 0 {
		return nil, nil
	}
	var f struct {
		Format int               `json:"format"`
		Tables []json.RawMessage `json:"tables"`
	}
	if err := json.Unmarshal(history, &f); err != nil {
		return nil, fmt.Errorf("cdc: schema history: %w", err)
	}
	if f.Format != historyFormat {
		return nil, fmt.Errorf("cdc: schema history: format %d is not known (this version writes %d)", f.Format, historyFormat)
	}
	parts := make([]Part, len(f.Tables))
	for i, raw := range f.Tables {
		var t historyTable
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("cdc: schema history: %w", err)
		}
		parts[i] = Part{Key: historyKey(t.DB, t.Table), Value: raw}
	}
	return parts, nil
}

// Join makes a schema history of its parts (as Split returned them, in any
// order); nil for no parts.
func Join(parts []Part) []byte {
	if len(parts) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{"format":%d,"tables":[`, historyFormat)
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(p.Value)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// historyKey is a table's part key: its database and table names escaped so that neither
// holds a '/' or a '.', joined by a '.'.
func historyKey(db, table string) string {
	esc := func(s string) string { return strings.ReplaceAll(url.PathEscape(s), ".", "%2E") }
	return esc(db) + "." + esc(table)
}
