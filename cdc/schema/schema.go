package schema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/ingestkit/ingest/change"
)

// Table is a captured table's description at one point of the binlog: the neutral schema
// the sink sees and the per-column decoding facts.
type Table struct {
	Schema  *change.Schema
	Columns []Column
}

// TableShape is what information_schema says of a table: the facts the binlog cannot carry
// (display widths, the JSON check of MariaDB, column SQL types) and the whole shape when
// the binlog carries no names (binlog_row_metadata=MINIMAL). The schema history keeps one
// per table and DDL (see history.go), so a TableShape in a history version is never modified:
// DDL applies to a clone. It is stored as JSON with the history.
type TableShape struct {
	Columns    []InfoColumn `json:"columns"`
	PrimaryKey []string     `json:"key,omitempty"`
	// Charset is the table's default character set, which columns added without one take
	// ("" when unknown).
	Charset string `json:"charset,omitempty"`
	// Checks are the table-level CHECK constraints that validate columns with json_valid
	// (MariaDB JSON columns declared as LONGTEXT with a table constraint).
	Checks []JSONCheck `json:"checks,omitempty"`
}

// JSONCheck is a table-level CHECK constraint naming columns in json_valid(col).
type JSONCheck struct {
	Name    string   `json:"name,omitempty"` // "" when the statement gave none
	Columns []string `json:"columns"`
}

// InfoColumn is one row of information_schema.COLUMNS (plus the MariaDB JSON check).
type InfoColumn struct {
	Name       string `json:"name"`
	DataType   string `json:"data_type"`         // DATA_TYPE, lower case: "int", "longtext", "enum", …
	ColumnType string `json:"column_type"`       // COLUMN_TYPE: "int(10) unsigned", "tinyint(1)", "enum('a','b')"
	Charset    string `json:"charset,omitempty"` // CHARACTER_SET_NAME, "" for non-text columns
	Scale      int    `json:"scale,omitempty"`   // NUMERIC_SCALE or DATETIME_PRECISION
	Length     int    `json:"length,omitempty"`  // CHARACTER_OCTET_LENGTH (BINARY) or NUMERIC_PRECISION (BIT)
	JSON       bool   `json:"json,omitempty"`    // MariaDB: a CHECK (json_valid(`col`)) exists
	// ColumnCheck says the JSON check is the column's own (MariaDB's JSON type, or CHECK in
	// the column definition): MODIFY and CHANGE replace it with the new definition's.
	ColumnCheck bool   `json:"column_check,omitempty"`
	NotNull     bool   `json:"not_null,omitempty"` // IS_NULLABLE = 'NO'
	Comment     string `json:"comment,omitempty"`  // COLUMN_COMMENT
}

// Column returns the info of the named column, or nil.
func (ti *TableShape) Column(name string) *InfoColumn {
	if ti == nil {
		return nil
	}
	if i := ti.Index(name); i >= 0 {
		return &ti.Columns[i]
	}
	return nil
}

// Index returns the position of the named column (names are case-insensitive), or -1.
func (ti *TableShape) Index(name string) int {
	return slices.IndexFunc(ti.Columns, func(c InfoColumn) bool { return strings.EqualFold(c.Name, name) })
}

// Clone returns a deep copy.
func (ti *TableShape) Clone() *TableShape {
	cp := &TableShape{Columns: slices.Clone(ti.Columns), PrimaryKey: slices.Clone(ti.PrimaryKey), Charset: ti.Charset}
	for _, c := range ti.Checks {
		cp.Checks = append(cp.Checks, JSONCheck{Name: c.Name, Columns: slices.Clone(c.Columns)})
	}
	return cp
}

// RenameReferences renames a column in the primary key and the JSON checks, as the server
// does when a column is renamed.
func (ti *TableShape) RenameReferences(old, name string) {
	rename := func(names []string) {
		for i, n := range names {
			if strings.EqualFold(n, old) {
				names[i] = name
			}
		}
	}
	rename(ti.PrimaryKey)
	for _, c := range ti.Checks {
		rename(c.Columns)
	}
}

// DropCheck applies DROP CONSTRAINT name (DROP CHECK name). A column's own check is named
// after the column. An error says the constraint may be an unnamed JSON check whose
// server-given name is not known.
func (ti *TableShape) DropCheck(name string) error {
	if i := slices.IndexFunc(ti.Checks, func(c JSONCheck) bool { return strings.EqualFold(c.Name, name) }); i >= 0 {
		ti.Checks = slices.Delete(ti.Checks, i, i+1)
		return nil
	}
	if c := ti.Column(name); c != nil && c.ColumnCheck {
		c.ColumnCheck = false
		return nil
	}
	if slices.ContainsFunc(ti.Checks, func(c JSONCheck) bool { return c.Name == "" }) {
		return fmt.Errorf("DROP CONSTRAINT %s: it may be an unnamed JSON check", name)
	}
	return nil // another kind of constraint
}

// RefreshJSON sets each column's JSON flag from its own check and the table's checks.
func (ti *TableShape) RefreshJSON() {
	for i := range ti.Columns {
		c := &ti.Columns[i]
		c.JSON = c.ColumnCheck
		for _, chk := range ti.Checks {
			if slices.ContainsFunc(chk.Columns, func(n string) bool { return strings.EqualFold(n, c.Name) }) {
				c.JSON = true
			}
		}
	}
}

// Options are the table-shaping settings of a Config.
type Options struct {
	TinyInt1AsBool bool
	Keys           func(db, table string) ([]string, bool)
	Collations     map[uint64]string
}

// TableFromMap builds a table description from a TABLE_MAP event and the table's shape at
// that point of the binlog (info, from the schema history; nil when not known). With
// binlog_row_metadata=FULL the binlog's column names are authoritative and info completes
// them by name; without names (MINIMAL, NO_LOG) the columns are info's, by position, and
// info's types must agree with the binlog's.
func TableFromMap(tm *replication.TableMapEvent, info *TableShape, opts Options) (*Table, error) {
	id := change.TableID{DB: string(tm.Schema), Table: string(tm.Table)}
	names := tm.ColumnNameString()
	byPosition := len(names) == 0
	if byPosition { // binlog_row_metadata=MINIMAL or NO_LOG: names only from the schema history
		if info == nil || len(info.Columns) != int(tm.ColumnCount) {
			return nil, fmt.Errorf("table %s: the binlog carries no column names (binlog_row_metadata is not FULL), it has %d columns and the schema history has %s; "+
				"set binlog_row_metadata=FULL, or restart from a position stored with its schema history",
				id, tm.ColumnCount, describeInfoCount(info))
		}
		for _, ic := range info.Columns {
			names = append(names, ic.Name)
		}
	}
	cols := make([]Column, tm.ColumnCount)
	unsigned, collations, enumSet := tm.UnsignedMap(), tm.CollationMap(), tm.EnumSetCollationMap()
	enums, sets := tm.EnumStrValueMap(), tm.SetStrValueMap()
	for i := range cols {
		var ic *InfoColumn
		if byPosition {
			ic = &info.Columns[i]
			if !binlogTypeMatches(tm.ColumnType[i], tm.ColumnMeta[i], ic) {
				return nil, fmt.Errorf("table %s: column %d (%s) is a %s in the schema history but binlog type %d; the history is out of step with the binlog (set binlog_row_metadata=FULL)",
					id, i+1, ic.Name, ic.ColumnType, tm.ColumnType[i])
			}
		} else {
			ic = info.Column(names[i])
		}
		coll, known := collations[i]
		if !known {
			coll, known = enumSet[i]
		}
		labels := enums[i]
		if labels == nil {
			labels = sets[i]
		}
		isUnsigned := unsigned[i]
		if unsigned == nil && ic != nil { // NO_LOG: no signedness in the binlog
			isUnsigned = strings.Contains(ic.ColumnType, "unsigned")
		}
		col, err := columnFromMap(tm.ColumnType[i], tm.ColumnMeta[i], binlogFacts{
			Name: names[i], Unsigned: isUnsigned, Collation: coll, collationKnown: known, Labels: labels,
		}, ic, opts)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", id, err)
		}
		if known, nullable := tm.Nullable(i); known { // the TABLE_MAP's null bits are authoritative
			col.NotNull = !nullable
		}
		cols[i] = col
	}
	var pk []string
	for _, i := range tm.PrimaryKey {
		if int(i) < len(names) {
			pk = append(pk, names[i])
		}
	}
	if len(pk) == 0 && info != nil {
		pk = info.PrimaryKey
	}
	t, err := newTable(id, cols, pk, opts)
	if err != nil {
		return nil, err
	}
	for _, k := range t.Schema.Key {
		if known, nullable := tm.Nullable(k); known && nullable {
			return nil, &NullableKeyError{Table: id, Column: t.Schema.Columns[k].Name}
		}
	}
	return t, nil
}

// binlogTypeMatches reports whether a binlog column type can be the column info describes:
// the check that a schema history read by position is in step with the binlog.
func binlogTypeMatches(tp byte, meta uint16, ic *InfoColumn) bool {
	tp, _ = realType(tp, meta)
	var want []string
	switch tp {
	case mysql.MYSQL_TYPE_TINY:
		want = []string{"tinyint", "bool", "boolean"}
	case mysql.MYSQL_TYPE_SHORT:
		want = []string{"smallint"}
	case mysql.MYSQL_TYPE_INT24:
		want = []string{"mediumint"}
	case mysql.MYSQL_TYPE_LONG:
		want = []string{"int", "integer"}
	case mysql.MYSQL_TYPE_LONGLONG:
		want = []string{"bigint"}
	case mysql.MYSQL_TYPE_YEAR:
		want = []string{"year"}
	case mysql.MYSQL_TYPE_FLOAT:
		want = []string{"float"}
	case mysql.MYSQL_TYPE_DOUBLE:
		want = []string{"double", "real", "double precision"}
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		want = []string{"decimal", "numeric"}
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		want = []string{"date"}
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2:
		want = []string{"datetime"}
	case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		want = []string{"timestamp"}
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		want = []string{"time"}
	case mysql.MYSQL_TYPE_BIT:
		want = []string{"bit"}
	case mysql.MYSQL_TYPE_ENUM:
		want = []string{"enum"}
	case mysql.MYSQL_TYPE_SET:
		want = []string{"set"}
	case mysql.MYSQL_TYPE_JSON:
		want = []string{"json"}
	case mysql.MYSQL_TYPE_STRING:
		want = []string{"char", "binary", "uuid", "inet4", "inet6"}
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		want = []string{"varchar", "varbinary"}
	case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB:
		want = []string{"tinytext", "text", "mediumtext", "longtext", "tinyblob", "blob", "mediumblob", "longblob", "json", "vector"}
	case mysql.MYSQL_TYPE_GEOMETRY:
		want = []string{"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
			"multipolygon", "geometrycollection", "geomcollection"}
	default:
		return true // a type this check does not know: decoding tells
	}
	return slices.Contains(want, ic.DataType)
}

func describeInfoCount(info *TableShape) string {
	if info == nil {
		return "no such table"
	}
	return fmt.Sprintf("%d columns", len(info.Columns))
}

// TableFromInfo builds a table description from information_schema alone: the snapshot's
// view of a table, and the shape announced after a DDL.
func TableFromInfo(id change.TableID, info *TableShape, opts Options) (*Table, error) {
	cols := make([]Column, len(info.Columns))
	for i, ic := range info.Columns {
		col, err := columnFromInfo(ic, opts)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", id, err)
		}
		cols[i] = col
	}
	return newTable(id, cols, info.PrimaryKey, opts)
}

// SchemaOfInfo returns the neutral schema of a shape: the column names and SQL types, and
// the key when it resolves (nil Key otherwise). It is what a SchemaChange tells of the shape
// before its DDL.
func SchemaOfInfo(id change.TableID, info *TableShape, opts Options) *change.Schema {
	s := &change.Schema{Table: id, Columns: make([]change.Column, len(info.Columns))}
	for i, ic := range info.Columns {
		s.Columns[i] = change.Column{Name: ic.Name, SQLType: ic.ColumnType, NotNull: ic.NotNull, Comment: ic.Comment}
	}
	pk := info.PrimaryKey
	if opts.Keys != nil {
		if names, ok := opts.Keys(id.DB, id.Table); ok && len(names) > 0 {
			pk = names
		}
	}
	for _, name := range pk {
		k := slices.IndexFunc(s.Columns, func(c change.Column) bool { return strings.EqualFold(c.Name, name) })
		if k < 0 {
			s.Key = nil
			break
		}
		s.Key = append(s.Key, k)
	}
	return s
}

// newTable resolves the table's key: the pipeline's override first, then the primary key.
func newTable(id change.TableID, cols []Column, pk []string, opts Options) (*Table, error) {
	if opts.Keys != nil {
		if names, ok := opts.Keys(id.DB, id.Table); ok && len(names) > 0 {
			pk = names
		}
	}
	if len(pk) == 0 {
		return nil, &NoPrimaryKeyError{Tables: []change.TableID{id}}
	}
	key := make([]int, len(pk))
	for k, name := range pk {
		key[k] = slices.IndexFunc(cols, func(c Column) bool { return strings.EqualFold(c.Name, name) })
		if key[k] < 0 {
			return nil, fmt.Errorf("table %s: key column %q does not exist", id, name)
		}
	}
	schema := &change.Schema{Table: id, Columns: make([]change.Column, len(cols)), Key: key}
	for i, c := range cols {
		schema.Columns[i] = change.Column{Name: c.Name, SQLType: c.SQLType, NotNull: c.NotNull, Comment: c.Comment}
	}
	return &Table{Schema: schema, Columns: cols}, nil
}

// binlogFacts are the TABLE_MAP metadata of one column.
type binlogFacts struct {
	Name           string
	Unsigned       bool
	Collation      uint64
	collationKnown bool
	Labels         []string
}

// realType undoes the packing of MYSQL_TYPE_STRING: ENUM, SET and CHAR/BINARY share it, with
// the real type and the byte length in the metadata.
func realType(tp byte, meta uint16) (byte, int) {
	if tp != mysql.MYSQL_TYPE_STRING || meta < 256 {
		return tp, int(meta)
	}
	b0, b1 := byte(meta>>8), int(meta&0xff)
	if b0&0x30 != 0x30 {
		return b0 | 0x30, b1 | int((b0&0x30)^0x30)<<4
	}
	return b0, b1
}

// columnFromMap classifies a column from its binlog type and metadata, completed by ic.
func columnFromMap(tp byte, meta uint16, f binlogFacts, ic *InfoColumn, opts Options) (Column, error) {
	c := Column{Name: f.Name, Unsigned: f.Unsigned, Labels: f.Labels}
	if ic != nil {
		c.SQLType, c.NotNull, c.Comment = ic.ColumnType, ic.NotNull, ic.Comment
	}
	tp, length := realType(tp, meta)
	if ic != nil && tp == mysql.MYSQL_TYPE_STRING {
		if cl, n, ok := fixedBinClass(ic.DataType); ok {
			if length != n {
				return Column{}, fmt.Errorf("column %s: a %s of %d bytes in the binlog, want %d", f.Name, ic.DataType, length, n)
			}
			c.class, c.Length = cl, n
			return c, nil
		}
	}
	charset := ""
	if f.collationKnown {
		charset = charsetFor(opts.Collations, f.Collation)
	} else if ic != nil {
		charset = infoCharset(ic)
	}
	switch tp {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG,
		mysql.MYSQL_TYPE_LONGLONG:
		c.class, c.medium = ClassInt, tp == mysql.MYSQL_TYPE_INT24
		if tp == mysql.MYSQL_TYPE_TINY && ic != nil && opts.TinyInt1AsBool && isTinyInt1(ic) {
			c.class = ClassBool
		}
	case mysql.MYSQL_TYPE_YEAR:
		c.class = ClassYear
	case mysql.MYSQL_TYPE_FLOAT:
		c.class = ClassFloat
	case mysql.MYSQL_TYPE_DOUBLE:
		c.class = ClassDouble
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		c.class, c.Scale = ClassDecimal, int(meta&0xff)
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		c.class = ClassDate
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2:
		c.class, c.Scale = ClassDateTime, fsp(tp, meta, mysql.MYSQL_TYPE_DATETIME2)
	case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		c.class, c.Scale = ClassTimestamp, fsp(tp, meta, mysql.MYSQL_TYPE_TIMESTAMP2)
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		c.class, c.Scale = ClassTime, fsp(tp, meta, mysql.MYSQL_TYPE_TIME2)
	case mysql.MYSQL_TYPE_BIT:
		c.class, c.Length = ClassBit, int(meta>>8)*8+int(meta&0xff)
	case mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET:
		c.class = ClassEnum
		if tp == mysql.MYSQL_TYPE_SET {
			c.class = ClassSet
		}
		if c.Labels == nil && ic != nil {
			c.Labels = ParseEnumLabels(ic.ColumnType)
		}
	case mysql.MYSQL_TYPE_JSON:
		c.class = ClassJSON
	case mysql.MYSQL_TYPE_GEOMETRY:
		c.class = ClassGeometry
	case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING,
		mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB,
		mysql.MYSQL_TYPE_LONG_BLOB, mysql.MYSQL_TYPE_VECTOR:
		if !f.collationKnown && ic == nil {
			return Column{}, fmt.Errorf("column %s: character set unknown (binlog_row_metadata=MINIMAL and no information_schema entry); set binlog_row_metadata=FULL", f.Name)
		}
		c.class = textClass(charset, tp == mysql.MYSQL_TYPE_STRING, ic)
		if c.class == ClassBinary {
			c.Length = length
		}
	default:
		return Column{}, fmt.Errorf("column %s: binlog type %d is not supported", f.Name, tp)
	}
	return c.withCharset(charset, true)
}

// textClass classifies the string-like binlog types by character set: binary ones carry bytes.
func textClass(charset string, fixed bool, ic *InfoColumn) Class {
	switch {
	case charset == "binary" && fixed:
		return ClassBinary
	case charset == "binary":
		return ClassBytes
	case ic != nil && (ic.JSON || ic.DataType == "json"):
		return ClassJSON
	}
	return ClassString
}

func fsp(tp byte, meta uint16, v2 byte) int {
	if tp == v2 {
		return int(meta)
	}
	return 0
}

func isTinyInt1(ic *InfoColumn) bool {
	return ic.DataType == "tinyint" && strings.HasPrefix(ic.ColumnType, "tinyint(1)")
}

func infoCharset(ic *InfoColumn) string {
	if ic.Charset == "" {
		return "binary"
	}
	return ic.Charset
}

// withCharset sets the column's character set and decoder. rawLabels says the ENUM/SET
// labels are in the column's character set (as the binlog metadata carries them) and must be
// transcoded; information_schema gives them in UTF-8 already.
func (c Column) withCharset(charset string, rawLabels bool) (Column, error) {
	switch c.class {
	case ClassString, ClassEnum, ClassSet, ClassJSON:
	default:
		return c, nil
	}
	dec, err := decoderFor(charset)
	if err != nil {
		return Column{}, fmt.Errorf("column %s: %w", c.Name, err)
	}
	c.Charset, c.dec = charset, dec
	if dec == nil || c.Labels == nil || !rawLabels {
		return c, nil
	}
	labels := make([]string, len(c.Labels))
	for i, l := range c.Labels {
		b, err := dec.decode([]byte(l))
		if err != nil {
			return Column{}, fmt.Errorf("column %s: label %q: %w", c.Name, l, err)
		}
		labels[i] = string(b)
	}
	c.Labels = labels
	return c, nil
}

// columnFromInfo classifies a column from information_schema alone.
func columnFromInfo(ic InfoColumn, opts Options) (Column, error) {
	c := Column{Name: ic.Name, SQLType: ic.ColumnType, Unsigned: strings.Contains(ic.ColumnType, "unsigned"),
		NotNull: ic.NotNull, Comment: ic.Comment}
	switch ic.DataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint":
		c.class, c.medium = ClassInt, ic.DataType == "mediumint"
		if opts.TinyInt1AsBool && isTinyInt1(&ic) {
			c.class = ClassBool
		}
	case "bool", "boolean":
		c.class = ClassBool
	case "year":
		c.class = ClassYear
	case "float":
		c.class = ClassFloat
	case "double", "real", "double precision":
		c.class = ClassDouble
	case "decimal", "numeric":
		c.class, c.Scale = ClassDecimal, ic.Scale
	case "date":
		c.class = ClassDate
	case "datetime":
		c.class, c.Scale = ClassDateTime, ic.Scale
	case "timestamp":
		c.class, c.Scale = ClassTimestamp, ic.Scale
	case "time":
		c.class, c.Scale = ClassTime, ic.Scale
	case "bit":
		c.class, c.Length = ClassBit, ic.Length
	case "enum", "set":
		c.class, c.Labels = ClassEnum, ParseEnumLabels(ic.ColumnType)
		if ic.DataType == "set" {
			c.class = ClassSet
		}
	case "json":
		c.class = ClassJSON
	case "binary":
		c.class, c.Length = ClassBinary, ic.Length
	case "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "vector":
		c.class = ClassBytes
	case "uuid", "inet4", "inet6":
		c.class, c.Length, _ = fixedBinClass(ic.DataType)
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext":
		c.class = textClass(infoCharset(&ic), false, &ic)
	case "geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
		"multipolygon", "geometrycollection", "geomcollection":
		c.class = ClassGeometry
	default:
		return Column{}, fmt.Errorf("column %s: type %s is not supported", ic.Name, ic.ColumnType)
	}
	return c.withCharset(infoCharset(&ic), false)
}

// ParseEnumLabels reads the members of "enum('a','it”s')" or "set(…)" in definition order.
func ParseEnumLabels(columnType string) []string {
	open := strings.IndexByte(columnType, '(')
	if open < 0 {
		return nil
	}
	s := columnType[open+1:]
	var labels []string
	for len(s) > 0 && s[0] == '\'' {
		var b strings.Builder
		i := 1
		for ; i < len(s); i++ {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				break
			}
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			b.WriteByte(s[i])
		}
		labels = append(labels, b.String())
		if i+1 >= len(s) || s[i+1] != ',' {
			break
		}
		s = s[i+2:]
	}
	return labels
}

// SameShape reports whether two descriptions decode and render alike, so a schema version
// can be kept across a new TABLE_MAP id.
func SameShape(a, b *Table) bool {
	if len(a.Columns) != len(b.Columns) || !slices.Equal(a.Schema.Key, b.Schema.Key) {
		return false
	}
	for i := range a.Columns {
		x, y := &a.Columns[i], &b.Columns[i]
		if x.Name != y.Name || x.SQLType != y.SQLType || x.NotNull != y.NotNull || x.Comment != y.Comment ||
			x.class != y.class || x.Unsigned != y.Unsigned ||
			x.Charset != y.Charset || x.Length != y.Length || x.Scale != y.Scale || !slices.Equal(x.Labels, y.Labels) {
			return false
		}
	}
	return true
}
