package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ingestkit/ingest/cdc"
	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/snapshot"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/route"
	"github.com/ingestkit/ingest/state"
	"github.com/ingestkit/ingest/upsert"
)

// Tables join the captured set of a pipeline whose snapshot is finished when source.tables
// or source.tables.exclude changed between two runs so that they match now and did not
// match the selection the stored set was made with (the state directory's identity,
// state.Store.Tables). At the start, before the stream resumes, the runner snapshots them
// alone with the snapshot package's lock-free watermark method; the stream then resumes from
// the stored position for every table, through the hand-off filter of the joined tables'
// chunks (with the chunks of a hand-off that was still under way): an event on a joined
// table's key is dropped when its chunk already reflects it. So the tables captured before
// are not read again, and the joined tables' rows, and every later change, arrive once in
// order: the join is consistent with the stored position.
//
// The joined tables are stored in the captured set before their snapshot starts, not yet
// done (snapshot.TableState.Done false), with the stored position: a run stopped during the
// join does it again (reading the binlog from the stored position to tombstone the keys
// deleted since the interrupted join emitted them, at-least-once), and the selection is
// recorded in the identity only then. Tables that match no longer (a narrowed selection)
// just stop being captured; what their topics hold stays.

// join is the snapshot of the tables that join the captured set at the start of a run.
type join struct {
	tables []change.TableID
	why    map[change.TableID]string
	snap   *snapshot.Snapshot
	from   binlogpos.Position // where the stream resumes: the stored position
	pos    []byte             // the stored position as stored, for the chunks' checkpoints
	state  upsert.State       // what each of the join's chunks stores: the captured set with the joined tables pending
	// requested are the tables of the re-snapshot request when the join began: they leave
	// the request once the pending set is stored.
	requested []change.TableID
}

// Reasons a table joins the captured set.
const (
	joinPatternGrew = "pattern grew: it matches source.tables now and did not match the selection the stored state was made with"
	joinInterrupted = "its snapshot, begun by an earlier run, was interrupted"
	joinRequested   = "requested: ingest resnapshot asked for it"
)

// joinCandidates returns the tables that join the captured set p and why, given the tables
// that match now (listed), whether each matched the stored selection (old, nil: it did) and
// the tables a re-snapshot request names.
func joinCandidates(p *snapshot.Progress, listed []change.TableID, old func(db, table string) bool,
	requested []change.TableID) ([]change.TableID, map[change.TableID]string) {
	in := map[change.TableID]snapshot.TableState{}
	for _, t := range p.Tables {
		in[t.ID()] = t
	}
	why := map[change.TableID]string{}
	var ids []change.TableID
	for _, id := range listed {
		t, ok := in[id]
		switch {
		// A request wins over an interrupted join: both read the table whole again, with the
		// markers that tombstone every key its topic holds and the table no longer has, and
		// the request also leaves the request file once the join is stored.
		case slices.Contains(requested, id): // captured or not (skipped, created while not followed)
			why[id] = joinRequested
		case ok && t.Snapshotted() && !t.Done:
			why[id] = joinInterrupted
		case ok:
			continue
		case old != nil && !old(id.DB, id.Table):
			why[id] = joinPatternGrew
		default:
			continue
		}
		ids = append(ids, id)
	}
	return ids, why
}

// leaving returns the tables of the captured set p that the selection does not match now.
func leaving(p *snapshot.Progress, match func(db, table string) bool) []change.TableID {
	var ids []change.TableID
	for _, t := range p.Tables {
		if t.Skipped == "" && !match(t.DB, t.Table) {
			ids = append(ids, t.ID())
		}
	}
	return ids
}

// storedSelection returns the filter of the selection the stored state was made with, nil
// when it is the current one, and a note when it cannot be told (hashed: it held a secret).
func storedSelection(stored string, changed bool) (*route.Filter, string) {
	if !changed {
		return nil, ""
	}
	if strings.HasPrefix(stored, "sha256:") {
		return nil, "the stored table selection holds a secret (only its hash is stored): tables that match now are not snapshotted as joining"
	}
	tables, exclude, _ := strings.Cut(stored, " exclude ")
	f, err := route.NewFilter(tables, exclude)
	if err != nil {
		return nil, fmt.Sprintf("the stored table selection %q does not parse (%v): tables that match now are not snapshotted as joining", stored, err)
	}
	return f, ""
}

// planJoin decides, for a pipeline with a finished snapshot whose stream resumes, which
// tables join the captured set, stores them as pending, and prepares their snapshot
// (ph.join). It records the current table selection in the state directory once the
// stored state reflects it.
func (r *run) planJoin(ctx context.Context, ph *phases, stored *state.Checkpoint, sink *upsert.Sink) error {
	p := ph.progress
	requested, err := state.ResnapshotRequested(r.store.Dir())
	if err != nil {
		return err
	}
	if !r.joinable(ph) {
		switch {
		case len(requested) == 0:
		case r.def.Source.StartupMode != pipeline.StartupInitial:
			r.log.Warn("a re-snapshot is requested (ingest resnapshot), but tables are snapshotted again only with "+
				"scan.startup.mode initial: the request is not taken", "tables", fmt.Sprint(requested))
		default:
			r.log.Info("a re-snapshot is requested (ingest resnapshot): it is taken once the initial snapshot is finished "+
				"(the pipeline starts again from its stored position then)", "tables", fmt.Sprint(requested))
		}
		return r.store.RecordTables()
	}
	oldSel, note := storedSelection(r.store.Tables(), r.store.TablesChanged())
	if note != "" {
		r.log.Warn(note, "state", r.store.Dir())
	}
	db, err := cdc.Open(r.src)
	if err != nil {
		return err
	}
	listed, err := cdc.ListTables(ctx, db, r.routes.filter.Match)
	db.Close()
	if err != nil {
		return fmt.Errorf("list the tables that match source.tables: %w", err)
	}
	ids := make([]change.TableID, len(listed))
	for i, t := range listed {
		ids[i] = t.ID
	}
	var old func(db, table string) bool
	if oldSel != nil {
		old = oldSel.Match
	}
	for _, id := range leaving(p, r.routes.filter.Match) {
		r.log.Warn("table "+id.String()+" is in the stored captured set but source.tables does not match it now: it is no longer captured; "+
			"its topic keeps what it holds", "table", id.String())
	}
	for _, id := range requested {
		if !slices.Contains(ids, id) {
			r.log.Warn("table "+id.String()+" is named by the re-snapshot request but source.tables does not capture it now "+
				"(or it does not exist): it is not snapshotted, and leaves the request", "table", id.String())
		}
	}
	joined, why := joinCandidates(p, ids, old, requested)
	if len(joined) == 0 {
		if err := r.store.ResnapshotTaken(requested); err != nil {
			return err
		}
		return r.store.RecordTables()
	}
	from := ph.from
	if from.IsZero() {
		pos, ok, err := p.HandoffPosition()
		if err != nil || !ok {
			return fmt.Errorf("state %s: the finished snapshot stores no position to resume from (%v)", r.store.Dir(), err)
		}
		from = pos
	}
	pending := *p
	pending.Tables = slices.Clone(p.Tables)
	pending.Chunks = withoutChunksOf(p.Chunks, joined)
	redo := false
	for _, id := range joined {
		switch why[id] {
		case joinInterrupted:
			redo = true
			continue
		case joinRequested: // snapshotted from scratch, even if the stream captured it from its CREATE
			pending.Tables = slices.DeleteFunc(pending.Tables, func(t snapshot.TableState) bool { return t.ID() == id })
		}
		pending.Tables = append(pending.Tables, snapshot.TableState{DB: id.DB, Table: id.Table})
	}
	slices.SortFunc(pending.Tables, func(a, b snapshot.TableState) int {
		return strings.Compare(a.ID().String(), b.ID().String())
	})
	head, chunks, err := r.chunks.parts(&pending)
	if err != nil {
		return err
	}
	st := upsert.State{Snapshot: head, Chunks: chunks, Schema: stored.Schema, Shapes: r.shapes.Encode()}
	if st.SchemaParts, err = r.history.split(stored.Schema); err != nil {
		return err
	}
	j := &join{tables: joined, why: why, from: from, pos: []byte(stored.Position), state: st, requested: requested}
	var resume *snapshot.Progress
	if redo {
		resume = &snapshot.Progress{Since: from.String()} // tombstones for what the interrupted join emitted
	}
	cfg := r.snapshotConfig(resume)
	cfg.Tables, cfg.Match = joined, func(db, table string) bool { return slices.Contains(joined, change.TableID{DB: db, Table: table}) }
	j.snap = snapshot.New(cfg)
	for _, id := range joined {
		r.log.Info("table "+id.String()+" joins the captured set: it is snapshotted now, before the stream resumes from the stored position; "+
			"the tables captured before are not read again", "table", id.String(), "why", why[id], "position", from.String())
	}
	if !r.exactlyOnce() {
		if err := r.store.Save(state.Checkpoint{Position: stored.Position, Snapshot: head, Chunks: chunks, Schema: stored.Schema, Shapes: st.Shapes}); err != nil {
			return err
		}
		if err := sink.StoreState(ctx, upsert.Checkpoint{Position: j.pos, State: st}); err != nil {
			return err
		}
		if err := r.joinStored(j); err != nil {
			return err
		}
	} // exactly-once: the first chunk's transaction stores the pending set; acked calls joinStored
	ph.join = j
	return nil
}

// joinInput turns the End batch of a joining table's chunk into an input storing the state
// of the start (the stored position, the joined tables pending): the join is read again
// whole if the run stops before it ends.
func (r *run) joinInput(b change.Batch) upsert.Input {
	j := r.phases.join
	b.Position = j.pos
	return upsert.Input{Batch: b, State: j.state}
}

// runJoin snapshots the joining tables into pipe's snapshot channel, then makes the stream's
// hand-off cover their chunks (and those of a hand-off still under way) from the stored
// position.
func (r *run) runJoin(ctx context.Context, ph *phases, out chan<- change.Batch) error {
	j := ph.join
	r.log.Info("snapshot of the tables joining the captured set started", "tables", len(j.tables))
	if !sendBatch(ctx, out, j.markers(change.Resnapshotting)) {
		return nil
	}
	if err := j.snap.Run(ctx, out); err != nil || ctx.Err() != nil {
		return err
	}
	if !sendBatch(ctx, out, j.markers(change.Resnapshotted)) {
		return nil
	}
	jp := j.snap.Progress()
	combined := *ph.progress
	combined.Chunks = append(withoutChunksOf(ph.progress.Chunks, j.tables), jp.Chunks...)
	combined.Since, combined.Done = "", true
	combined.Tables = slices.Clone(ph.progress.Tables)
	for _, id := range j.tables {
		i := slices.IndexFunc(combined.Tables, func(t snapshot.TableState) bool { return t.ID() == id })
		if i < 0 {
			combined.Tables = append(combined.Tables, snapshot.TableState{DB: id.DB, Table: id.Table})
			i = len(combined.Tables) - 1
		}
		combined.Tables[i].Done = true
	}
	slices.SortFunc(combined.Tables, func(a, b snapshot.TableState) int {
		return strings.Compare(a.ID().String(), b.ID().String())
	})
	ph.progress = &combined
	ph.snap = snapshot.New(r.snapshotConfig(&combined))
	ph.from, ph.atHandoff = j.from, false
	var rows int64
	for _, c := range jp.Chunks {
		rows += c.Rows
	}
	r.log.Info("snapshot of the tables joining the captured set finished; the stream resumes from the stored position",
		"tables", len(j.tables), "chunks", len(jp.Chunks), "rows", rows, "position", j.from.String())
	return nil
}

// withoutChunksOf returns the chunks that are not of the given tables. A table that joins
// again while the hand-off of its earlier join is still under way (a re-snapshot request
// right after a join, runs stopped in between) is read whole again: its new chunks, read
// later, reflect all that the earlier ones do, and the two sets together would not
// partition its key space.
func withoutChunksOf(chunks []snapshot.DoneChunk, tables []change.TableID) []snapshot.DoneChunk {
	return slices.DeleteFunc(slices.Clone(chunks), func(c snapshot.DoneChunk) bool { return slices.Contains(tables, c.TableID()) })
}

// markers returns a batch of one marker of kind for each joining table: the upsert sink
// tombstones, at the Resnapshotted marker, the keys of the table that its topics hold and
// the join's snapshot did not write (upsert/clear.go). A join that an earlier run began and
// did not finish gets them too: its chunks are not stored (each stores the state of the
// join's start), so it reads every table whole again, and writes every key it has after the
// first marker. (Its Progress.Since also tombstones, from the binlog, the keys deleted
// since it began.) Without them, keys that the interrupted join had not yet cleared stayed
// in the topic, found by the table lifecycle scenario of chaos/.
func (j *join) markers(kind change.DDLKind) change.Batch {
	b := change.Batch{End: true, CommitTime: time.Now()}
	for _, id := range j.tables {
		b.Changes = append(b.Changes, change.Change{Op: change.SchemaChange, Schema: &change.Schema{Table: id},
			DDL: &change.DDL{Kind: kind, Statement: "ingest: the table is snapshotted again (" + j.why[id] + ")"}})
	}
	return b
}

// sendBatch sends b on out unless ctx ends first.
func sendBatch(ctx context.Context, out chan<- change.Batch, b change.Batch) bool {
	select {
	case out <- b:
		return true
	case <-ctx.Done():
		return false
	}
}

// joinStored records, once the captured set with the joined tables pending is stored, the
// table selection in the state directory and takes the join's tables out of the
// re-snapshot request: a run stopped from then on does the join again as interrupted.
func (r *run) joinStored(j *join) error {
	if err := r.store.ResnapshotTaken(j.requested); err != nil {
		return err
	}
	return r.store.RecordTables()
}

// joinable reports whether tables can join the captured set at the start of this run: it
// streams after a finished initial snapshot whose captured set is stored.
func (r *run) joinable(ph *phases) bool {
	p := ph.progress
	return ph.stream && !ph.runSnap && p != nil && p.Done && p.HasTables() && r.def.Source.StartupMode == pipeline.StartupInitial
}

// errRestartRequested ends a run that is to start again at once from what it stored, to
// take a re-snapshot request.
var errRestartRequested = errors.New("restart requested")

// resnapshotPoll is how often a running pipeline looks for a re-snapshot request.
const resnapshotPoll = 2 * time.Second

// watchResnapshot ends the run with errRestartRequested once the stream runs and the state
// directory holds a re-snapshot request (`ingest resnapshot`, or a table renamed into
// source.tables) for a table that this run's join j (nil: none) does not snapshot already:
// the supervisor starts the next run at once, and its planJoin snapshots the tables (the
// initial snapshot is over once the stream runs). It stops with ctx, and when the run ends
// by itself (done: the sink has stopped, as --until-caught-up does).
func (r *run) watchResnapshot(ctx context.Context, done <-chan struct{}, j *join) error {
	select {
	case <-ctx.Done():
		return nil
	case <-done:
		return nil
	case <-r.streaming:
	}
	t := time.NewTicker(resnapshotPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-done:
			return nil
		case <-t.C:
		}
		tables, err := state.ResnapshotRequested(r.store.Dir())
		if err != nil {
			continue // planJoin of the next start reports a request it cannot read
		}
		if j != nil {
			tables = slices.DeleteFunc(tables, func(id change.TableID) bool { return slices.Contains(j.requested, id) })
		}
		if len(tables) > 0 {
			r.log.Info("re-snapshot requested: the pipeline stops and starts again from its stored position to snapshot the tables",
				"tables", fmt.Sprint(tables))
			return errRestartRequested
		}
	}
}
