package binlog

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/history"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
)

// schemaChanges returns the SchemaChanges a DDL statement makes for the captured tables
// among ids (those whose shape the schema history recorded at at) and, for TRUNCATE TABLE,
// for the captured tables it names: each tells the statement, its position and the shape
// before it (change.DDL). A table whose shape changed gets its new shape (a table created,
// or renamed onto the name, has no previous shape); a table dropped or renamed away, and a
// table truncated, get their last shape. created are the tables the statement's CREATE
// TABLE makes.
func (s *Stream) schemaChanges(db, query string, at binlogpos.Position, ids, created []change.TableID) ([]change.Change, error) {
	var captured, dropped []change.TableID
	for _, id := range ids {
		if !s.cfg.Tables(id.DB, id.Table) {
			continue
		}
		if info, _ := s.cache.Hist.Shape(id); info == nil {
			dropped = append(dropped, id)
		}
		captured = append(captured, id)
	}
	ddl := func(id change.TableID, kind change.DDLKind, prev *schema.TableShape) *change.DDL {
		d := &change.DDL{Kind: kind, Statement: query, Position: at.String()}
		if prev != nil {
			d.Previous = schema.SchemaOfInfo(id, prev, s.cache.Opts)
		}
		return d
	}
	var out []change.Change
	for _, id := range dropped {
		if prev := s.cache.Hist.Previous(id, at); prev != nil {
			d := ddl(id, change.Dropped, prev)
			out = append(out, change.Change{Schema: d.Previous, Op: change.SchemaChange, DDL: d})
		}
	}
	if len(captured) > 0 {
		changed, keyed, err := s.cache.AfterDDL(captured, at, created)
		if err != nil {
			return nil, s.schemaError(captured[0], fmt.Errorf("after %q: %w", query, err))
		}
		for _, t := range changed {
			prev := s.cache.Hist.Previous(t.Schema.Table, at)
			if keyed[t.Schema.Table] {
				prev = nil // created without a key, told only now: as created with this shape
			}
			d := ddl(t.Schema.Table, change.Reshaped, prev)
			out = append(out, change.Change{Schema: t.Schema, Op: change.SchemaChange, DDL: d})
		}
	}
	for _, id := range truncatedTables(db, query) {
		if info, _ := s.cache.Hist.Shape(id); info != nil && s.cfg.Tables(id.DB, id.Table) {
			d := ddl(id, change.Truncated, info)
			out = append(out, change.Change{Schema: d.Previous, Op: change.SchemaChange, DDL: d})
		}
	}
	return out, nil
}

var truncatePattern = regexp.MustCompile("(?is)^TRUNCATE\\s+(?:TABLE\\s+)?((?:`(?:[^`]|``)+`|[\\w$]+)(?:\\s*\\.\\s*(?:`(?:[^`]|``)+`|[\\w$]+))?)\\s*(?:;\\s*)?$")

// truncatedTables returns the table a TRUNCATE [TABLE] statement names (none for any other
// statement), in database db when the name is not qualified.
func truncatedTables(db, query string) []change.TableID {
	m := truncatePattern.FindStringSubmatch(strings.TrimSpace(history.StripLeadingComments(query)))
	if m == nil {
		return nil
	}
	unquote := func(s string) string {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "`") {
			return strings.ReplaceAll(s[1:len(s)-1], "``", "`")
		}
		return s
	}
	name := m[1]
	if i := qualifierDot(name); i >= 0 {
		return []change.TableID{{DB: unquote(name[:i]), Table: unquote(name[i+1:])}}
	}
	return []change.TableID{{DB: db, Table: unquote(name)}}
}

// qualifierDot returns the index of the dot between a database and a table name outside
// backquotes, or -1.
func qualifierDot(name string) int {
	quoted := false
	for i, r := range name {
		switch {
		case r == '`':
			quoted = !quoted
		case r == '.' && !quoted:
			return i
		}
	}
	return -1
}
