package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/ingestkit/ingest/cdc"
	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/cdc/snapshot"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/state"
)

// captureSet is the set of tables a pipeline with a snapshot captures: the tables its
// snapshot covered, and, with scan.binlog.newly-added-table.enabled, the tables matching
// source.tables that the stream meets a CREATE TABLE of. A table that matches but is not in
// the set is not captured at all (never half: the stream cannot give its rows from before),
// and the log says so once, at WARN. The set is stored with every checkpoint, in the
// snapshot progress's Tables ([snapshot.Progress.Compact] once the hand-off is over).
//
// The stream calls Match, created and uncaptured from go-mysql's reader goroutine; the
// forwarder calls encoded.
type captureSet struct {
	match  func(db, table string) bool // source.tables and tables.exclude
	newly  bool                        // scan.binlog.newly-added-table.enabled
	strict bool                        // scan.binlog.newly-added-table.keyless fail
	fixNow string                      // the warning's fix to include a table now
	log    *slog.Logger
	// joins, when set, is the directory of a re-snapshot request to add the tables renamed
	// into source.tables to (the pipeline snapshots them, runner/join.go); reflected, when
	// set, tells a rename that the snapshot of the table, read after it, reflects already
	// (snapshot.Handoff.Reflects).
	joins     string
	reflected func(change.TableID, binlogpos.Position) bool
	// onSkip, when set, is told of each table skipped for want of a key (the metric).
	onSkip func(change.TableID)

	mu     sync.Mutex
	base   snapshot.Progress // the compact progress; its Tables are kept in tables
	tables map[change.TableID]snapshot.TableState
	warned map[change.TableID]bool
	enc    []byte // the compact progress's JSON, nil when stale
}

func newCaptureSet(match func(db, table string) bool, newly, strict, withSnapshot bool, stateDir string, log *slog.Logger) *captureSet {
	return &captureSet{match: match, newly: newly, strict: strict, fixNow: includeNow(withSnapshot, stateDir), log: log,
		tables: map[change.TableID]snapshot.TableState{}, warned: map[change.TableID]bool{}}
}

// reset makes the set the finished snapshot's (p: Done, with Tables).
func (c *captureSet) reset(p snapshot.Progress) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.base = p.Compact()
	clear(c.tables)
	for _, t := range p.Tables {
		c.tables[t.ID()] = t
	}
	c.base.Tables, c.enc = nil, nil
}

// Match reports whether a table is captured (cdc.Config.Tables).
func (c *captureSet) Match(db, table string) bool {
	if !c.match(db, table) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tables[change.TableID{DB: db, Table: table}]
	return ok && t.Skipped == ""
}

// keyless is the stream's question about a captured table without a key (cdc.Config.Keyless):
// a table of the snapshot or of the pipeline's start stops the pipeline, as before; a table
// created after the start is decided at its first rows (rows), and then skipped with a
// warning, or, with scan.binlog.newly-added-table.keyless fail, stops the pipeline.
func (c *captureSet) keyless(id change.TableID, rows bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tables[id]
	if !ok || t.From == "" {
		return &schema.NoPrimaryKeyError{Tables: []change.TableID{id}}
	}
	if !rows {
		return nil
	}
	if c.strict {
		return fmt.Errorf("a table created after the start has no primary key at its first rows "+
			"(scan.binlog.newly-added-table.keyless: fail; skip leaves such tables out): %w",
			&schema.NoPrimaryKeyError{Tables: []change.TableID{id}})
	}
	t.Skipped = snapshot.SkippedNoKey
	c.tables[id] = t
	c.enc = nil
	c.warned[id] = true
	c.log.Warn("table "+id.String()+" was created after the start without a primary key and still has none at its first rows: "+
		"it is not captured (scan.binlog.newly-added-table.keyless: skip), now or later; the other tables go on. "+
		"To include it, give it a key (transform: - source-table: "+id.String()+", primary-keys: <columns>, "+
		"or ALTER TABLE "+id.String()+" ADD PRIMARY KEY (…)) and "+c.fixNow,
		"table", id.String(), "created_at", t.From)
	if c.onSkip != nil {
		c.onSkip(id)
	}
	return nil
}

// created is the stream's report of a CREATE TABLE (cdc.Config.Created): a matching table
// not in the set joins it with the flag on, and is warned about with the flag off. A
// captured table created again (dropped or renamed away before) stays captured, from its new
// CREATE: all its rows follow it in the binlog, and whether it has a key is decided at its
// first rows, as for any table created after the start. A table skipped for want of a key
// and created again is a new table.
func (c *captureSet) created(id change.TableID, at binlogpos.Position) {
	if !c.match(id.DB, id.Table) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tables[id]
	switch {
	case ok && t.Skipped == "":
		if t.From != at.String() {
			c.tables[id] = snapshot.TableState{DB: id.DB, Table: id.Table, From: at.String()}
			c.enc = nil
		}
		return
	case ok && !c.newly:
		return
	}
	if !c.newly {
		c.warnLocked(id, false)
		return
	}
	c.tables[id] = snapshot.TableState{DB: id.DB, Table: id.Table, From: at.String()}
	c.enc = nil
	c.log.Info("a table created after the start matches source.tables: captured from its CREATE TABLE (scan.binlog.newly-added-table.enabled)",
		"table", id.String(), "position", at.String())
}

// renamed is the stream's report of a table renamed onto a name that held no table
// (cdc.Config.Renamed; a swap onto a live name is not reported). If source.tables matches
// it, the name now holds rows that the binlog read does not hold: when tables can join
// (joins set), and the name was captured before (renamed away, now back) or new tables are
// (scan.binlog.newly-added-table.enabled), the table is added to the re-snapshot request,
// which the running pipeline takes within seconds; otherwise it is warned about.
func (c *captureSet) renamed(id change.TableID, at binlogpos.Position) {
	if !c.match(id.DB, id.Table) || c.reflected != nil && c.reflected(id, at) {
		return
	}
	c.mu.Lock()
	t, captured := c.tables[id]
	captured = captured && t.Skipped == ""
	if c.joins == "" || !captured && !c.newly {
		if !captured {
			c.warnLocked(id, false)
		}
		c.mu.Unlock()
		return
	}
	c.mu.Unlock() // the request's file I/O is not done under the lock that Match takes per rows event
	if err := state.RequestResnapshot(c.joins, []change.TableID{id}); err != nil {
		c.log.Warn("table "+id.String()+" was renamed into source.tables, and its rows are not in the binlog; it could not be "+
			"asked to be snapshotted: "+err.Error()+"; "+c.fixNow, "table", id.String())
		return
	}
	c.log.Info("table "+id.String()+" was renamed into source.tables: its rows are not in the binlog, so it is snapshotted; "+
		"the pipeline starts again from its stored position to do so", "table", id.String(), "position", at.String())
}

// uncaptured is the stream's report of rows of a table it does not capture
// (cdc.Config.Uncaptured).
func (c *captureSet) uncaptured(id change.TableID) {
	if !c.match(id.DB, id.Table) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.tables[id]; !ok {
		c.warnLocked(id, c.newly)
	}
}

// warnExisting warns, with the flag off, of every table that matches now and is not in the
// set. With the flag on such a table may still be created in the binlog ahead (it is then
// captured), so it is warned about only if its rows come first.
func (c *captureSet) warnExisting(ctx context.Context, src cdc.Config) error {
	if c.newly {
		return nil
	}
	db, err := cdc.Open(src)
	if err != nil {
		return err
	}
	defer db.Close()
	tables, err := cdc.ListTables(ctx, db, c.match)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range tables {
		if _, ok := c.tables[t.ID]; !ok {
			c.warnLocked(t.ID, false)
		}
	}
	return nil
}

// warnLocked logs, once per table, that a matching table is not captured, and the fix.
// noCreate: the flag is on, but the stream met the table's rows without its CREATE TABLE.
func (c *captureSet) warnLocked(id change.TableID, noCreate bool) {
	if c.warned[id] {
		return
	}
	c.warned[id] = true
	if noCreate {
		c.log.Warn("table "+id.String()+" matches source.tables but is not captured: it appeared after the pipeline started "+
			"and the binlog since holds no CREATE TABLE of it, so its earlier rows are not there; "+c.fixNow,
			"table", id.String())
		return
	}
	c.log.Warn("table "+id.String()+" matches source.tables but is not captured, because it appeared after the pipeline started; "+
		"set scan.binlog.newly-added-table.enabled: true to capture the tables created from now on, "+
		"or "+c.fixNow,
		"table", id.String())
}

// includeNow is the fix that includes a table not captured now, rows and all.
func includeNow(withSnapshot bool, stateDir string) string {
	if withSnapshot {
		return "run `ingest resnapshot` of the table to include it now (a running apply takes it within seconds; " +
			"docs/output.md, \"Tables snapshotted again\")"
	}
	return "to include it now with its rows, snapshot it: start the pipeline afresh with scan.startup.mode initial " +
		"(stop it and remove the state directory " + stateDir + ")"
}

// list returns the set, sorted.
func (c *captureSet) list() []snapshot.TableState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listLocked()
}

func (c *captureSet) listLocked() []snapshot.TableState {
	out := make([]snapshot.TableState, 0, len(c.tables))
	for _, t := range c.tables {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b snapshot.TableState) int {
		return cmp.Or(strings.Compare(a.DB, b.DB), strings.Compare(a.Table, b.Table))
	})
	return out
}

// encoded returns the compact progress to store once the hand-off is over: the same slice
// until the set changes.
func (c *captureSet) encoded() ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.enc != nil {
		return c.enc, nil
	}
	p := c.base
	p.Tables = c.listLocked()
	enc, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	c.enc = enc
	return enc, nil
}

// sharedTopic reports whether a table of the captured set other than table writes to
// topic (upsert.Config.SharedTopic): its records without table headers cannot then be told
// to be table's. Before the set is known, every topic may be shared.
func (r *run) sharedTopic(table change.TableID, topic string) bool {
	if r.capture == nil {
		return true
	}
	for _, t := range r.capture.list() {
		if t.ID() != table && slices.Contains(r.routes.topics(t.ID()), topic) {
			return true
		}
	}
	return false
}
