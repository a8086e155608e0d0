package history

import (
	"regexp"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/ingestkit/ingest/change"
)

var (
	createTableDDL = regexp.MustCompile(`(?i)^CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\b`)
	renameDDL      = regexp.MustCompile(`(?i)^(?:RENAME\s+TABLES?|ALTER\s+(?:ONLINE\s+|IGNORE\s+)*TABLE)\b`)
)

// CreatedTables returns the tables a DDL statement of the binlog, run with default database
// db, creates: CREATE TABLE (also … LIKE and … SELECT, and MariaDB's CREATE OR REPLACE). A
// CREATE TABLE IF NOT EXISTS counts only when the history knows that the table did not
// exist: otherwise it may have existed before the stream's start, with rows that the binlog
// read does not hold.
func CreatedTables(db, query string, view shapeView) []change.TableID {
	if !createTableDDL.MatchString(StripLeadingComments(query)) {
		return nil
	}
	stmts, err := parseDDL(query)
	if err != nil {
		return nil
	}
	var ids []change.TableID
	for _, stmt := range stmts {
		s, ok := stmt.(*ast.CreateTableStmt)
		if !ok || s.TemporaryKeyword != ast.TemporaryNone {
			continue
		}
		id := tableIn(db, s.Table)
		if s.IfNotExists {
			if info, known := view.Shape(id); !known || info != nil {
				continue
			}
		}
		ids = append(ids, id)
	}
	return ids
}

// RenamedTables returns the names that a RENAME TABLE or ALTER TABLE … RENAME statement of
// the binlog, run with default database db, gives to tables, and that held no table before
// it (as the history view knows them): a table renamed onto such a name has rows that the
// binlog read does not hold. A name that held a table is a swap (RENAME TABLE t TO t_old,
// t_new TO t, as online schema change tools do): the table goes on under the name with
// another shape, and is left out.
func RenamedTables(db, query string, view shapeView) []change.TableID {
	if !renameDDL.MatchString(StripLeadingComments(query)) {
		return nil
	}
	stmts, err := parseDDL(query)
	if err != nil {
		return nil
	}
	var ids []change.TableID
	add := func(tn *ast.TableName) {
		id := tableIn(db, tn)
		if info, known := view.Shape(id); known && info != nil {
			return
		}
		ids = append(ids, id)
	}
	for _, stmt := range stmts {
		switch s := stmt.(type) {
		case *ast.RenameTableStmt:
			for _, tt := range s.TableToTables {
				add(tt.NewTable)
			}
		case *ast.AlterTableStmt:
			for _, spec := range s.Specs {
				if spec.Tp == ast.AlterTableRenameTable && spec.NewTable != nil {
					add(spec.NewTable)
				}
			}
		}
	}
	return ids
}
