package history

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
)

// memShapes is a shapeView over a map, to which ddlResults are applied.
type memShapes map[change.TableID]*schema.TableShape

func (m memShapes) Shape(id change.TableID) (*schema.TableShape, bool) {
	info, ok := m[id]
	return info, ok
}

func (m memShapes) tablesIn(db string) []change.TableID {
	var ids []change.TableID
	for id, info := range m {
		if id.DB == db && info != nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// run applies statements in order; it returns the tables each statement sent to
// information_schema.
func (m memShapes) run(t *testing.T, env Env, stmts ...string) []string {
	t.Helper()
	var reread []string
	for _, q := range stmts {
		res := applyDDL("d", q, m, env)
		for _, u := range res.updates {
			m[u.id] = u.info
		}
		for _, id := range res.reread {
			reread = append(reread, id.String())
		}
		if res.all {
			reread = append(reread, "d.*")
		}
	}
	return reread
}

// describeShape writes a shape on one line: the columns (name, COLUMN_TYPE, character set,
// json), then the key and the table's character set.
func describeShape(info *schema.TableShape) string {
	if info == nil {
		return "(dropped)"
	}
	var cols []string
	for _, c := range info.Columns {
		s := c.Name + " " + c.ColumnType
		if c.Charset != "" {
			s += " " + c.Charset
		}
		if c.JSON {
			s += " json"
		}
		cols = append(cols, s)
	}
	return strings.Join(cols, ", ") + " | key " + strings.Join(info.PrimaryKey, ",") + " | " + info.Charset
}

var mariaEnv = Env{
	MariaDB: true, IntWidths: true,
	track:     func(id change.TableID) bool { return id.DB == "d" || id.DB == "l" },
	dbCharset: func(db string) string { return map[string]string{"d": "utf8mb4", "l": "latin1"}[db] },
}

func TestApplyDDL(t *testing.T) {
	const base = "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), flag TINYINT(1))"
	tests := []struct {
		name   string
		stmts  []string
		table  string // the table to describe ("t" by default)
		want   string
		reread []string
	}{
		{name: "create", stmts: []string{base},
			want: "id int(11), a int(11), b varchar(10) utf8mb4, flag tinyint(1) | key id | utf8mb4"},
		{name: "add after, first, last", stmts: []string{base,
			"ALTER TABLE t ADD COLUMN c DATE AFTER id", "ALTER TABLE t ADD z BIGINT UNSIGNED FIRST", "ALTER TABLE t ADD COLUMN e TEXT"},
			want: "z bigint(20) unsigned, id int(11), c date, a int(11), b varchar(10) utf8mb4, flag tinyint(1), e text utf8mb4 | key id | utf8mb4"},
		{name: "several clauses in order", stmts: []string{base,
			"ALTER TABLE t ADD COLUMN x INT FIRST, ADD y INT AFTER `x`, DROP COLUMN a, ADD COLUMN (p INT, q INT)"},
			want: "x int(11), y int(11), id int(11), b varchar(10) utf8mb4, flag tinyint(1), p int(11), q int(11) | key id | utf8mb4"},
		{name: "drop column", stmts: []string{base, "ALTER TABLE t DROP COLUMN a", "ALTER TABLE `d`.`t` DROP b"},
			want: "id int(11), flag tinyint(1) | key id | utf8mb4"},
		{name: "rename column moves the key", stmts: []string{base, "ALTER TABLE t RENAME COLUMN id TO ident, RENAME COLUMN b TO bee"},
			want: "ident int(11), a int(11), bee varchar(10) utf8mb4, flag tinyint(1) | key ident | utf8mb4"},
		{name: "modify tinyint(1) to int", stmts: []string{base, "ALTER TABLE t MODIFY flag INT"},
			want: "id int(11), a int(11), b varchar(10) utf8mb4, flag int(11) | key id | utf8mb4"},
		{name: "modify with position and charset", stmts: []string{base,
			"ALTER TABLE t MODIFY b VARCHAR(20) CHARACTER SET latin1 FIRST, MODIFY COLUMN flag TINYINT(1) AFTER id"},
			want: "b varchar(20) latin1, id int(11), flag tinyint(1), a int(11) | key id | utf8mb4"},
		{name: "change column", stmts: []string{base, "ALTER TABLE t CHANGE a amount DECIMAL(12,2) UNSIGNED NOT NULL AFTER flag"},
			want: "id int(11), b varchar(10) utf8mb4, flag tinyint(1), amount decimal(12,2) unsigned | key id | utf8mb4"},
		{name: "mariadb json column", stmts: []string{base, "ALTER TABLE t ADD COLUMN j JSON"},
			want: "id int(11), a int(11), b varchar(10) utf8mb4, flag tinyint(1), j longtext utf8mb4 json | key id | utf8mb4"},
		{name: "modify drops the column's own json check", stmts: []string{base, "ALTER TABLE t ADD COLUMN j JSON", "ALTER TABLE t MODIFY j LONGTEXT"},
			want: "id int(11), a int(11), b varchar(10) utf8mb4, flag tinyint(1), j longtext utf8mb4 | key id | utf8mb4"},
		{name: "a table json check survives modify and rename", stmts: []string{base,
			"ALTER TABLE t ADD k LONGTEXT, ADD CONSTRAINT kc CHECK (json_valid(k))", "ALTER TABLE t MODIFY k MEDIUMTEXT",
			"ALTER TABLE t RENAME COLUMN k TO kk"},
			want: "id int(11), a int(11), b varchar(10) utf8mb4, flag tinyint(1), kk mediumtext utf8mb4 json | key id | utf8mb4"},
		{name: "drop a json check", stmts: []string{base,
			"ALTER TABLE t ADD k LONGTEXT CHECK (json_valid(`k`)), ADD m TEXT, ADD CONSTRAINT mc CHECK (json_valid(m) AND length(m) < 100)",
			"ALTER TABLE t DROP CONSTRAINT mc", "ALTER TABLE t DROP CHECK k"},
			want: "id int(11), a int(11), b varchar(10) utf8mb4, flag tinyint(1), k longtext utf8mb4, m text utf8mb4 | key id | utf8mb4"},
		{name: "primary key changes", stmts: []string{base, "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (a, id)"},
			want: "id int(11), a int(11), b varchar(10) utf8mb4, flag tinyint(1) | key a,id | utf8mb4"},
		{name: "drop index primary", stmts: []string{base, "DROP INDEX `PRIMARY` ON t", "ALTER TABLE t ADD CONSTRAINT PRIMARY KEY (b)"},
			want: "id int(11), a int(11), b varchar(10) utf8mb4, flag tinyint(1) | key b | utf8mb4"},
		{name: "drop the key column", stmts: []string{base, "ALTER TABLE t DROP COLUMN id"},
			want: "a int(11), b varchar(10) utf8mb4, flag tinyint(1) | key  | utf8mb4"},
		{name: "rename table", stmts: []string{base, "RENAME TABLE t TO u"}, table: "u",
			want: "id int(11), a int(11), b varchar(10) utf8mb4, flag tinyint(1) | key id | utf8mb4"},
		{name: "renamed away", stmts: []string{base, "ALTER TABLE t ADD c INT, RENAME TO u"}, want: "(dropped)"},
		{name: "drop table", stmts: []string{base, "DROP TABLE IF EXISTS `t`, other /* generated by server */"}, want: "(dropped)"},
		{name: "drop database", stmts: []string{base, "DROP DATABASE d"}, want: "(dropped)"},
		{name: "truncate changes nothing", stmts: []string{base, "TRUNCATE TABLE t", "CREATE INDEX i ON t (a)"},
			want: "id int(11), a int(11), b varchar(10) utf8mb4, flag tinyint(1) | key id | utf8mb4"},
		{name: "online schema change", stmts: []string{base,
			"CREATE TABLE _t_new LIKE t", "ALTER TABLE _t_new ADD COLUMN n INT AFTER id",
			"RENAME TABLE t TO _t_old, _t_new TO t", "DROP TABLE _t_old"},
			want: "id int(11), n int(11), a int(11), b varchar(10) utf8mb4, flag tinyint(1) | key id | utf8mb4"},
		{name: "create as select is read back", stmts: []string{"CREATE TABLE t AS SELECT 1 AS id"}, want: "(dropped)", reread: []string{"d.t"}},
		{name: "alter of an unknown table is read back", stmts: []string{"ALTER TABLE t ADD c INT"}, want: "(dropped)", reread: []string{"d.t"}},
		{name: "inconsistent history is read back", stmts: []string{base, "ALTER TABLE t DROP COLUMN nope"},
			want: "id int(11), a int(11), b varchar(10) utf8mb4, flag tinyint(1) | key id | utf8mb4", reread: []string{"d.t"}},
		{name: "untracked tables are left alone", stmts: []string{base, "CREATE TABLE o.x (id INT PRIMARY KEY)", "ALTER TABLE o.x ADD c INT"},
			want: "id int(11), a int(11), b varchar(10) utf8mb4, flag tinyint(1) | key id | utf8mb4"},
		{name: "other statements", stmts: []string{base, "CREATE PROCEDURE p() BEGIN SELECT 1; END", "GRANT SELECT ON d.* TO x",
			"CREATE VIEW v AS SELECT * FROM t", "DROP TEMPORARY TABLE IF EXISTS t", "CREATE TEMPORARY TABLE t (z INT)"},
			want: "id int(11), a int(11), b varchar(10) utf8mb4, flag tinyint(1) | key id | utf8mb4"},

		// MariaDB syntax TiDB's parser rejects, through rewriteMariaDB.
		{name: "if exists variants", stmts: []string{base, "ALTER TABLE t ADD COLUMN IF NOT EXISTS a BIGINT, DROP COLUMN IF EXISTS nope",
			"ALTER TABLE t RENAME COLUMN IF EXISTS b TO bee", "ALTER TABLE t MODIFY COLUMN IF EXISTS nope INT"},
			want: "id int(11), a int(11), bee varchar(10) utf8mb4, flag tinyint(1) | key id | utf8mb4"},
		{name: "create or replace, alter online", stmts: []string{base, "CREATE OR REPLACE TABLE t (k INT UNSIGNED NOT NULL PRIMARY KEY, g POINT NOT NULL, u UUID)",
			"ALTER ONLINE TABLE t ADD COLUMN geometry GEOMETRY AFTER k, ADD i6 INET6 INVISIBLE"},
			want: "k int(10) unsigned, geometry geometry, g point, u uuid, i6 inet6 | key k | utf8mb4"},
		{name: "character sets the parser does not know", stmts: []string{
			"CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(5) CHARACTER SET cp1251, b TEXT COLLATE koi8r_general_ci, c CHAR(2)) DEFAULT CHARSET=ucs2",
			"ALTER TABLE t ADD d VARCHAR(3) CHARSET latin2 COLLATE latin2_czech_cs, ADD e VARCHAR(4) COLLATE utf8mb4_uca1400_ai_ci"},
			want: "id int(11), a varchar(5) cp1251, b text koi8r, c char(2) ucs2, d varchar(3) latin2, e varchar(4) utf8mb4 | key id | ucs2"},
		{name: "convert to character set", stmts: []string{"CREATE TABLE l.t (id INT PRIMARY KEY, v VARCHAR(5), x TEXT, y TINYTEXT CHARSET utf8mb4, b BLOB, e ENUM('a'))",
			"ALTER TABLE l.t CONVERT TO CHARACTER SET utf8mb4"}, table: "l.t",
			want: "id int(11), v varchar(5) utf8mb4, x mediumtext utf8mb4, y tinytext utf8mb4, b blob, e enum('a') utf8mb4 | key id | utf8mb4"},
		{name: "convert to a character set the parser does not know", stmts: []string{base, "ALTER TABLE t CONVERT TO CHARACTER SET cp1251, ADD z INT"},
			want: "id int(11), a int(11), b varchar(10) cp1251, flag tinyint(1), z int(11) | key id | cp1251"},
		{name: "executable comments", stmts: []string{"CREATE TABLE t (id INT PRIMARY KEY, c CHAR(1)) /*!40101 DEFAULT CHARSET=cp1250 */"},
			want: "id int(11), c char(1) cp1250 | key id | cp1250"},
		{name: "unreadable statement", stmts: []string{base, "ALTER TABLE t ADD COLUMN s INT WITH SYSTEM VERSIONING"},
			want: "id int(11), a int(11), b varchar(10) utf8mb4, flag tinyint(1) | key id | utf8mb4", reread: []string{"d.t"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := memShapes{}
			reread := m.run(t, mariaEnv, tc.stmts...)
			table := tc.table
			if table == "" {
				table = "t"
			}
			id := change.TableID{DB: "d", Table: table}
			if db, tbl, ok := strings.Cut(table, "."); ok {
				id = change.TableID{DB: db, Table: tbl}
			}
			if got := describeShape(m[id]); got != tc.want {
				t.Errorf("shape of %s\n got: %s\nwant: %s", id, got, tc.want)
			}
			if !slices.Equal(reread, tc.reread) {
				t.Errorf("read back %v, want %v", reread, tc.reread)
			}
		})
	}
}

// TestApplyDDLTypes checks information_schema's writing of every type (checked against
// MariaDB 10.11 by TestHistoryMatchesInformationSchema).
func TestApplyDDLTypes(t *testing.T) {
	m := memShapes{}
	m.run(t, mariaEnv, `CREATE TABLE t (a SERIAL, b BOOL, c TEXT(100), d LONG VARCHAR, f REAL, g FLOAT(30), h DEC(5,2),
		i NUMERIC, k INT1, l MIDDLEINT, m VARCHAR(10) BINARY, n VARCHAR(5) CHARACTER SET binary, q FLOAT(5),
		r DOUBLE(10,2) UNSIGNED, s TINYTEXT CHARSET utf8, u BIT(7), v ENUM('x','y''z') CHARACTER SET latin1, w YEAR(4),
		y LONGBLOB, z MEDIUMINT UNSIGNED ZEROFILL, aa DATETIME(6), ab TIMESTAMP NULL, ad BINARY, ae VARBINARY(3),
		ag INT(3), ah DECIMAL(7), at1 FLOAT(7,3), as1 SET('a','b'), aq TIME(3), ba BIT, bd TEXT(1000) CHARACTER SET latin1)`)
	info := m[change.TableID{DB: "d", Table: "t"}]
	var got []string
	for _, c := range info.Columns {
		got = append(got, fmt.Sprintf("%s %s %s %s %d %d", c.Name, c.DataType, c.ColumnType, c.Charset, c.Scale, c.Length))
	}
	want := []string{
		"a bigint bigint(20) unsigned  0 0", "b tinyint tinyint(1)  0 0", "c text text utf8mb4 0 65535",
		"d mediumtext mediumtext utf8mb4 0 16777215", "f double double  0 0", "g double double  0 0",
		"h decimal decimal(5,2)  2 0", "i decimal decimal(10,0)  0 0", "k tinyint tinyint(4)  0 0",
		"l mediumint mediumint(9)  0 0", "m varchar varchar(10) utf8mb4 0 40", "n varbinary varbinary(5)  0 5",
		"q float float  0 0", "r double double(10,2) unsigned  2 0", "s tinytext tinytext utf8mb3 0 255",
		"u bit bit(7)  0 7", "v enum enum('x','y''z') latin1 0 3", "w year year(4)  0 0",
		"y longblob longblob  0 4294967295", "z mediumint mediumint(8) unsigned zerofill  0 0",
		"aa datetime datetime(6)  6 0", "ab timestamp timestamp  0 0", "ad binary binary(1)  0 1",
		"ae varbinary varbinary(3)  0 3", "ag int int(3)  0 0", "ah decimal decimal(7,0)  0 0",
		"at1 float float(7,3)  3 0", "as1 set set('a','b') utf8mb4 0 12", "aq time time(3)  3 0", "ba bit bit(1)  0 1",
		"bd text text latin1 0 65535",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// MySQL 8.0.19+ writes no integer display widths but TINYINT(1)'s and ZEROFILL's.
	m = memShapes{}
	m.run(t, Env{}, "CREATE TABLE t (a INT UNSIGNED, b TINYINT(1), c INT(5) ZEROFILL, j JSON, y YEAR, PRIMARY KEY (a))")
	if got := describeShape(m[change.TableID{DB: "d", Table: "t"}]); got != "a int unsigned, b tinyint(1), c int(5) unsigned zerofill, j json, y year | key a | " {
		t.Errorf("mysql: %s", got)
	}
}

func TestRewriteMariaDB(t *testing.T) {
	tests := map[string]string{
		"CREATE OR REPLACE TABLE t (u UUID, `p` POINT)":                        "CREATE  TABLE t (u BLOB COMMENT '~ingest~type:uuid', `p` BLOB COMMENT '~ingest~type:point')",
		"ALTER ONLINE IGNORE TABLE t ADD COLUMN uuid UUID":                     "ALTER   TABLE t ADD COLUMN uuid BLOB COMMENT '~ingest~type:uuid'",
		"ALTER TABLE t RENAME COLUMN IF EXISTS a TO b":                         "ALTER TABLE t RENAME COLUMN  a TO b",
		"ALTER TABLE t ADD c TEXT CHARACTER SET ucs2 COLLATE x":                "ALTER TABLE t ADD c TEXT COMMENT '~ingest~charset:ucs2' COMMENT '~ingest~collate:x'",
		"CREATE TABLE t (a INT) DEFAULT CHARSET = 'cp1251'":                    "CREATE TABLE t (a INT)  COMMENT '~ingest~charset:cp1251'",
		"ALTER TABLE t CONVERT TO CHARSET koi8r, ADD b INT":                    "ALTER TABLE t COMMENT '~ingest~convert:koi8r', ADD b INT",
		"ALTER TABLE t ADD c VARCHAR(3) DEFAULT 'point' COMMENT 'a CHARSET b'": "ALTER TABLE t ADD c VARCHAR(3) DEFAULT 'point' COMMENT 'a CHARSET b'",
	}
	for in, want := range tests {
		if got := rewriteMariaDB(in); got != want {
			t.Errorf("rewriteMariaDB(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestHistoryRestore(t *testing.T) {
	id := change.TableID{DB: "d", Table: "t"}
	log := slog.New(slog.DiscardHandler)
	at := func(seq uint64) binlogpos.Position {
		return binlogpos.Position{File: "b.000001", Offset: uint32(100 * seq), MariaDB: []binlogpos.GTID{{Domain: 0, Server: 1, Seq: seq}}}
	}
	h := New(at(1), func(db, _ string) bool { return db == "d" }, Env{MariaDB: true, IntWidths: true})
	m := memShapes{}
	m.run(t, mariaEnv, "CREATE TABLE t (id INT PRIMARY KEY, flag TINYINT(1))")
	h.Record(id, at(1), m[id])
	steps := []string{"ALTER TABLE t MODIFY flag INT", "ALTER TABLE t ADD j JSON", "ALTER TABLE t RENAME COLUMN flag TO f", "DROP TABLE t"}
	var shapes []string // shapes[i]: after step i (shapes[0]: the initial one)
	shapes = append(shapes, describeShape(m[id]))
	for i, q := range steps {
		if _, err := h.Apply(t.Context(), nil, log, "d", q, at(uint64(10*(i+1)))); err != nil {
			t.Fatal(err)
		}
		info, _ := h.Shape(id)
		shapes = append(shapes, describeShape(info))
	}
	if n, _ := h.Apply(t.Context(), nil, log, "d", "CREATE TABLE t (z INT)", at(40)); n != nil {
		t.Fatalf("a DDL applied twice at one position: %v", n)
	}
	data := h.Encode()
	if &h.Encode()[0] != &data[0] {
		t.Error("encode returned a new slice for an unchanged history")
	}
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range shapes {
		for _, pos := range []binlogpos.Position{at(uint64(10*i) + 1), {File: "b.000001", Offset: uint32(1000*i) + 150}} {
			if i == 0 {
				pos = at(1)
			}
			r := New(pos, h.captured, h.env)
			r.Restore(f, pos, log)
			info, known := r.Shape(id)
			if got := describeShape(info); got != want || !known { // dropped: known not to exist
				t.Errorf("restored at %s: %s (known %v), want %s", pos, got, known, want)
			}
		}
	}
	if _, err := Parse([]byte(`{"format":9,"tables":[]}`)); err == nil {
		t.Error("unknown format accepted")
	}
}
