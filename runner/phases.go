package runner

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ingestkit/ingest/cdc"
	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/snapshot"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/progress"
	"github.com/ingestkit/ingest/state"
	"github.com/ingestkit/ingest/upsert"
)

// phases is where a run starts and what it does: an initial snapshot (fresh or resumed),
// then the binlog stream, filtered by the snapshot's hand-off until it has passed every
// chunk's high watermark.
type phases struct {
	snap      *snapshot.Snapshot // set when a snapshot is under way or its hand-off still filters
	progress  *snapshot.Progress // the stored snapshot progress, if any
	runSnap   bool               // the snapshot still has chunks to read
	stream    bool               // the binlog follows (false for scan.startup.mode snapshot)
	from      binlogpos.Position // the stored stream position (zero: from the hand-off or the startup mode)
	atHandoff bool               // from is the finished snapshot's hand-off position, as its end stored it
	schema    []byte             // the schema history stored with from
	join      *join              // the tables joining the captured set, snapshotted before the stream (join.go); nil: none
}

// planPhases decides the phases from the stored checkpoint and the startup mode.
func (r *run) planPhases(stored *state.Checkpoint) (*phases, error) {
	ph := &phases{stream: r.def.Source.StartupMode != pipeline.StartupSnapshot}
	if stored != nil && stored.Position != "" {
		pos, err := binlogpos.ParsePosition(stored.Position)
		if err != nil {
			return nil, fmt.Errorf("state %s: stored position: %w", r.store.Dir(), err)
		}
		ph.from = pos
		ph.schema = stored.Schema
	}
	if stored != nil {
		p, err := progressOf(stored.Snapshot, stored.Chunks)
		if err != nil {
			return nil, fmt.Errorf("state %s: %w", r.store.Dir(), err)
		}
		if p != nil {
			q, migrated := p.Migrated()
			if migrated != "" {
				r.log.Warn(migrated, "state", r.store.Dir())
			}
			p = &q
		}
		ph.progress = p
	}
	wantSnap := r.def.Source.StartupMode == pipeline.StartupInitial || r.def.Source.StartupMode == pipeline.StartupSnapshot
	switch {
	case ph.progress != nil:
		ph.runSnap = wantSnap && snapshotUnderWay(ph.progress)
	case ph.from.IsZero() && wantSnap:
		ph.runSnap = true
	}
	r.capture = newCaptureSet(r.routes.filter.Match, r.def.Source.BinlogNewlyAddedTables,
		r.def.Source.NewlyAddedKeyless == pipeline.KeylessFail, wantSnap, r.store.Dir(), r.log)
	r.capture.onSkip = func(id change.TableID) { r.m.KeylessSkipped.WithLabelValues(id.String()).Inc() }
	// A finished snapshot without chunks (none matched, or the compact progress stored once
	// the hand-off is over) has nothing to filter: the stream starts at the stored position.
	if ph.runSnap || (ph.progress != nil && len(ph.progress.Chunks) > 0) {
		ph.snap = snapshot.New(r.snapshotConfig(ph.progress))
	}
	if err := ph.handoffStart(); err != nil {
		return nil, fmt.Errorf("state %s: %w", r.store.Dir(), err)
	}
	if !ph.stream && ph.progress != nil && ph.progress.Done {
		r.log.Info("the snapshot is already complete; nothing to do (scan.startup.mode snapshot)")
	}
	return ph, nil
}

// handoffStart relates the stored position to the finished snapshot's hand-off position.
func (ph *phases) handoffStart() error {
	if ph.progress == nil || !ph.progress.Done {
		return nil
	}
	start, ok, err := ph.progress.HandoffPosition()
	switch {
	case err != nil:
		return err
	case !ok:
		return nil
	case ph.snap != nil:
		// A position stored by the snapshot's end, before the stream stored one: the
		// hand-off's own start is the same point, with the GTID state of its file and offset.
		ph.atHandoff = start.String() == ph.from.String()
	case ph.from.IsZero():
		ph.from = start // nothing to filter; not stored by this ingest, which stores the position
	}
	return nil
}

// snapshotUnderWay reports whether a stored progress is an unfinished snapshot, rather than
// the captured set of a pipeline without a snapshot, which holds tables and nothing of a
// snapshot (no chunks, Since or ListedAt) and is not Done: there is no snapshot to finish.
func snapshotUnderWay(p *snapshot.Progress) bool {
	return !p.Done && (len(p.Chunks) > 0 || p.Since != "" || p.ListedAt != "" || !p.HasTables())
}

func (r *run) snapshotConfig(resume *snapshot.Progress) snapshot.Config {
	s := r.def.Source
	ids := r.src.ServerID
	if ids.Last > ids.First {
		ids.First++ // the stream keeps the first id; the snapshot's binlog readers take the rest
	}
	if resume != nil && r.exactlyOnce() {
		// Resume.Since makes each remaining chunk read the binlog from there, to tombstone
		// keys that left it after a crashed run emitted it. With exactly-once that run's
		// records of unrecorded chunks were aborted: there is nothing to tombstone.
		r2 := *resume
		r2.Since = ""
		resume = &r2
	}
	chunkKey := chunkKeys(&s)
	return snapshot.Config{
		Addr: r.src.Addr, User: r.src.User, Password: r.src.Password, TLS: r.src.TLS,
		Match: r.routes.filter.Match, TinyInt1AsNumber: r.src.TinyInt1AsNumber, Keys: r.src.Keys,
		ChunkKey: chunkKey, ChunkSize: s.ChunkSize, FetchSize: s.FetchSize,
		Parallelism: r.def.Pipeline.Parallelism, ServerIDs: ids, Resume: resume,
		OnProgress: func(p snapshot.TableProgress) {
			t := p.Table.String()
			r.display.Table(progress.Table{Name: t, Rows: p.Rows, Estimate: p.Estimate})
			r.m.SnapshotRowsDone.WithLabelValues(t).Set(float64(p.Rows))
			r.m.SnapshotChunksDone.WithLabelValues(t).Set(float64(p.Chunks))
			r.m.SnapshotRowsEstimated.WithLabelValues(t).Set(float64(p.Estimate))
		},
		Logger: r.log, ConnectTimeout: s.ConnectTimeout,
	}
}

// begin stores the snapshot's starting progress before any chunk is read, so that a crash
// before the first stored chunk still resumes with tombstones for keys deleted meanwhile;
// in the state topic too, should the state directory be lost with the crash.
// With exactly-once nothing uncommitted is visible, so there is nothing to store.
func (r *run) begin(ctx context.Context, ph *phases, sink *upsert.Sink) error {
	if !ph.runSnap || ph.progress != nil || r.exactlyOnce() {
		return nil
	}
	p, err := ph.snap.Begin(ctx)
	if err != nil {
		return err
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if err := r.store.Save(state.Checkpoint{Snapshot: b}); err != nil {
		return err
	}
	return sink.StoreState(ctx, upsert.Checkpoint{State: upsert.State{Snapshot: b}})
}

// phasePipe carries the producer's output to the forwarder: the snapshot's batches, then
// the hand-off (nil when there is none), then the stream's batches. Each channel is closed
// when its phase ends, so the forwarder always knows which phase a batch belongs to.
type phasePipe struct {
	snapshot chan change.Batch
	handoff  chan *snapshot.Handoff
	stream   chan change.Batch
	closed   [3]bool
	// sent is the hand-off handed to the forwarder, closed by closeHandoff once the
	// pipeline has stopped.
	sent *snapshot.Handoff
}

// pipeDepth is the capacity, in batches, of the channels between the source, the forwarder
// and the sink. A batch holds up to 1024 changes (a snapshot fetch, cdc's MaxBatch), so a
// few are enough to keep each goroutine busy while the next works; every batch more is
// memory held (about 1.5 KB per change) and more heap for the GC to cover.
const pipeDepth = 4

func newPhasePipe() *phasePipe {
	return &phasePipe{snapshot: make(chan change.Batch, pipeDepth), handoff: make(chan *snapshot.Handoff, 1),
		stream: make(chan change.Batch, pipeDepth)}
}

func (p *phasePipe) endSnapshot() {
	if !p.closed[0] {
		close(p.snapshot)
		p.closed[0] = true
	}
}

func (p *phasePipe) setHandoff(h *snapshot.Handoff) {
	p.endSnapshot()
	if !p.closed[1] {
		p.handoff <- h
		close(p.handoff)
		p.closed[1], p.sent = true, h
	}
}

// closeHandoff releases the connections of the hand-off sent, if any; called once every
// goroutine of the pipeline has returned.
func (p *phasePipe) closeHandoff() {
	p.sent.Close()
}

// closeAll ends every phase; only the producer calls it, once it returns.
func (p *phasePipe) closeAll() {
	p.setHandoff(nil)
	if !p.closed[2] {
		close(p.stream)
		p.closed[2] = true
	}
}

// produce runs the phases into pipe: the snapshot, then the stream.
func (r *run) produce(ctx context.Context, ph *phases, pipe *phasePipe) error {
	if ph.runSnap {
		r.snapshotting = true
		if ph.progress != nil {
			r.log.Info("initial snapshot resumed from its stored chunk progress", "parallelism", r.def.Pipeline.Parallelism,
				"chunks", len(ph.progress.Chunks))
		} else {
			r.log.Info("initial snapshot started", "parallelism", r.def.Pipeline.Parallelism)
		}
		if err := ph.snap.Run(ctx, pipe.snapshot); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		r.snapshotting = false
		r.display.SnapshotDone()
		r.log.Info("initial snapshot finished")
	}
	if ph.join != nil {
		if err := r.runJoin(ctx, ph, pipe.snapshot); err != nil || ctx.Err() != nil {
			return err
		}
	}
	pipe.endSnapshot()
	if !ph.stream {
		return nil
	}
	var reflected func(change.TableID, binlogpos.Position) bool
	if ph.snap != nil {
		h, err := ph.snap.Handoff(ctx)
		if err != nil {
			return err
		}
		reflected = h.Reflects
		if ph.from.IsZero() || ph.atHandoff {
			ph.from = h.Start()
		}
		pipe.setHandoff(h)
		if err := r.preflight(ctx, ph.from); err != nil { // the server may have changed during the snapshot
			return err
		}
	}
	pipe.setHandoff(nil)
	cfg := r.src
	cfg.Position, cfg.SchemaHistory = ph.from, ph.schema
	if err := r.startCapture(ctx, ph, &cfg, reflected); err != nil {
		return err
	}
	src, err := cdc.New(cfg)
	if err != nil {
		return err
	}
	r.source = src
	close(r.streaming)
	return r.withStateHint(src.Run(ctx, pipe.stream))
}

// startCapture fills the captured set before the stream starts, and makes the stream use
// it: the finished snapshot's tables (with those captured from their CREATE TABLE), or,
// for a state stored by an older ingest with a position and no snapshot progress, every
// table that matches now, captured from the stored position as that ingest did.
func (r *run) startCapture(ctx context.Context, ph *phases, cfg *cdc.Config, reflected func(change.TableID, binlogpos.Position) bool) error {
	c := r.capture
	if c == nil {
		return nil
	}
	switch {
	case ph.snap != nil:
		c.reset(ph.snap.Progress())
	case ph.progress != nil:
		c.reset(*ph.progress)
	default:
		p, err := r.matchingNow(ctx, ph.from)
		if err != nil {
			return err
		}
		c.reset(p)
	}
	cfg.Tables, cfg.Created, cfg.Uncaptured, cfg.Keyless = c.Match, c.created, c.uncaptured, c.keyless
	cfg.Renamed = c.renamed
	if r.def.Source.StartupMode == pipeline.StartupInitial {
		c.joins, c.reflected = r.store.Dir(), reflected // taken by the next run (watchResnapshot)
	}
	if err := c.warnExisting(ctx, *cfg); err != nil {
		return fmt.Errorf("list the tables that match source.tables: %w", err)
	}
	return nil
}

// matchingNow is the captured set of a pipeline without a snapshot that starts for the
// first time (from is zero): the tables that match now, captured from the start. For a state
// stored by an older ingest with a position and no snapshot progress (it did not keep the
// set once the hand-off was over), it is every table that matches now, captured from the
// stored position as that ingest did.
func (r *run) matchingNow(ctx context.Context, from binlogpos.Position) (snapshot.Progress, error) {
	db, err := cdc.Open(r.src)
	if err != nil {
		return snapshot.Progress{}, err
	}
	defer db.Close()
	tables, err := cdc.ListTables(ctx, db, r.routes.filter.Match)
	if err != nil {
		return snapshot.Progress{}, fmt.Errorf("list the tables that match source.tables: %w", err)
	}
	p := snapshot.Progress{Tables: []snapshot.TableState{}}
	names := make([]string, len(tables))
	for i, t := range tables {
		ts := snapshot.TableState{DB: t.ID.DB, Table: t.ID.Table, Stream: true}
		if !from.IsZero() {
			ts = snapshot.TableState{DB: t.ID.DB, Table: t.ID.Table, From: from.String()}
		}
		p.Tables = append(p.Tables, ts)
		names[i] = t.ID.String()
	}
	if from.IsZero() {
		return p, nil
	}
	p.Done = r.def.Source.StartupMode == pipeline.StartupInitial || r.def.Source.StartupMode == pipeline.StartupSnapshot
	r.log.Warn("the stored state has a position but no captured-table list (an older format); taking every table that matches "+
		"source.tables now as captured from the stored position, as that ingest did; the list is stored from now on",
		"state", r.store.Dir(), "position", from.String(), "tables", names)
	return p, nil
}
