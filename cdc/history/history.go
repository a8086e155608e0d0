package history

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
)

// History is the shape of each tracked table at every point of the binlog the stream
// has passed: the shapes read from information_schema at the start position, then each DDL
// applied in binlog order (ddlapply.go). Every event decodes with the facts of its position
// (TINYINT(1)-ness, MariaDB JSON checks, SQL types; the names and order as well when the
// binlog carries no column names), never with those of a later DDL.
//
// Each shape is a version stamped with the position from which it holds: the start position
// for the initial shapes, the End position of the DDL's transaction for the others. The
// history is stored with the stream's positions as opaque JSON ([Source.SchemaHistory],
// [Config.SchemaHistory]); a stored history may be newer than the stored position (taken
// later), because a restore drops the versions stamped after the position it resumes from.
//
// Tables followed: the captured ones, and any table created in, or renamed into, a database
// holding a captured table (so that CREATE TABLE x LIKE t, ALTER TABLE x, RENAME TABLE x TO
// t, the way online schema change tools work, ends with the right shape for t).
//
// The stream goroutine changes the history; [Source.SchemaHistory] encodes it from any
// goroutine, hence the mutex. Shapes in versions are never modified.
type History struct {
	mu       sync.Mutex
	tables   map[change.TableID][]shapeVersion
	base     binlogpos.Position // the stream's start position: the stamp of the initial shapes
	encoded  []byte             // the JSON form, nil when stale
	lastDDL  string             // the stamp of the last DDL applied: a DDL is applied once
	captured func(db, table string) bool
	env      Env // mariaDB and intWidths; track and dbCharset are set per statement
	charsets map[string]string
}

type shapeVersion struct {
	at   binlogpos.Position
	info *schema.TableShape // nil: the table does not exist from at on
}

// New returns the history of the tables captured selects, with no shapes yet: they are
// recorded from information_schema at base (Record) or restored from a stored history.
func New(base binlogpos.Position, captured func(db, table string) bool, env Env) *History {
	return &History{tables: map[change.TableID][]shapeVersion{}, base: base, captured: captured,
		env: env, charsets: map[string]string{}}
}

// Shape returns the current shape of a table (shapeView).
func (h *History) Shape(id change.TableID) (*schema.TableShape, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	vs := h.tables[id]
	if len(vs) == 0 {
		return nil, false
	}
	return vs[len(vs)-1].info, true
}

// Previous returns the shape a table had before the version stamped at, which a DDL at at
// has just recorded: nil when the table did not exist (or was not known) before it.
func (h *History) Previous(id change.TableID, at binlogpos.Position) *schema.TableShape {
	h.mu.Lock()
	defer h.mu.Unlock()
	vs := h.tables[id]
	if n := len(vs); n >= 2 && vs[n-1].at.String() == at.String() {
		return vs[n-2].info
	}
	return nil
}

// tablesIn lists the existing tables of db (shapeView).
func (h *History) tablesIn(db string) []change.TableID {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ids []change.TableID
	for id, vs := range h.tables {
		if id.DB == db && vs[len(vs)-1].info != nil {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b change.TableID) int { return strings.Compare(a.Table, b.Table) })
	return ids
}

// track reports whether a table the history does not know is to be followed: it is captured
// or its database holds a captured table.
func (h *History) track(id change.TableID) bool {
	if h.captured(id.DB, id.Table) {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for other, vs := range h.tables {
		if other.DB == id.DB && vs[len(vs)-1].info != nil && h.captured(other.DB, other.Table) {
			return true
		}
	}
	return false
}

// Record makes info the table's shape from at on. It reports whether the shape changed.
func (h *History) Record(id change.TableID, at binlogpos.Position, info *schema.TableShape) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	vs := h.tables[id]
	if len(vs) > 0 && reflect.DeepEqual(vs[len(vs)-1].info, info) {
		return false
	}
	if len(vs) == 0 && info == nil {
		return false
	}
	if len(vs) > 0 && vs[len(vs)-1].at.String() == at.String() {
		vs[len(vs)-1].info = info
	} else {
		h.tables[id] = append(vs, shapeVersion{at: at, info: info})
	}
	h.encoded = nil
	return true
}

// infoLoader reads information_schema: a table's facts (nil, nil for a table that does not
// exist) and a database's default character set.
type infoLoader interface {
	loadTable(ctx context.Context, id change.TableID) (*schema.TableShape, error)
	dbCharset(ctx context.Context, db string) (string, error)
}

var databaseDDL = regexp.MustCompile(`(?i)^(?:CREATE|ALTER)\s+(?:DATABASE|SCHEMA)\b`)

// Apply applies a DDL statement of the binlog, run with default database db and ending its
// transaction at position at, and returns the tables whose shape it changed (or dropped).
// A statement it cannot derive shapes from makes it read the tables from information_schema
// (their state now, not at the statement when the stream lags behind later DDL) and log a
// warning. The error is information_schema's.
func (h *History) Apply(ctx context.Context, loader infoLoader, log *slog.Logger, db, query string, at binlogpos.Position) ([]change.TableID, error) {
	stamp := at.String()
	if stamp != "" && stamp == h.lastDDL {
		return nil, nil // replayed after a reconnect
	}
	h.lastDDL = stamp
	if databaseDDL.MatchString(StripLeadingComments(query)) {
		clear(h.charsets) // a database's default character set may have changed
	}
	env := h.env
	env.track = h.track
	env.dbCharset = func(name string) string {
		if cs, ok := h.charsets[name]; ok || loader == nil {
			return cs
		}
		cs, err := loader.dbCharset(ctx, name)
		if err != nil {
			log.Warn("cdc: read the default character set of a database", "database", name, "error", err)
			return ""
		}
		h.charsets[name] = cs
		return cs
	}
	res := applyDDL(db, query, h, env)
	var changed []change.TableID
	for _, u := range res.updates {
		if h.Record(u.id, at, u.info) {
			changed = append(changed, u.id)
		}
	}
	reread := res.reread
	if res.all {
		reread = append(reread, h.tablesIn(db)...)
	}
	if len(reread) == 0 || loader == nil {
		return changed, nil
	}
	log.Warn("cdc: the schema history cannot follow a DDL statement; reading the tables from information_schema as they are now "+
		"(events of these tables before a later DDL may decode with the later columns)",
		"query", query, "tables", reread, "reason", res.problem, "position", stamp)
	for _, id := range reread {
		info, err := loader.loadTable(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("read information_schema of %s: %w", id, err)
		}
		if h.Record(id, at, info) && !slices.Contains(changed, id) {
			changed = append(changed, id)
		}
	}
	return changed, nil
}

// File is the stored form of a history. Format 1: every table with its versions in binlog order;
// a version's shape is null from a DROP TABLE (or RENAME away) on.
type File struct {
	Format int            `json:"format"`
	Tables []historyTable `json:"tables"`
}

type historyTable struct {
	DB       string           `json:"db"`
	Table    string           `json:"table"`
	Versions []historyVersion `json:"versions"`
}

type historyVersion struct {
	At    string             `json:"at"`
	Shape *schema.TableShape `json:"shape"`
}

const historyFormat = 1

// Encode returns the history's JSON form. The slice is shared and never modified: it is
// the same until the history changes.
func (h *History) Encode() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.encoded != nil {
		return h.encoded
	}
	f := File{Format: historyFormat, Tables: make([]historyTable, 0, len(h.tables))}
	for id, vs := range h.tables {
		t := historyTable{DB: id.DB, Table: id.Table, Versions: make([]historyVersion, len(vs))}
		for i, v := range vs {
			t.Versions[i] = historyVersion{At: v.at.String(), Shape: v.info}
		}
		f.Tables = append(f.Tables, t)
	}
	slices.SortFunc(f.Tables, func(a, b historyTable) int {
		if c := strings.Compare(a.DB, b.DB); c != 0 {
			return c
		}
		return strings.Compare(a.Table, b.Table)
	})
	b, err := json.Marshal(f)
	if err != nil { // cannot happen: plain strings, ints and bools
		panic(fmt.Sprintf("cdc: encode the schema history: %v", err))
	}
	h.encoded = b
	return b
}

// Parse reads a stored history and checks its form.
func Parse(data []byte) (*File, error) {
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("cdc: stored schema history: %w", err)
	}
	if f.Format != historyFormat {
		return nil, fmt.Errorf("cdc: stored schema history: format %d is not known (this version writes %d)", f.Format, historyFormat)
	}
	for _, t := range f.Tables {
		for _, v := range t.Versions {
			if _, err := binlogpos.ParsePosition(v.At); err != nil {
				return nil, fmt.Errorf("cdc: stored schema history of %s.%s: %w", t.DB, t.Table, err)
			}
			if v.Shape != nil && len(v.Shape.Columns) == 0 {
				return nil, fmt.Errorf("cdc: stored schema history of %s.%s: a shape without columns", t.DB, t.Table)
			}
		}
	}
	return &f, nil
}

// Restore installs the shapes a stored history gives for position at: for each table the
// last version stamped at or before at. Later versions (a history stored after the
// position) are dropped: the stream meets their DDL again. A table that does not exist at
// at (dropped or renamed away) is kept as known not to exist: information_schema, which may
// show it again now (created or renamed in after at), must not fill it in at at, or a
// RENAME of another table onto its name ahead would look like a swap onto a live table.
func (h *History) Restore(f *File, at binlogpos.Position, log *slog.Logger) {
	for _, t := range f.Tables {
		var cur *historyVersion
		for i := range t.Versions {
			v := &t.Versions[i]
			pos, _ := binlogpos.ParsePosition(v.At)
			before, ok := atOrBefore(pos, at)
			if !ok {
				log.Warn("cdc: a schema history version cannot be ordered with the start position; taking it as before",
					"table", t.DB+"."+t.Table, "version", v.At, "position", at.String())
				before = true
			}
			if before {
				cur = v
			}
		}
		if cur == nil {
			continue
		}
		pos, _ := binlogpos.ParsePosition(cur.At)
		if cur.Shape == nil {
			h.tables[change.TableID{DB: t.DB, Table: t.Table}] = []shapeVersion{{at: pos}}
			continue
		}
		info := cur.Shape.Clone()
		info.RefreshJSON()
		h.tables[change.TableID{DB: t.DB, Table: t.Table}] = []shapeVersion{{at: pos, info: info}}
	}
	h.encoded = nil
}

// atOrBefore reports whether p is at or before q: by GTID when both have them, by binlog
// file and offset otherwise. ok is false when they cannot be ordered.
func atOrBefore(p, q binlogpos.Position) (before, ok bool) {
	if c, ok := p.Compare(q); ok {
		return c <= 0, true
	}
	if p.File != "" && q.File != "" {
		c, ok := binlogpos.CompareBinlogFiles(p.File, q.File)
		switch {
		case !ok:
			return false, false
		case c != 0:
			return c < 0, true
		}
		return p.Offset <= q.Offset, true
	}
	return false, false
}
