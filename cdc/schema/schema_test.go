package schema

import (
	"errors"
	"reflect"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
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
		tp, n := realType(tc.tp, tc.meta)
		if tp != tc.wantTp || n != tc.wantN {
			t.Errorf("realType(%d, %d) = %d, %d; want %d, %d", tc.tp, tc.meta, tp, n, tc.wantTp, tc.wantN)
		}
	}
}

func TestColumnFromMap(t *testing.T) {
	opts := Options{TinyInt1AsBool: true, Collations: knownCollations}
	tests := []struct {
		name  string
		tp    byte
		meta  uint16
		facts binlogFacts
		info  *InfoColumn
		want  Class
		check func(Column) bool
	}{
		{"tinyint1 bool", mysql.MYSQL_TYPE_TINY, 0, binlogFacts{Name: "b"},
			&InfoColumn{Name: "b", DataType: "tinyint", ColumnType: "tinyint(1)"}, ClassBool, nil},
		{"tinyint1 without info", mysql.MYSQL_TYPE_TINY, 0, binlogFacts{Name: "b"}, nil, ClassInt, nil},
		{"json by check", mysql.MYSQL_TYPE_BLOB, 4, binlogFacts{Name: "j", Collation: 46, collationKnown: true},
			&InfoColumn{Name: "j", DataType: "longtext", ColumnType: "longtext", Charset: "utf8mb4", JSON: true}, ClassJSON, nil},
		{"text", mysql.MYSQL_TYPE_BLOB, 2, binlogFacts{Name: "t", Collation: 45, collationKnown: true}, nil, ClassString, nil},
		{"blob", mysql.MYSQL_TYPE_BLOB, 2, binlogFacts{Name: "t", Collation: 63, collationKnown: true}, nil, ClassBytes, nil},
		{"binary(4)", mysql.MYSQL_TYPE_STRING, 65028, binlogFacts{Name: "b", Collation: 63, collationKnown: true}, nil, ClassBinary,
			func(c Column) bool { return c.Length == 4 }},
		{"bit(5)", mysql.MYSQL_TYPE_BIT, 5, binlogFacts{Name: "b"}, nil, ClassBit, func(c Column) bool { return c.Length == 5 }},
		{"bit(12)", mysql.MYSQL_TYPE_BIT, 1<<8 | 4, binlogFacts{Name: "b"}, nil, ClassBit, func(c Column) bool { return c.Length == 12 }},
		{"decimal", mysql.MYSQL_TYPE_NEWDECIMAL, 5126, binlogFacts{Name: "d"}, nil, ClassDecimal, func(c Column) bool { return c.Scale == 6 }},
		{"latin1 enum labels", mysql.MYSQL_TYPE_STRING, 63233, binlogFacts{Name: "e", Collation: 8, collationKnown: true,
			Labels: []string{"caf\xe9"}}, nil, ClassEnum, func(c Column) bool { return c.Labels[0] == "café" }},
		{"set from info labels", mysql.MYSQL_TYPE_STRING, 63489, binlogFacts{Name: "s"},
			&InfoColumn{Name: "s", DataType: "set", ColumnType: "set('a','it''s')", Charset: "utf8mb4"}, ClassSet,
			func(c Column) bool { return reflect.DeepEqual(c.Labels, []string{"a", "it's"}) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := columnFromMap(tc.tp, tc.meta, tc.facts, tc.info, opts)
			if err != nil {
				t.Fatal(err)
			}
			if c.class != tc.want || (tc.check != nil && !tc.check(c)) {
				t.Fatalf("got %+v, want class %s", c, tc.want)
			}
		})
	}
	if _, err := columnFromMap(mysql.MYSQL_TYPE_VARCHAR, 40, binlogFacts{Name: "v"}, nil, opts); err == nil {
		t.Error("text column without collation nor info: want an error")
	}
}

func TestParseEnumLabels(t *testing.T) {
	got := ParseEnumLabels(`enum('a','it''s','x,y','b\\c','')`)
	want := []string{"a", "it's", "x,y", `b\c`, ""}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestNewTableKeys(t *testing.T) {
	info := &TableShape{Columns: []InfoColumn{
		{Name: "a", DataType: "int", ColumnType: "int(11)"},
		{Name: "b", DataType: "varchar", ColumnType: "varchar(5)", Charset: "utf8mb4"},
	}}
	id := change.TableID{DB: "d", Table: "t"}
	_, err := TableFromInfo(id, info, Options{})
	var npk *NoPrimaryKeyError
	if !errors.As(err, &npk) || npk.Tables[0] != id {
		t.Fatalf("no key: got %v", err)
	}
	keys := func(db, table string) ([]string, bool) { return []string{"b", "a"}, db == "d" && table == "t" }
	tbl, err := TableFromInfo(id, info, Options{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tbl.Schema.Key, []int{1, 0}) {
		t.Fatalf("key = %v", tbl.Schema.Key)
	}
	info.PrimaryKey = []string{"a"}
	if tbl, err = TableFromInfo(id, info, Options{}); err != nil || !reflect.DeepEqual(tbl.Schema.Key, []int{0}) {
		t.Fatalf("primary key: %v %v", tbl, err)
	}
	bad := func(db, table string) ([]string, bool) { return []string{"zz"}, true }
	if _, err := TableFromInfo(id, info, Options{Keys: bad}); err == nil {
		t.Fatal("unknown key column: want an error")
	}
}

func TestTableFromMapNullableKey(t *testing.T) {
	tm := &replication.TableMapEvent{Schema: []byte("d"), Table: []byte("t"), ColumnCount: 2,
		ColumnType: []byte{mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONG}, ColumnMeta: []uint16{0, 0},
		NullBitmap: []byte{0b10}, ColumnName: [][]byte{[]byte("a"), []byte("b")}}
	for key, nullable := range map[string]bool{"a": false, "b": true} {
		opts := Options{Keys: func(string, string) ([]string, bool) { return []string{key}, true }}
		_, err := TableFromMap(tm, nil, opts)
		var nk *NullableKeyError
		if got := errors.As(err, &nk); got != nullable || got && nk.Column != key || !nullable && err != nil {
			t.Errorf("key %s: got %v, want a NullableKeyError: %v", key, err, nullable)
		}
	}
}

func TestTableFromMapNotNull(t *testing.T) {
	tm := &replication.TableMapEvent{Schema: []byte("d"), Table: []byte("t"), ColumnCount: 3,
		ColumnType: []byte{mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONG}, ColumnMeta: []uint16{0, 0, 0},
		NullBitmap: []byte{0b110}, ColumnName: [][]byte{[]byte("a"), []byte("b"), []byte("c")}}
	info := &TableShape{PrimaryKey: []string{"a"}, Columns: []InfoColumn{
		{Name: "a", DataType: "int", ColumnType: "int(11)", NotNull: true, Comment: "the key"},
		{Name: "b", DataType: "int", ColumnType: "int(11)", NotNull: true}, // stale: the binlog says nullable
		{Name: "c", DataType: "int", ColumnType: "int(11)", Comment: "c's"},
	}}
	tbl, err := TableFromMap(tm, info, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []change.Column{{Name: "a", SQLType: "int(11)", NotNull: true, Comment: "the key"},
		{Name: "b", SQLType: "int(11)"}, {Name: "c", SQLType: "int(11)", Comment: "c's"}}
	if !reflect.DeepEqual(tbl.Schema.Columns, want) {
		t.Errorf("columns\n got %+v\nwant %+v", tbl.Schema.Columns, want)
	}
	if fromInfo, err := TableFromInfo(tbl.Schema.Table, info, Options{}); err != nil || !fromInfo.Schema.Columns[1].NotNull {
		t.Errorf("tableFromInfo: %v, column b %+v, want NOT NULL as information_schema says", err, fromInfo.Schema.Columns[1])
	}
}
