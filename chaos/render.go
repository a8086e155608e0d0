package chaos

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// This file renders table rows as docs/output.md says ingest must write them. It is written
// from the contract, not from ingest's encoder, so that the comparison is a real check. It
// supports the column types the workload creates and refuses the others.

// Column is a table column as the checker renders it.
type Column struct {
	// Name is the column name.
	Name string
	// Type is information_schema.COLUMNS.DATA_TYPE (int, bigint, varchar, decimal, datetime, …).
	Type string
}

// Field is one rendered column of a row: the column name and the JSON value bytes.
type Field struct {
	Name  string
	Value []byte
}

// Row is a rendered table row: its key JSON and its fields in column order.
type Row struct {
	Key    []byte
	Fields []Field
}

// Value returns the row JSON: every field, in column order, compact.
func (r Row) Value() []byte { return renderObject(r.Fields) }

// Table is the rendered content of a table at one moment.
type Table struct {
	Columns []Column
	Key     []string
	// Rows maps the key JSON to the row.
	Rows map[string]Row
}

// ReadTable reads db.table with a plain SELECT and renders every row.
func ReadTable(ctx context.Context, conn *sql.DB, db, table string) (*Table, error) {
	cols, err := tableColumns(ctx, conn, db, table)
	if err != nil {
		return nil, err
	}
	key, err := primaryKey(ctx, conn, db, table)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = quoteIdent(c.Name)
	}
	q := fmt.Sprintf("SELECT %s FROM %s.%s", strings.Join(names, ","), quoteIdent(db), quoteIdent(table))
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("checker: %s: %w", q, err)
	}
	defer rows.Close()
	t := &Table{Columns: cols, Key: key, Rows: map[string]Row{}}
	raw := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("checker: read %s.%s: %w", db, table, err)
		}
		r, err := renderRow(cols, key, raw)
		if err != nil {
			return nil, fmt.Errorf("checker: %s.%s: %w", db, table, err)
		}
		t.Rows[string(r.Key)] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("checker: read %s.%s: %w", db, table, err)
	}
	return t, nil
}

func tableColumns(ctx context.Context, conn *sql.DB, db, table string) ([]Column, error) {
	rows, err := conn.QueryContext(ctx, `SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, db, table)
	if err != nil {
		return nil, fmt.Errorf("checker: columns of %s.%s: %w", db, table, err)
	}
	defer rows.Close()
	var cols []Column
	for rows.Next() {
		var c Column
		if err := rows.Scan(&c.Name, &c.Type); err != nil {
			return nil, fmt.Errorf("checker: columns of %s.%s: %w", db, table, err)
		}
		c.Type = strings.ToLower(c.Type)
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("checker: columns of %s.%s: %w", db, table, err)
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("checker: table %s.%s not found", db, table)
	}
	return cols, nil
}

func primaryKey(ctx context.Context, conn *sql.DB, db, table string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION`, db, table)
	if err != nil {
		return nil, fmt.Errorf("checker: primary key of %s.%s: %w", db, table, err)
	}
	defer rows.Close()
	var key []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("checker: primary key of %s.%s: %w", db, table, err)
		}
		key = append(key, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("checker: primary key of %s.%s: %w", db, table, err)
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("checker: %s.%s has no primary key", db, table)
	}
	return key, nil
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// renderRow renders one row read with the text protocol (nil for NULL).
func renderRow(cols []Column, key []string, raw []sql.RawBytes) (Row, error) {
	r := Row{Fields: make([]Field, len(cols))}
	for i, c := range cols {
		v, err := RenderValue(c.Type, raw[i])
		if err != nil {
			return Row{}, fmt.Errorf("column %s: %w", c.Name, err)
		}
		r.Fields[i] = Field{Name: c.Name, Value: v}
	}
	keyFields := make([]Field, len(key))
	for i, k := range key {
		f, ok := fieldOf(r.Fields, k)
		if !ok {
			return Row{}, fmt.Errorf("key column %s not selected", k)
		}
		keyFields[i] = f
	}
	r.Key = renderObject(keyFields)
	return r, nil
}

func fieldOf(fields []Field, name string) (Field, bool) {
	for _, f := range fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// renderObject writes fields as a compact JSON object in their order.
func renderObject(fields []Field) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(QuoteJSON(f.Name))
		b.WriteByte(':')
		b.Write(f.Value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// RenderValue renders a value of a column of type typ as SELECT returns it in the text
// protocol (nil for NULL) by the wire contract.
func RenderValue(typ string, raw []byte) ([]byte, error) {
	if raw == nil {
		return []byte("null"), nil
	}
	switch typ {
	case "tinyint", "smallint", "mediumint", "int", "bigint":
		// Signed integers print as numbers. (TINYINT(1) would be a boolean: not used.)
		if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
			return nil, fmt.Errorf("integer %q: %w", raw, err)
		}
		return append([]byte(nil), raw...), nil
	case "decimal":
		// The exact text at the column's scale, as the server prints it.
		return append([]byte(nil), raw...), nil
	case "char", "varchar", "text", "tinytext", "mediumtext", "longtext":
		return QuoteJSON(string(raw)), nil
	case "datetime":
		return renderDatetime(string(raw))
	default:
		return nil, fmt.Errorf("type %s is not supported by the checker", typ)
	}
}

// renderDatetime renders "yyyy-MM-dd HH:mm:ss[.ffffff]": the fraction without its trailing
// zeros (and without the dot when nothing is left); a zero year, month or day gives null.
func renderDatetime(s string) ([]byte, error) {
	if len(s) < len("2006-01-02 15:04:05") || s[4] != '-' || s[7] != '-' || s[10] != ' ' {
		return nil, fmt.Errorf("datetime %q: unexpected form", s)
	}
	if s[:4] == "0000" || s[5:7] == "00" || s[8:10] == "00" {
		return []byte("null"), nil
	}
	whole, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	if frac != "" {
		whole += "." + frac
	}
	return QuoteJSON(whole), nil
}

// QuoteJSON quotes s as the contract says: `"` and `\` escaped, U+0008, U+0009, U+000A,
// U+000C, U+000D as \b \t \n \f \r, the other characters below U+0020 as \u00XX with upper-case
// hex, everything else as raw UTF-8.
func QuoteJSON(s string) []byte {
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
