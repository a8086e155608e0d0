package history

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	tmysql "github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/types"

	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
)

// This file applies DDL statements to table shapes (tableInfo): the schema history's step
// from one shape to the next. It derives what information_schema would say after the
// statement, so that events written before a later DDL decode with the facts of their time.
// It is pure: the current shapes come from a shapeView, the server's conventions from a
// ddlEnv.

// shapeView is what the applier reads of the shapes before a statement.
type shapeView interface {
	// Shape returns a table's shape. known is false when nothing is known of the table;
	// a nil info with known set means the table does not exist.
	Shape(id change.TableID) (info *schema.TableShape, known bool)
	// tablesIn lists the existing tables of db.
	tablesIn(db string) []change.TableID
}

// Env is what the applier needs of the server and the history.
type Env struct {
	MariaDB bool
	// IntWidths: the server shows integer display widths (MariaDB, MySQL before 8.0.19).
	IntWidths bool
	// track reports whether a table the history does not know yet is to be followed (a
	// captured table, or one that may become captured by a rename). Nil: every table.
	track func(id change.TableID) bool
	// dbCharset returns the default character set of a database, "" when unknown.
	dbCharset func(db string) string
}

// shapeUpdate is a table's shape after a statement; nil info: the table no longer exists.
type shapeUpdate struct {
	id   change.TableID
	info *schema.TableShape
}

// ddlResult is the effect of one DDL statement on the shapes.
type ddlResult struct {
	updates []shapeUpdate    // in the order the tables were first touched
	reread  []change.TableID // tables whose new shape could not be derived: read information_schema
	all     bool             // the statement was not understood: re-read every table of the database
	problem error            // why reread or all
}

// applyDDL derives the shapes after a DDL statement run with default database db.
func applyDDL(db, query string, view shapeView, env Env) ddlResult {
	stmts, err := parseDDL(query)
	if err != nil {
		if !mayChangeShapes(query) {
			return ddlResult{}
		}
		ids, all := ddlTablesByPattern(db, query)
		return ddlResult{reread: ids, all: all, problem: fmt.Errorf("parse: %w", err)}
	}
	w := &ddlWork{view: view, env: env, db: db, overlay: map[change.TableID]*schema.TableShape{}}
	for _, stmt := range stmts {
		w.statement(stmt)
	}
	var res ddlResult
	for _, id := range w.touched {
		if !slices.Contains(w.reread, id) {
			res.updates = append(res.updates, shapeUpdate{id: id, info: w.overlay[id]})
		}
	}
	res.reread, res.problem = w.reread, errors.Join(w.problems...)
	return res
}

// ddlWork is the state of applying one query: the shapes it changed so far over the view.
type ddlWork struct {
	view     shapeView
	env      Env
	db       string
	overlay  map[change.TableID]*schema.TableShape
	touched  []change.TableID
	reread   []change.TableID
	problems []error
}

func (w *ddlWork) get(id change.TableID) (*schema.TableShape, bool) {
	if info, ok := w.overlay[id]; ok {
		return info, true
	}
	return w.view.Shape(id)
}

// relevant reports whether the history keeps id: it knows the table or tracks it.
func (w *ddlWork) relevant(id change.TableID) bool {
	if _, known := w.get(id); known {
		return true
	}
	return w.env.track == nil || w.env.track(id)
}

func (w *ddlWork) put(id change.TableID, info *schema.TableShape) {
	if _, ok := w.overlay[id]; !ok {
		w.touched = append(w.touched, id)
	}
	if info != nil {
		info.RefreshJSON()
	}
	w.overlay[id] = info
}

// fail gives up deriving id's shape: it is read from information_schema instead.
func (w *ddlWork) fail(id change.TableID, err error) {
	if !w.relevant(id) || slices.Contains(w.reread, id) {
		return
	}
	w.reread = append(w.reread, id)
	w.problems = append(w.problems, fmt.Errorf("%s: %w", id, err))
}

func (w *ddlWork) tableID(tn *ast.TableName) change.TableID { return tableIn(w.db, tn) }

// tableIn returns the table tn names, in database db when the name is not qualified.
func tableIn(db string, tn *ast.TableName) change.TableID {
	if tn.Schema.O != "" {
		db = tn.Schema.O
	}
	return change.TableID{DB: db, Table: tn.Name.O}
}

func (w *ddlWork) statement(stmt ast.StmtNode) {
	switch s := stmt.(type) {
	case *ast.CreateTableStmt:
		w.createTable(s)
	case *ast.AlterTableStmt:
		w.alterTable(s)
	case *ast.DropTableStmt:
		if s.IsView || s.TemporaryKeyword != ast.TemporaryNone {
			return
		}
		for _, tn := range s.Tables {
			if id := w.tableID(tn); w.relevant(id) {
				w.put(id, nil)
			}
		}
	case *ast.RenameTableStmt:
		for _, tt := range s.TableToTables {
			w.rename(w.tableID(tt.OldTable), w.tableID(tt.NewTable))
		}
	case *ast.DropIndexStmt:
		if strings.EqualFold(s.IndexName, "PRIMARY") {
			w.alterShape(w.tableID(s.Table), func(ti *schema.TableShape) error { ti.PrimaryKey = nil; return nil })
		}
	case *ast.DropDatabaseStmt:
		ids := w.view.tablesIn(s.Name.O)
		for id, info := range w.overlay {
			if id.DB == s.Name.O && info != nil && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		slices.SortFunc(ids, func(a, b change.TableID) int { return strings.Compare(a.Table, b.Table) })
		for _, id := range ids {
			w.put(id, nil)
		}
	}
	// TRUNCATE, CREATE INDEX, views, databases, users, routines: no table changes shape.
}

// alterShape applies fn to a copy of id's shape; a table the history does not have is read
// from information_schema.
func (w *ddlWork) alterShape(id change.TableID, fn func(*schema.TableShape) error) {
	cur, _ := w.get(id)
	if cur == nil {
		w.fail(id, errors.New("the table's shape before the statement is not known"))
		return
	}
	ti := cur.Clone()
	if err := fn(ti); err != nil {
		w.fail(id, err)
		return
	}
	w.put(id, ti)
}

func (w *ddlWork) rename(from, to change.TableID) {
	cur, known := w.get(from)
	if known {
		w.put(from, nil)
	}
	switch {
	case cur != nil:
		if w.relevant(to) || w.relevant(from) {
			w.put(to, cur.Clone()) // shapes in the history are shared and never modified
		}
	case w.relevant(to):
		w.fail(to, fmt.Errorf("renamed from %s, whose shape is not known", from))
	}
}

func (w *ddlWork) createTable(s *ast.CreateTableStmt) {
	id := w.tableID(s.Table)
	if s.TemporaryKeyword != ast.TemporaryNone || !w.relevant(id) {
		return
	}
	if cur, _ := w.get(id); cur != nil && s.IfNotExists {
		return
	}
	switch {
	case s.ReferTable != nil:
		src, _ := w.get(w.tableID(s.ReferTable))
		if src == nil {
			w.fail(id, fmt.Errorf("CREATE TABLE LIKE %s, whose shape is not known", w.tableID(s.ReferTable)))
			return
		}
		w.put(id, src.Clone())
		return
	case s.Select != nil:
		w.fail(id, errors.New("CREATE TABLE … SELECT: the columns follow from the query"))
		return
	}
	ti := &schema.TableShape{}
	for _, opt := range s.Options {
		w.tableOption(ti, opt, false)
	}
	if ti.Charset == "" && w.env.dbCharset != nil {
		ti.Charset = normCharset(w.env.dbCharset(id.DB))
	}
	for _, def := range s.Cols {
		ic, ex, err := w.column(def, ti.Charset)
		if err != nil {
			w.fail(id, err)
			return
		}
		if ti.Column(ic.Name) != nil {
			w.fail(id, fmt.Errorf("column %s defined twice", ic.Name))
			return
		}
		ti.Columns = append(ti.Columns, ic)
		if ex.primary {
			ti.PrimaryKey = []string{ic.Name}
		}
	}
	for _, c := range s.Constraints {
		if err := w.constraint(ti, c); err != nil {
			w.fail(id, err)
			return
		}
	}
	w.put(id, ti)
}

func (w *ddlWork) alterTable(s *ast.AlterTableStmt) {
	id := w.tableID(s.Table)
	to := id
	for _, spec := range s.Specs {
		if spec.Tp == ast.AlterTableRenameTable && spec.NewTable != nil {
			to = w.tableID(spec.NewTable)
		}
	}
	if !w.relevant(id) && !w.relevant(to) {
		return
	}
	cur, _ := w.get(id)
	if cur == nil {
		w.fail(to, errors.New("the table's shape before the statement is not known"))
		if to != id {
			w.put(id, nil)
		}
		return
	}
	ti := cur.Clone()
	for _, spec := range s.Specs {
		if err := w.alterSpec(ti, spec); err != nil {
			w.fail(to, err)
			if to != id {
				w.put(id, nil)
			}
			return
		}
	}
	if to != id {
		w.put(id, nil)
	}
	w.put(to, ti)
}

// alterSpec applies one ALTER TABLE clause.
func (w *ddlWork) alterSpec(ti *schema.TableShape, spec *ast.AlterTableSpec) error {
	switch spec.Tp {
	case ast.AlterTableOption:
		for _, opt := range spec.Options {
			w.tableOption(ti, opt, true)
		}
	case ast.AlterTableAddColumns:
		for i, def := range spec.NewColumns {
			pos := spec.Position
			if i > 0 { // ADD COLUMN (a …, b …): in order, at the end
				pos = nil
			}
			if err := w.addColumn(ti, def, pos, spec.IfNotExists); err != nil {
				return err
			}
		}
		for _, c := range spec.NewConstraints {
			if err := w.constraint(ti, c); err != nil {
				return err
			}
		}
	case ast.AlterTableDropColumn:
		name := spec.OldColumnName.Name.O
		i := ti.Index(name)
		if i < 0 {
			if spec.IfExists {
				return nil
			}
			return fmt.Errorf("DROP COLUMN %s: no such column", name)
		}
		ti.Columns = slices.Delete(ti.Columns, i, i+1)
		ti.PrimaryKey = slices.DeleteFunc(ti.PrimaryKey, func(k string) bool { return strings.EqualFold(k, name) })
		for j := range ti.Checks {
			ti.Checks[j].Columns = slices.DeleteFunc(ti.Checks[j].Columns, func(c string) bool { return strings.EqualFold(c, name) })
		}
	case ast.AlterTableModifyColumn, ast.AlterTableChangeColumn:
		def := spec.NewColumns[0]
		old := def.Name.Name.O
		if spec.Tp == ast.AlterTableChangeColumn {
			old = spec.OldColumnName.Name.O
		}
		if ti.Index(old) < 0 {
			if spec.IfExists {
				return nil
			}
			return fmt.Errorf("%s: no such column", old)
		}
		return w.replaceColumn(ti, old, def, spec.Position)
	case ast.AlterTableRenameColumn:
		old, name := spec.OldColumnName.Name.O, spec.NewColumnName.Name.O
		i := ti.Index(old)
		if i < 0 {
			return fmt.Errorf("RENAME COLUMN %s: no such column", old)
		}
		if j := ti.Index(name); j >= 0 && j != i {
			return fmt.Errorf("RENAME COLUMN %s TO %s: the column exists", old, name)
		}
		ti.Columns[i].Name = name
		ti.RenameReferences(old, name)
	case ast.AlterTableAddConstraint:
		return w.constraint(ti, spec.Constraint)
	case ast.AlterTableDropPrimaryKey:
		ti.PrimaryKey = nil
	case ast.AlterTableDropIndex:
		if strings.EqualFold(spec.Name, "PRIMARY") {
			ti.PrimaryKey = nil
		}
	case ast.AlterTableDropCheck:
		return ti.DropCheck(spec.Constraint.Name)
	}
	// Indexes, foreign keys, defaults, partitions, engine and table options other than the
	// character set, RENAME TO (handled by the caller): no column changes.
	return nil
}

func (w *ddlWork) addColumn(ti *schema.TableShape, def *ast.ColumnDef, pos *ast.ColumnPosition, ifNotExists bool) error {
	ic, ex, err := w.column(def, ti.Charset)
	if err != nil {
		return err
	}
	if ti.Index(ic.Name) >= 0 {
		if ifNotExists {
			return nil
		}
		return fmt.Errorf("ADD COLUMN %s: the column exists", ic.Name)
	}
	at, err := columnPosition(ti, pos, len(ti.Columns))
	if err != nil {
		return err
	}
	ti.Columns = slices.Insert(ti.Columns, at, ic)
	if ex.primary {
		ti.PrimaryKey = []string{ic.Name}
	}
	return nil
}

// replaceColumn applies MODIFY or CHANGE: the column named old gets def (a new name with
// CHANGE) and moves to pos. Its own CHECK constraint is replaced by def's.
func (w *ddlWork) replaceColumn(ti *schema.TableShape, old string, def *ast.ColumnDef, pos *ast.ColumnPosition) error {
	if def.Tp == nil {
		return fmt.Errorf("column %s: no type", def.Name.Name.O)
	}
	ic, ex, err := w.column(def, ti.Charset)
	if err != nil {
		return err
	}
	i := ti.Index(old)
	if j := ti.Index(ic.Name); j >= 0 && j != i {
		return fmt.Errorf("CHANGE COLUMN %s %s: the column exists", old, ic.Name)
	}
	ti.Columns = slices.Delete(ti.Columns, i, i+1)
	at := i
	if pos != nil && pos.Tp != ast.ColumnPositionNone {
		if at, err = columnPosition(ti, pos, i); err != nil {
			return err
		}
	}
	ti.Columns = slices.Insert(ti.Columns, at, ic)
	if old != ic.Name {
		ti.RenameReferences(old, ic.Name)
	}
	if ex.primary {
		ti.PrimaryKey = []string{ic.Name}
	}
	return nil
}

// columnPosition resolves FIRST / AFTER col to an index in ti.Columns; def is the index
// without a position.
func columnPosition(ti *schema.TableShape, pos *ast.ColumnPosition, def int) (int, error) {
	if pos == nil {
		return def, nil
	}
	switch pos.Tp {
	case ast.ColumnPositionFirst:
		return 0, nil
	case ast.ColumnPositionAfter:
		name := pos.RelativeColumn.Name.O
		i := ti.Index(name)
		if i < 0 {
			return 0, fmt.Errorf("AFTER %s: no such column", name)
		}
		return i + 1, nil
	}
	return def, nil
}

// constraint applies a table constraint: PRIMARY KEY and the CHECK (json_valid(col)) of
// MariaDB's JSON columns matter; other keys and checks do not change the shape.
func (w *ddlWork) constraint(ti *schema.TableShape, c *ast.Constraint) error {
	switch c.Tp {
	case ast.ConstraintPrimaryKey:
		var pk []string
		for _, k := range c.Keys {
			if k.Column == nil {
				return errors.New("PRIMARY KEY on an expression")
			}
			col := ti.Column(k.Column.Name.O)
			if col == nil {
				return fmt.Errorf("PRIMARY KEY (%s): no such column", k.Column.Name.O)
			}
			pk = append(pk, col.Name)
			col.NotNull = true // the server makes a key column NOT NULL
		}
		ti.PrimaryKey = pk
	case ast.ConstraintCheck:
		if cols := jsonValidColumns(c.Expr); len(cols) > 0 {
			ti.Checks = append(ti.Checks, schema.JSONCheck{Name: c.Name, Columns: cols})
		}
	}
	return nil
}

// tableOption applies a table's character set options. alter says the option is from
// ALTER TABLE, where CONVERT TO changes the columns as well.
func (w *ddlWork) tableOption(ti *schema.TableShape, opt *ast.TableOption, alter bool) {
	switch opt.Tp {
	case ast.TableOptionCharset:
		cs := normCharset(opt.StrValue)
		if alter && opt.UintValue == ast.TableOptionCharsetWithConvertTo {
			convertCharset(ti, cs)
		}
		ti.Charset = cs
	case ast.TableOptionCollate:
		ti.Charset = charsetOfCollation(opt.StrValue)
	case ast.TableOptionComment:
		switch kind, value, _ := directive(opt.StrValue); kind {
		case directiveCharset:
			ti.Charset = normCharset(value)
		case directiveCollate:
			ti.Charset = charsetOfCollation(value)
		case directiveConvert:
			cs := normCharset(value)
			if alter {
				convertCharset(ti, cs)
			}
			ti.Charset = cs
		}
	}
}

// columnExtras are what a column definition says beyond the column itself.
type columnExtras struct {
	primary bool // PRIMARY KEY as a column attribute
}

// column derives information_schema's view of a column definition. tableCharset is the
// table's default character set.
func (w *ddlWork) column(def *ast.ColumnDef, tableCharset string) (schema.InfoColumn, columnExtras, error) {
	ic := schema.InfoColumn{Name: def.Name.Name.O}
	var ex columnExtras
	if def.Tp == nil {
		return ic, ex, fmt.Errorf("column %s: no type", ic.Name)
	}
	charset, collate, typeName := normCharset(def.Tp.GetCharset()), def.Tp.GetCollate(), ""
	for _, opt := range def.Options {
		switch opt.Tp {
		case ast.ColumnOptionPrimaryKey:
			ex.primary, ic.NotNull = true, true
		case ast.ColumnOptionNotNull:
			ic.NotNull = true
		case ast.ColumnOptionNull:
			ic.NotNull = false
		case ast.ColumnOptionCollate:
			collate = opt.StrValue
		case ast.ColumnOptionCheck:
			if slices.ContainsFunc(jsonValidColumns(opt.Expr), func(c string) bool { return strings.EqualFold(c, ic.Name) }) {
				ic.ColumnCheck = true
			}
		case ast.ColumnOptionComment:
			v, ok := opt.Expr.(ast.ValueExpr)
			if !ok {
				continue
			}
			switch kind, value, ok := directive(v.GetString()); kind {
			case directiveType:
				typeName = value
			case directiveCharset:
				charset = normCharset(value)
			case directiveCollate:
				collate = value
			default:
				if !ok {
					ic.Comment = v.GetString()
				}
			}
		}
	}
	if def.Tp != nil && def.Tp.GetFlag()&tmysql.NotNullFlag != 0 { // SERIAL
		ic.NotNull = true
	}
	if collate != "" {
		charset = charsetOfCollation(collate)
	}
	if charset == "" {
		charset = tableCharset
	}
	if charset == "" {
		charset = "utf8mb4"
	}
	if typeName != "" { // a type the parser does not know, carried in a comment
		ic.DataType, ic.ColumnType = typeName, typeName
		return ic, ex, nil
	}
	if err := w.columnType(&ic, def.Tp, charset); err != nil {
		return ic, ex, fmt.Errorf("column %s: %w", ic.Name, err)
	}
	return ic, ex, nil
}

// Integer display widths information_schema shows when a definition gives none: signed and
// unsigned.
var intWidths = map[byte][2]int{
	tmysql.TypeTiny: {4, 3}, tmysql.TypeShort: {6, 5}, tmysql.TypeInt24: {9, 8},
	tmysql.TypeLong: {11, 10}, tmysql.TypeLonglong: {20, 20},
}

var intNames = map[byte]string{
	tmysql.TypeTiny: "tinyint", tmysql.TypeShort: "smallint", tmysql.TypeInt24: "mediumint",
	tmysql.TypeLong: "int", tmysql.TypeLonglong: "bigint",
}

// Byte lengths of the BLOB and TEXT types.
const (
	tinyBlobLen   = 1<<8 - 1
	blobLen       = 1<<16 - 1
	mediumBlobLen = 1<<24 - 1
	longBlobLen   = 1<<32 - 1
)

// columnType fills DataType, ColumnType, Charset, Scale and Length as information_schema
// writes them for a parsed type.
func (w *ddlWork) columnType(ic *schema.InfoColumn, tp *types.FieldType, charset string) error {
	flen, dec, flag := tp.GetFlen(), tp.GetDecimal(), tp.GetFlag()
	zerofill := flag&tmysql.ZerofillFlag != 0
	unsigned := flag&tmysql.UnsignedFlag != 0 || zerofill
	suffix := ""
	if unsigned {
		suffix = " unsigned"
	}
	if zerofill {
		suffix += " zerofill"
	}
	binary := charset == "binary"
	text := func(name string) {
		ic.DataType, ic.ColumnType, ic.Charset = name, name, charset
	}
	switch t := tp.GetType(); t {
	case tmysql.TypeTiny, tmysql.TypeShort, tmysql.TypeInt24, tmysql.TypeLong, tmysql.TypeLonglong:
		ic.DataType = intNames[t]
		width := flen
		if width <= 0 {
			width = intWidths[t][0]
			if unsigned {
				width = intWidths[t][1]
			}
		}
		ic.ColumnType = ic.DataType
		if w.env.IntWidths || zerofill || t == tmysql.TypeTiny && flen == 1 {
			ic.ColumnType += "(" + strconv.Itoa(width) + ")"
		}
		ic.ColumnType += suffix
	case tmysql.TypeYear:
		ic.DataType, ic.ColumnType = "year", "year"
		if w.env.IntWidths {
			ic.ColumnType = "year(4)"
		}
	case tmysql.TypeFloat, tmysql.TypeDouble:
		ic.DataType = "float"
		if t == tmysql.TypeDouble {
			ic.DataType = "double"
		}
		ic.ColumnType = ic.DataType
		if flen > 0 && dec >= 0 {
			ic.ColumnType += "(" + strconv.Itoa(flen) + "," + strconv.Itoa(dec) + ")"
			ic.Scale = dec
		}
		ic.ColumnType += suffix
	case tmysql.TypeNewDecimal:
		if flen <= 0 {
			flen = 10
		}
		ic.Scale = max(dec, 0)
		ic.DataType = "decimal"
		ic.ColumnType = "decimal(" + strconv.Itoa(flen) + "," + strconv.Itoa(ic.Scale) + ")" + suffix
	case tmysql.TypeDate:
		ic.DataType, ic.ColumnType = "date", "date"
	case tmysql.TypeDatetime, tmysql.TypeTimestamp, tmysql.TypeDuration:
		ic.DataType = map[byte]string{tmysql.TypeDatetime: "datetime", tmysql.TypeTimestamp: "timestamp", tmysql.TypeDuration: "time"}[t]
		ic.ColumnType, ic.Scale = ic.DataType, max(dec, 0)
		if ic.Scale > 0 {
			ic.ColumnType += "(" + strconv.Itoa(ic.Scale) + ")"
		}
	case tmysql.TypeBit:
		if flen <= 0 {
			flen = 1
		}
		ic.DataType, ic.ColumnType, ic.Length = "bit", "bit("+strconv.Itoa(flen)+")", flen
	case tmysql.TypeString, tmysql.TypeVarchar, tmysql.TypeVarString:
		fixed := t == tmysql.TypeString
		if flen < 0 {
			if !fixed {
				return errors.New("VARCHAR without a length")
			}
			flen = 1
		}
		name := map[[2]bool]string{{true, false}: "char", {true, true}: "binary", {false, false}: "varchar", {false, true}: "varbinary"}[[2]bool{fixed, binary}]
		ic.DataType, ic.ColumnType = name, name+"("+strconv.Itoa(flen)+")"
		ic.Length = flen * mbMaxLen(charset)
		if !binary {
			ic.Charset = charset
		}
	case tmysql.TypeTinyBlob, tmysql.TypeBlob, tmysql.TypeMediumBlob, tmysql.TypeLongBlob:
		size := map[byte]int{tmysql.TypeTinyBlob: tinyBlobLen, tmysql.TypeBlob: blobLen,
			tmysql.TypeMediumBlob: mediumBlobLen, tmysql.TypeLongBlob: longBlobLen}[t]
		if t == tmysql.TypeBlob && flen > 0 { // TEXT(n), BLOB(n): the smallest type that holds n
			size = blobSize(flen * mbMaxLen(charset))
		}
		ic.DataType, ic.Length = blobName(size, binary), size
		ic.ColumnType = ic.DataType
		if !binary {
			ic.Charset = charset
		}
	case tmysql.TypeEnum, tmysql.TypeSet:
		name := "enum"
		if t == tmysql.TypeSet {
			name = "set"
		}
		text(name)
		ic.ColumnType = name + "(" + quoteLabels(tp.GetElems()) + ")"
		ic.Length = labelsLength(name, tp.GetElems(), charset)
	case tmysql.TypeJSON:
		if w.env.MariaDB { // an alias of LONGTEXT with a json_valid check
			ic.DataType, ic.ColumnType, ic.Charset, ic.Length = "longtext", "longtext", "utf8mb4", longBlobLen
			ic.ColumnCheck = true
			return nil
		}
		ic.DataType, ic.ColumnType = "json", "json"
	case tmysql.TypeTiDBVectorFloat32:
		ic.DataType, ic.ColumnType = "vector", "vector("+strconv.Itoa(flen)+")"
	default:
		return fmt.Errorf("type %s is not supported by the schema history", tp.String())
	}
	return nil
}

func blobSize(n int) int {
	for _, size := range []int{tinyBlobLen, blobLen, mediumBlobLen} {
		if n <= size {
			return size
		}
	}
	return longBlobLen
}

func blobName(size int, binary bool) string {
	prefix := map[int]string{tinyBlobLen: "tiny", blobLen: "", mediumBlobLen: "medium", longBlobLen: "long"}[size]
	if binary {
		return prefix + "blob"
	}
	return prefix + "text"
}

// quoteLabels writes ENUM/SET members as COLUMN_TYPE does: quoted, with quotes doubled.
func quoteLabels(labels []string) string {
	quoted := make([]string, len(labels))
	for i, l := range labels {
		quoted[i] = "'" + strings.ReplaceAll(strings.ReplaceAll(l, `\`, `\\`), "'", "''") + "'"
	}
	return strings.Join(quoted, ",")
}

// labelsLength is CHARACTER_OCTET_LENGTH of an ENUM (the longest member) or a SET (all
// members and their commas).
func labelsLength(name string, labels []string, charset string) int {
	n := 0
	for _, l := range labels {
		c := utf8.RuneCountInString(l)
		if name == "set" {
			n += c
		} else {
			n = max(n, c)
		}
	}
	if name == "set" && len(labels) > 1 {
		n += len(labels) - 1
	}
	return n * mbMaxLen(charset)
}

// convertCharset applies CONVERT TO CHARACTER SET cs to the text columns of ti: their
// character set changes and TEXT types grow to hold as many characters as before.
func convertCharset(ti *schema.TableShape, cs string) {
	for i := range ti.Columns {
		c := &ti.Columns[i]
		if c.Charset == "" || c.Charset == "binary" {
			continue
		}
		oldMB, newMB := mbMaxLen(c.Charset), mbMaxLen(cs)
		switch c.DataType {
		case "char", "varchar":
			c.Length = c.Length / oldMB * newMB
		case "tinytext", "text", "mediumtext", "longtext":
			size := blobSize(c.Length / oldMB * newMB)
			size = max(size, c.Length)
			c.DataType, c.ColumnType, c.Length = blobName(size, false), blobName(size, false), size
		case "enum", "set":
			c.Length = labelsLength(c.DataType, schema.ParseEnumLabels(c.ColumnType), cs)
		}
		c.Charset = cs
	}
}

// jsonValidColumns returns the columns a CHECK expression validates with json_valid(col).
func jsonValidColumns(expr ast.ExprNode) []string {
	if expr == nil {
		return nil
	}
	f := &jsonValidFinder{}
	expr.Accept(f)
	return f.cols
}

type jsonValidFinder struct{ cols []string }

func (f *jsonValidFinder) Enter(n ast.Node) (ast.Node, bool) {
	if fc, ok := n.(*ast.FuncCallExpr); ok && fc.FnName.L == "json_valid" && len(fc.Args) == 1 {
		if cn, ok := fc.Args[0].(*ast.ColumnNameExpr); ok {
			f.cols = append(f.cols, cn.Name.Name.O)
		}
	}
	return n, false
}

func (f *jsonValidFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// normCharset writes a character set name as information_schema does.
func normCharset(cs string) string {
	cs = strings.ToLower(cs)
	if cs == "utf8" {
		return "utf8mb3"
	}
	return cs
}

// charsetOfCollation returns the character set of a collation: every collation name starts
// with its character set's ("latin1_swedish_ci", "utf8mb4_uca1400_ai_ci"), except binary.
func charsetOfCollation(coll string) string {
	coll = strings.ToLower(coll)
	cs, _, _ := strings.Cut(coll, "_")
	return normCharset(cs)
}

// mbMaxLen is the longest character of a character set, in bytes.
func mbMaxLen(cs string) int {
	switch cs {
	case "utf8mb4", "utf16", "utf16le", "utf32", "gb18030":
		return 4
	case "utf8mb3", "utf8", "ujis", "eucjpms":
		return 3
	case "big5", "sjis", "euckr", "gb2312", "gbk", "ucs2", "cp932":
		return 2
	}
	return 1
}
