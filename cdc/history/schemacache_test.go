package history

import (
	"errors"
	"log/slog"
	"reflect"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
)

func TestRealType(t *testing.T) {
	tests := []struct {
		tp     byte
		meta   uint16
		wantTp byte
		wantN  int
	}{
		{mysql.MYSQL_TYPE_STRING, 65064, mysql.MYSQL_TYPE_STRING, 40},          // CHAR(10) utf8mb4
		{mysql.MYSQL_TYPE_STRING, 65028, mysql.MYSQL_TYPE_STRING, 4},           // BINARY(4)
		{mysql.MYSQL_TYPE_STRING, 63233, mysql.MYSQL_TYPE_ENUM, 1},             // ENUM
		{mysql.MYSQL_TYPE_STRING, 63489, mysql.MYSQL_TYPE_SET, 1},              // SET
		{mysql.MYSQL_TYPE_STRING, 0xee00 | 0x2c, mysql.MYSQL_TYPE_STRING, 300}, // CHAR(300) latin1
		{mysql.MYSQL_TYPE_VARCHAR, 400, mysql.MYSQL_TYPE_VARCHAR, 400},
	}
	for _, tc := range tests {
		tp, n := schema.RealType(tc.tp, tc.meta)
		if tp != tc.wantTp || n != tc.wantN {
			t.Errorf("realType(%d, %d) = %d, %d; want %d, %d", tc.tp, tc.meta, tp, n, tc.wantTp, tc.wantN)
		}
	}
}

func TestColumnFromMap(t *testing.T) {
	opts := schema.Options{TinyInt1AsBool: true, Collations: schema.KnownCollations}
	tests := []struct {
		name  string
		tp    byte
		meta  uint16
		facts schema.BinlogFacts
		info  *schema.InfoColumn
		want  schema.Class
		check func(schema.Column) bool
	}{
		{"tinyint1 bool", mysql.MYSQL_TYPE_TINY, 0, schema.BinlogFacts{Name: "b"},
			&schema.InfoColumn{Name: "b", DataType: "tinyint", ColumnType: "tinyint(1)"}, schema.ClassBool, nil},
		{"tinyint1 without info", mysql.MYSQL_TYPE_TINY, 0, schema.BinlogFacts{Name: "b"}, nil, schema.ClassInt, nil},
		{"json by check", mysql.MYSQL_TYPE_BLOB, 4, schema.BinlogFacts{Name: "j", Collation: 46, CollationKnown: true},
			&schema.InfoColumn{Name: "j", DataType: "longtext", ColumnType: "longtext", Charset: "utf8mb4", JSON: true}, schema.ClassJSON, nil},
		{"text", mysql.MYSQL_TYPE_BLOB, 2, schema.BinlogFacts{Name: "t", Collation: 45, CollationKnown: true}, nil, schema.ClassString, nil},
		{"blob", mysql.MYSQL_TYPE_BLOB, 2, schema.BinlogFacts{Name: "t", Collation: 63, CollationKnown: true}, nil, schema.ClassBytes, nil},
		{"binary(4)", mysql.MYSQL_TYPE_STRING, 65028, schema.BinlogFacts{Name: "b", Collation: 63, CollationKnown: true}, nil, schema.ClassBinary,
			func(c schema.Column) bool { return c.Length == 4 }},
		{"bit(5)", mysql.MYSQL_TYPE_BIT, 5, schema.BinlogFacts{Name: "b"}, nil, schema.ClassBit, func(c schema.Column) bool { return c.Length == 5 }},
		{"bit(12)", mysql.MYSQL_TYPE_BIT, 1<<8 | 4, schema.BinlogFacts{Name: "b"}, nil, schema.ClassBit, func(c schema.Column) bool { return c.Length == 12 }},
		{"decimal", mysql.MYSQL_TYPE_NEWDECIMAL, 5126, schema.BinlogFacts{Name: "d"}, nil, schema.ClassDecimal, func(c schema.Column) bool { return c.Scale == 6 }},
		{"latin1 enum labels", mysql.MYSQL_TYPE_STRING, 63233, schema.BinlogFacts{Name: "e", Collation: 8, CollationKnown: true,
			Labels: []string{"caf\xe9"}}, nil, schema.ClassEnum, func(c schema.Column) bool { return c.Labels[0] == "café" }},
		{"set from info labels", mysql.MYSQL_TYPE_STRING, 63489, schema.BinlogFacts{Name: "s"},
			&schema.InfoColumn{Name: "s", DataType: "set", ColumnType: "set('a','it''s')", Charset: "utf8mb4"}, schema.ClassSet,
			func(c schema.Column) bool { return reflect.DeepEqual(c.Labels, []string{"a", "it's"}) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := schema.ColumnFromMap(tc.tp, tc.meta, tc.facts, tc.info, opts)
			if err != nil {
				t.Fatal(err)
			}
			if c.Class != tc.want || (tc.check != nil && !tc.check(c)) {
				t.Fatalf("got %+v, want class %s", c, tc.want)
			}
		})
	}
	if _, err := schema.ColumnFromMap(mysql.MYSQL_TYPE_VARCHAR, 40, schema.BinlogFacts{Name: "v"}, nil, opts); err == nil {
		t.Error("text column without collation nor info: want an error")
	}
}

func TestParseEnumLabels(t *testing.T) {
	got := schema.ParseEnumLabels(`enum('a','it''s','x,y','b\\c','')`)
	want := []string{"a", "it's", "x,y", `b\c`, ""}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestNewTableKeys(t *testing.T) {
	info := &schema.TableShape{Columns: []schema.InfoColumn{
		{Name: "a", DataType: "int", ColumnType: "int(11)"},
		{Name: "b", DataType: "varchar", ColumnType: "varchar(5)", Charset: "utf8mb4"},
	}}
	id := change.TableID{DB: "d", Table: "t"}
	_, err := schema.TableFromInfo(id, info, schema.Options{})
	var npk *schema.NoPrimaryKeyError
	if !errors.As(err, &npk) || npk.Tables[0] != id {
		t.Fatalf("no key: got %v", err)
	}
	keys := func(db, table string) ([]string, bool) { return []string{"b", "a"}, db == "d" && table == "t" }
	tbl, err := schema.TableFromInfo(id, info, schema.Options{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tbl.Schema.Key, []int{1, 0}) {
		t.Fatalf("key = %v", tbl.Schema.Key)
	}
	info.PrimaryKey = []string{"a"}
	if tbl, err = schema.TableFromInfo(id, info, schema.Options{}); err != nil || !reflect.DeepEqual(tbl.Schema.Key, []int{0}) {
		t.Fatalf("primary key: %v %v", tbl, err)
	}
	bad := func(db, table string) ([]string, bool) { return []string{"zz"}, true }
	if _, err := schema.TableFromInfo(id, info, schema.Options{Keys: bad}); err == nil {
		t.Fatal("unknown key column: want an error")
	}
}

func TestSchemaCacheVersions(t *testing.T) {
	id := change.TableID{DB: "d", Table: "t"}
	hist := New(binlogpos.Position{}, func(string, string) bool { return true }, Env{MariaDB: true, IntWidths: true})
	c := NewCache(hist, nil, schema.Options{}, slog.New(slog.DiscardHandler))
	at := func(off uint32) binlogpos.Position { return binlogpos.Position{File: "b.000001", Offset: off} }
	hist.Record(id, at(1), &schema.TableShape{
		Columns:    []schema.InfoColumn{{Name: "a", DataType: "int", ColumnType: "int(11)"}},
		PrimaryKey: []string{"a"},
	})
	changed, _, err := c.AfterDDL([]change.TableID{id}, at(1))
	if err != nil || len(changed) != 1 || changed[0].Schema.Version != 1 {
		t.Fatalf("create: %v %v", changed, err)
	}
	if changed, _, _ = c.AfterDDL([]change.TableID{id}, at(1)); len(changed) != 0 {
		t.Fatal("unchanged shape announced again")
	}
	if _, err := hist.Apply(t.Context(), nil, slog.New(slog.DiscardHandler), "d", "ALTER TABLE t ADD b DATE", at(2)); err != nil {
		t.Fatal(err)
	}
	if changed, _, _ = c.AfterDDL([]change.TableID{id}, at(2)); len(changed) != 1 || changed[0].Schema.Version != 2 {
		t.Fatalf("add column: %v", changed)
	}
	if _, err := hist.Apply(t.Context(), nil, slog.New(slog.DiscardHandler), "d", "DROP TABLE t", at(3)); err != nil {
		t.Fatal(err)
	}
	if changed, _, _ = c.AfterDDL([]change.TableID{id}, at(3)); len(changed) != 0 || c.tables[id] != nil {
		t.Fatal("drop: entry kept")
	}
}

func TestClassifyQuery(t *testing.T) {
	for q, want := range map[string]ddlKind{"BEGIN": QueryBegin, "/* x */ COMMIT": QueryCommit,
		"alter table t add c int": QueryDDL, "GRANT SELECT ON *.* TO u": queryOther, "# c\nDROP TABLE t": QueryDDL,
		"insert into t values (1)": QueryDML, "/* x */ DELETE FROM t": QueryDML, "REPLACE t SET a=1": QueryDML} {
		if got := ClassifyQuery(q); got != want {
			t.Errorf("classifyQuery(%q) = %d, want %d", q, got, want)
		}
	}
}

// TestDMLTable reads the table a DML statement of a Query event writes (binlog_format
// STATEMENT or MIXED), which the stream stops at when it is captured.
func TestDMLTable(t *testing.T) {
	tests := []struct {
		query string
		want  change.TableID
		ok    bool
	}{
		{"INSERT INTO t VALUES (1)", change.TableID{DB: "app", Table: "t"}, true},
		{"insert low_priority ignore into `other`.`t 2` (a) values (1)", change.TableID{DB: "other", Table: "t 2"}, true},
		{"REPLACE app2.t SET a=1", change.TableID{DB: "app2", Table: "t"}, true},
		{"/* c */ UPDATE IGNORE t SET a=1", change.TableID{DB: "app", Table: "t"}, true},
		{"UPDATE t JOIN u ON t.id=u.id SET t.a=1", change.TableID{DB: "app", Table: "t"}, true},
		{"DELETE QUICK FROM `t` WHERE id=1", change.TableID{DB: "app", Table: "t"}, true},
		{"DELETE t, u FROM t JOIN u", change.TableID{}, false},
	}
	for _, tc := range tests {
		got, ok := DMLTable("app", tc.query)
		if got != tc.want || ok != tc.ok {
			t.Errorf("dmlTable(%q) = %v, %v; want %v, %v", tc.query, got, ok, tc.want, tc.ok)
		}
	}
}

// TestTableFromMapNullableKey refuses a key column that the TABLE_MAP shows nullable.
func TestTableFromMapNullableKey(t *testing.T) {
	tm := &replication.TableMapEvent{Schema: []byte("d"), Table: []byte("t"), ColumnCount: 2,
		ColumnType: []byte{mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONG}, ColumnMeta: []uint16{0, 0},
		NullBitmap: []byte{0b10}, ColumnName: [][]byte{[]byte("a"), []byte("b")}}
	for key, nullable := range map[string]bool{"a": false, "b": true} {
		opts := schema.Options{Keys: func(string, string) ([]string, bool) { return []string{key}, true }}
		_, err := schema.TableFromMap(tm, nil, opts)
		var nk *schema.NullableKeyError
		if got := errors.As(err, &nk); got != nullable || got && nk.Column != key || !nullable && err != nil {
			t.Errorf("key %s: got %v, want a NullableKeyError: %v", key, err, nullable)
		}
	}
}

// TestTableFromMapNotNull takes each column's nullability from the TABLE_MAP's null bits,
// over the schema history's, and the comment from the history.
func TestTableFromMapNotNull(t *testing.T) {
	tm := &replication.TableMapEvent{Schema: []byte("d"), Table: []byte("t"), ColumnCount: 3,
		ColumnType: []byte{mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONG}, ColumnMeta: []uint16{0, 0, 0},
		NullBitmap: []byte{0b110}, ColumnName: [][]byte{[]byte("a"), []byte("b"), []byte("c")}}
	info := &schema.TableShape{PrimaryKey: []string{"a"}, Columns: []schema.InfoColumn{
		{Name: "a", DataType: "int", ColumnType: "int(11)", NotNull: true, Comment: "the key"},
		{Name: "b", DataType: "int", ColumnType: "int(11)", NotNull: true}, // stale: the binlog says nullable
		{Name: "c", DataType: "int", ColumnType: "int(11)", Comment: "c's"},
	}}
	tbl, err := schema.TableFromMap(tm, info, schema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []change.Column{{Name: "a", SQLType: "int(11)", NotNull: true, Comment: "the key"},
		{Name: "b", SQLType: "int(11)"}, {Name: "c", SQLType: "int(11)", Comment: "c's"}}
	if !reflect.DeepEqual(tbl.Schema.Columns, want) {
		t.Errorf("columns\n got %+v\nwant %+v", tbl.Schema.Columns, want)
	}
	if fromInfo, err := schema.TableFromInfo(tbl.Schema.Table, info, schema.Options{}); err != nil || !fromInfo.Schema.Columns[1].NotNull {
		t.Errorf("tableFromInfo: %v, column b %+v, want NOT NULL as information_schema says", err, fromInfo.Schema.Columns[1])
	}
}

// TestSchemaCacheKeylessCreate: a table created without a key is told neither as created
// nor as an error; the DDL that gives it its key tells it as created (keyed). A table that
// existed with a key and loses it is an error, as before.
func TestSchemaCacheKeylessCreate(t *testing.T) {
	id := change.TableID{DB: "d", Table: "t2"}
	log := slog.New(slog.DiscardHandler)
	hist := New(binlogpos.Position{}, func(string, string) bool { return true }, Env{MariaDB: true, IntWidths: true})
	c := NewCache(hist, nil, schema.Options{}, log)
	at := func(off uint32) binlogpos.Position { return binlogpos.Position{File: "b.000001", Offset: off} }
	for i, step := range []struct {
		ddl     string
		changed bool // told as a new shape
		keyed   bool // told as created (it had no description: no key before)
		err     bool
	}{
		{"CREATE TABLE t2 (a INT, b INT)", false, false, false},
		{"ALTER TABLE t2 ADD c INT", false, false, false},
		{"ALTER TABLE t2 ADD PRIMARY KEY (a)", true, true, false},
		{"ALTER TABLE t2 ADD d INT", true, false, false},
		{"ALTER TABLE t2 DROP PRIMARY KEY", false, false, true},
	} {
		pos := at(uint32(100 * (i + 1)))
		if _, err := hist.Apply(t.Context(), nil, log, "d", step.ddl, pos); err != nil {
			t.Fatal(err)
		}
		changed, keyed, err := c.AfterDDL([]change.TableID{id}, pos)
		if step.err {
			if !errors.As(err, new(*schema.NoPrimaryKeyError)) {
				t.Errorf("%s: %v, want a NoPrimaryKeyError", step.ddl, err)
			}
			continue
		}
		if err != nil || (len(changed) == 1) != step.changed || keyed[id] != step.keyed {
			t.Errorf("%s: changed %v, keyed %v, err %v", step.ddl, changed, keyed, err)
		}
	}
}
