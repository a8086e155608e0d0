package history

import (
	"regexp"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/ingestkit/ingest/change"
)

var createTableDDL = regexp.MustCompile(`(?i)^CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\b`)

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
		id := change.TableID{DB: s.Table.Schema.O, Table: s.Table.Name.O}
		if id.DB == "" {
			id.DB = db
		}
		if s.IfNotExists {
			if info, known := view.Shape(id); !known || info != nil {
				continue
			}
		}
		ids = append(ids, id)
	}
	return ids
}
