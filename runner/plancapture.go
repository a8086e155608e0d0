package runner

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ingestkit/ingest/cdc/snapshot"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/route"
	"github.com/ingestkit/ingest/state"
)

// addCapture says what the snapshot will do (scan.startup.mode initial or snapshot) and which
// matched tables are captured: from the local state when there is one (with exactly-once the
// state is in Kafka, which plan does not read).
func (rep *Report) addCapture(def *pipeline.Definition, dir string) {
	rep.Start = startReason(def, dir)
	if def.Sink.DeliveryGuarantee == pipeline.DeliveryExactlyOnce {
		return
	}
	mode := def.Source.StartupMode
	withSnapshot := mode == pipeline.StartupInitial || mode == pipeline.StartupSnapshot
	newly := def.Source.BinlogNewlyAddedTables
	id, cp, err := state.Peek(dir)
	switch {
	case err != nil:
		return // startReason has said it
	case cp == nil && withSnapshot:
		rep.Start = rep.freshStart(def, dir)
		return
	case cp == nil:
		rep.Start += fmt.Sprintf("; the %d tables that match now are captured from there; %s", len(rep.Tables), laterTables(&def.Source))
		return
	case len(cp.Snapshot) == 0:
		rep.Start += "; no initial snapshot will run. The state (of an older ingest) has no list of captured tables: " +
			"every table that matches now is captured from the stored position, as that ingest did"
		return
	}
	var p snapshot.Progress
	if err := json.Unmarshal(cp.Snapshot, &p); err != nil {
		rep.Problems = append(rep.Problems, fmt.Sprintf("error: state %s: stored snapshot progress: %v", dir, err))
		return
	}
	p, migrated := p.Migrated()
	if migrated != "" {
		rep.Warnings = append(rep.Warnings, "state "+dir+": "+migrated)
	}
	resumes := withSnapshot && snapshotUnderWay(&p)
	var joins map[string]string
	if mode == pipeline.StartupInitial && p.Done && p.HasTables() {
		joins = rep.planJoins(def, dir, id, &p)
	}
	rep.markCaptured(p, resumes, newly, includeNow(withSnapshot, dir), joins)
	switch {
	case resumes:
		rep.Start = fmt.Sprintf("the snapshot will resume from the state in %s (%d chunks done), then the binlog", dir, len(p.Chunks))
	case withSnapshot:
		rep.Start += "; no initial snapshot will run (it finished); " + laterTables(&def.Source)
	default:
		rep.Start += "; " + laterTables(&def.Source)
	}
}

// freshStart is the start of a pipeline without state.
func (rep *Report) freshStart(def *pipeline.Definition, dir string) string {
	why := "no stored state in " + dir + ", so scan.startup.mode " + def.Source.StartupMode.String() + ": "
	if len(rep.Tables) == 0 {
		return why + "no table matches source.tables, so no initial snapshot will run; " + laterTables(&def.Source)
	}
	then := "then the binlog"
	if def.Source.StartupMode == pipeline.StartupSnapshot {
		then = "and nothing else (scan.startup.mode snapshot)"
	}
	return fmt.Sprintf("%san initial snapshot of the %d matched tables, %s; %s", why, len(rep.Tables), then,
		laterTables(&def.Source))
}

// markCaptured sets each matched table's Capture from the stored captured set. A table
// that is not captured cannot stop apply: its problems (no primary key) are left out of
// Problems. A table created after the start that has no key yet is decided at its first
// rows (scan.binlog.newly-added-table.keyless), which Capture says.
func (rep *Report) markCaptured(p snapshot.Progress, resumes, newly bool, fixNow string, joins map[string]string) {
	set := map[string]snapshot.TableState{}
	for _, t := range p.Tables {
		set[t.ID().String()] = t
	}
	for i := range rep.Tables {
		t := &rep.Tables[i]
		st, ok := set[t.Table]
		captured := true
		switch why := joins[t.Table]; {
		case why == joinRequested && ok && st.Skipped == "":
			t.Capture = "snapshotted again at the next start (ingest resnapshot asked for it), before the stream resumes; " +
				"then the keys its topics hold that the table no longer has get tombstones"
		case why != "":
			t.Capture = "joins the captured set at the next start: it is snapshotted before the stream resumes from the stored position (" + why + ")"
		case ok && st.Skipped == snapshot.SkippedNoKey:
			t.Capture = "not captured: created after the start (at " + st.From + ") without a primary key, and it had none at its first rows " +
				"(scan.binlog.newly-added-table.keyless: skip); to include it, give it a key and " + fixNow
			captured = false
		case ok && st.From != "" && len(t.Key) == 0:
			t.Capture = "captured from its CREATE TABLE at " + st.From + "; it has no primary key yet: if it has none at its first rows, " +
				"it is skipped (scan.binlog.newly-added-table.keyless skip) or stops the pipeline (fail)"
			rep.demote(t)
		case ok && st.From != "":
			t.Capture = "captured from its CREATE TABLE at " + st.From
		case ok && st.Stream:
			t.Capture = "captured (by the stream, from the pipeline's start)"
		case ok && st.Done:
			t.Capture = "captured (snapshotted)"
		case ok:
			t.Capture = "captured (the snapshot is under way)"
		case resumes:
			t.Capture = "captured: the resumed snapshot will read it"
		case newly:
			t.Capture = "not captured: it appeared after the pipeline started, and is captured only if the binlog from the stored position holds its CREATE TABLE; " +
				"otherwise " + fixNow
			captured = false
		default:
			t.Capture = "not captured: it appeared after the pipeline started; set scan.binlog.newly-added-table.enabled: true to capture the tables created from now on, " +
				"or " + fixNow
			captured = false
		}
		if !captured {
			rep.demote(t)
		}
	}
}

// demote moves the problem of a table that cannot stop apply (not captured, or decided
// later) from Problems to Warnings.
func (rep *Report) demote(t *PlannedTable) {
	if t.Problem == "" {
		return
	}
	line := "error: " + t.Table + ": " + t.Problem
	if i := slices.Index(rep.Problems, line); i >= 0 {
		rep.Problems = slices.Delete(rep.Problems, i, i+1)
		rep.Warnings = append(rep.Warnings, t.Table+": "+t.Problem+" ("+t.Capture+")")
	}
}

// laterTables says what happens to matching tables created after the start.
func laterTables(s *pipeline.Source) string {
	if !s.BinlogNewlyAddedTables {
		return "tables created later are not captured (scan.binlog.newly-added-table.enabled is false)"
	}
	keyless := "one that still has no primary key at its first rows is skipped with a warning (scan.binlog.newly-added-table.keyless: skip)"
	if s.NewlyAddedKeyless == pipeline.KeylessFail {
		keyless = "one that still has no primary key at its first rows stops the pipeline (scan.binlog.newly-added-table.keyless: fail)"
	}
	return "tables created later that match source.tables are captured from their CREATE TABLE (scan.binlog.newly-added-table.enabled), " +
		"with the key they have after the DDL of their creation; " + keyless
}

// planJoins returns, for a pipeline whose initial snapshot is done, the matched tables that
// join the captured set at the next start and why (as planJoin decides), and adds a warning
// for each table of the set that leaves it.
func (rep *Report) planJoins(def *pipeline.Definition, dir string, id *state.Identity, p *snapshot.Progress) map[string]string {
	filter, err := route.NewFilter(def.Source.Tables, def.Source.Exclude)
	if err != nil {
		return nil
	}
	for _, t := range leaving(p, filter.Match) {
		rep.Warnings = append(rep.Warnings, t.String()+" leaves the captured set at the next start: source.tables does not match it now; "+
			"it is no longer captured, and its topic keeps what it holds")
	}
	var old func(db, table string) bool
	if id != nil {
		oldSel, note := storedSelection(id.Tables, id.Tables != tablesIdentity(def))
		if note != "" {
			rep.Warnings = append(rep.Warnings, note)
		}
		if oldSel != nil {
			old = oldSel.Match
		}
	}
	listed := make([]change.TableID, 0, len(rep.Tables))
	for _, t := range rep.Tables {
		if db, table, ok := strings.Cut(t.Table, "."); ok {
			listed = append(listed, change.TableID{DB: db, Table: table})
		}
	}
	requested, err := state.ResnapshotRequested(dir)
	if err != nil {
		rep.Problems = append(rep.Problems, "error: "+err.Error())
	}
	ids, why := joinCandidates(p, listed, old, requested)
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		out[id.String()] = why[id]
	}
	return out
}
