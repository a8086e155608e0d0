package history

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
)

func TestSchemaCacheVersions(t *testing.T) {
	id := change.TableID{DB: "d", Table: "t"}
	hist := New(binlogpos.Position{}, func(string, string) bool { return true }, Env{MariaDB: true, IntWidths: true})
	c := NewCache(hist, nil, schema.Options{}, slog.New(slog.DiscardHandler))
	at := func(off uint32) binlogpos.Position { return binlogpos.Position{File: "b.000001", Offset: off} }
	hist.Record(id, at(1), &schema.TableShape{
		Columns:    []schema.InfoColumn{{Name: "a", DataType: "int", ColumnType: "int(11)"}},
		PrimaryKey: []string{"a"},
	})
	changed, _, err := c.AfterDDL([]change.TableID{id}, at(1), nil)
	if err != nil || len(changed) != 1 || changed[0].Schema.Version != 1 {
		t.Fatalf("create: %v %v", changed, err)
	}
	if changed, _, _ = c.AfterDDL([]change.TableID{id}, at(1), nil); len(changed) != 0 {
		t.Fatal("unchanged shape announced again")
	}
	if _, err := hist.Apply(t.Context(), nil, slog.New(slog.DiscardHandler), "d", "ALTER TABLE t ADD b DATE", at(2)); err != nil {
		t.Fatal(err)
	}
	if changed, _, _ = c.AfterDDL([]change.TableID{id}, at(2), nil); len(changed) != 1 || changed[0].Schema.Version != 2 {
		t.Fatalf("add column: %v", changed)
	}
	if _, err := hist.Apply(t.Context(), nil, slog.New(slog.DiscardHandler), "d", "DROP TABLE t", at(3)); err != nil {
		t.Fatal(err)
	}
	if changed, _, _ = c.AfterDDL([]change.TableID{id}, at(3), nil); len(changed) != 0 || c.tables[id] != nil {
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
// TestTableFromMapNotNull takes each column's nullability from the TABLE_MAP's null bits,
// over the schema history's, and the comment from the history.
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
		changed, keyed, err := c.AfterDDL([]change.TableID{id}, pos, nil)
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

// TestSchemaCacheCreateProvesNew: a CREATE TABLE without a key of a table that the history
// had a shape for (one read from information_schema at the start, after the binlog ahead had
// created the table) is still a table created without a key, decided at its first rows.
func TestSchemaCacheCreateProvesNew(t *testing.T) {
	id := change.TableID{DB: "d", Table: "t2"}
	log := slog.New(slog.DiscardHandler)
	hist := New(binlogpos.Position{}, func(string, string) bool { return true }, Env{MariaDB: true, IntWidths: true})
	c := NewCache(hist, nil, schema.Options{}, log)
	at := func(off uint32) binlogpos.Position { return binlogpos.Position{File: "b.000001", Offset: off} }
	if _, err := hist.Apply(t.Context(), nil, log, "d", "CREATE TABLE t2 (a INT PRIMARY KEY)", at(100)); err != nil {
		t.Fatal(err)
	}
	q := "CREATE OR REPLACE TABLE t2 (a INT, b INT)"
	created := CreatedTables("d", q, hist)
	if _, err := hist.Apply(t.Context(), nil, log, "d", q, at(200)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.AfterDDL([]change.TableID{id}, at(200), nil); !errors.As(err, new(*schema.NoPrimaryKeyError)) {
		t.Fatalf("without the CREATE's proof: %v, want a NoPrimaryKeyError", err)
	}
	if changed, _, err := c.AfterDDL([]change.TableID{id}, at(200), created); err != nil || len(changed) != 0 || !c.Keyless[id] {
		t.Fatalf("with it: changed %v, err %v, keyless %v; want it kept for its first rows", changed, err, c.Keyless[id])
	}
}
