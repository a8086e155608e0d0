package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ingestkit/ingest/cdc"
	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/snapshot"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/fault"
	"github.com/ingestkit/ingest/metrics"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/progress"
	"github.com/ingestkit/ingest/schemachange"
	"github.com/ingestkit/ingest/secrets"
	"github.com/ingestkit/ingest/state"
	"github.com/ingestkit/ingest/transform"
	"github.com/ingestkit/ingest/upsert"
)

// Options are the command-line settings of a run.
type Options struct {
	// StateDir is the state directory (--state); default ./.ingest/<pipeline name>.
	StateDir string
	// UntilCaughtUp stops the run once the binlog position the server had at the start is
	// reached (--until-caught-up).
	UntilCaughtUp bool
	// MetricsAddr, when set, serves Prometheus metrics there (--metrics-addr). It is bound
	// before anything else starts: an address that cannot be bound fails Run at once.
	MetricsAddr string
	// Pprof also serves the Go runtime's profiles under /debug/pprof/ on MetricsAddr (--pprof).
	Pprof bool
	// Logger receives the run's logs (default slog.Default()).
	Logger *slog.Logger
	// Metrics, when set, is used instead of a new set (tests).
	Metrics *metrics.Metrics
	// Display shows the progress (default: log lines every 30s).
	Display progress.Display
	// SaveEvery bounds how often the local store, and at-least-once the state topic, are
	// written a checkpoint (default 200ms); the last one is always written when the run
	// stops.
	SaveEvery time.Duration
	// Scrubber, when set, knows the pipeline's secret values: they are masked in metrics
	// labels and kept out of the state directory (hashed in its identity, replaced by
	// their placeholders in its checkpoint). The logger is expected to scrub on its own.
	Scrubber *secrets.Scrubber
	// ResetState deletes the pipeline's stored state, in the state directory and in Kafka's
	// state topic, before the run starts (--reset-state): it then starts as a first run.
	ResetState bool
	// StopTimeout bounds a stop (SIGINT/SIGTERM/SIGHUP, cancelled ctx) from the signal to
	// Run's return (--stop-timeout; default upsert.DefaultStopTimeout, under Kubernetes' 30s
	// grace period). What the sink could not write by then is left for the next run.
	StopTimeout time.Duration
}

// DefaultStateDir is the state directory of a pipeline when --state is not given.
func DefaultStateDir(name string) string { return filepath.Join(".ingest", name) }

// Run runs the pipeline until ctx is cancelled (SIGINT/SIGTERM/SIGHUP: it then finishes
// in-flight work within Options.StopTimeout, stores the position and returns nil, also when
// the broker is down or it waits to restart), until it has caught up (UntilCaughtUp), or
// until a part fails. It ends with a summary log line.
func Run(ctx context.Context, def *pipeline.Definition, opts Options) error {
	if opts.Metrics == nil {
		opts.Metrics = metrics.New(def.Pipeline.Name)
	}
	srv, err := listenMetrics(opts)
	if err != nil {
		return err
	}
	r, err := newRun(def, opts)
	if err != nil {
		if srv != nil {
			srv.Close()
		}
		return err
	}
	defer r.store.Close()
	defer r.display.Close()
	if srv != nil {
		// For the whole run, restarts included: the metrics tell about the back-offs too.
		mctx, stopMetrics := context.WithCancel(ctx)
		served := make(chan error, 1)
		go func() { served <- srv.Serve(mctx) }()
		defer func() {
			stopMetrics()
			if err := <-served; err != nil {
				r.log.Warn("metrics server failed", "err", err)
			}
		}()
	}
	observed := make(chan struct{})
	defer close(observed)
	go r.followLag(observed)
	began := time.Now()
	err = r.stopped(ctx, r.runRestarting(ctx))
	r.summary(began, err)
	return err
}

// stopped returns nil for the error of a run that was stopped (ctx cancelled: a signal)
// while it was starting, waiting to restart, or writing to a broker that did not answer
// before the stop deadline: what was acknowledged is stored, and the rest is the next run's.
// Fatal errors are returned.
func (r *run) stopped(ctx context.Context, err error) error {
	if ctx.Err() == nil || err == nil {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || fault.IsRetryable(err) {
		if !errors.Is(err, context.Canceled) {
			r.log.Warn("stopped before everything was written to Kafka; the next run writes the rest from the stored position", "err", err)
		}
		return nil
	}
	return err
}

// listenMetrics binds Options.MetricsAddr, if set, and warns when the address can be
// reached from other hosts.
func listenMetrics(opts Options) (*metrics.Server, error) {
	if opts.MetricsAddr == "" {
		return nil, nil
	}
	srv, err := opts.Metrics.Listen(opts.MetricsAddr, opts.Pprof)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	if !srv.Loopback() {
		log := opts.Logger
		if log == nil {
			log = slog.Default()
		}
		what := "the metrics"
		if opts.Pprof {
			what = "the metrics and the profiles (--pprof: memory, goroutines, command line)"
		}
		log.Warn("metrics: serving on a non-loopback address; every host that can reach it can read "+what+
			"; give 127.0.0.1:PORT unless it must be scraped from elsewhere", "addr", srv.Addr().String())
	}
	return srv, nil
}

// maxRestarts bounds the in-process restarts in a row after retryable failures; the waits
// between them double from a second to half a minute. A run that lasted restartReset
// before failing starts the count again.
const (
	maxRestarts  = 10
	restartReset = 5 * time.Minute
)

// runRestarting is the pipeline's one supervisor: it runs the pipeline, and runs it again
// in-process from what is stored when any part failed with an error that the fault model
// (internal/fault) marks retryable after the pipeline had started: the sink's (a broker
// outage at a commit, a Kafka transaction that outlived transaction.timeout.ms behind a
// slow broker), the snapshot's (a reader's connection lost or killed: the snapshot resumes
// from its stored chunk progress, reading only the chunks not finished), the binlog
// stream's before it retried by itself. A restart writes nothing twice with exactly-once
// (the failed transaction is aborted) and what at-least-once allows otherwise. Failures
// while the first run starts (a wrong address, refused credentials) and terminal ones
// (unmarked errors included) end it.
func (r *run) runRestarting(ctx context.Context) error {
	once := func(ctx context.Context) (bool, error) {
		r.running = false
		r.lag.restarted()
		err := r.run(ctx)
		return r.running, err
	}
	retried := func(err error, restart int, wait time.Duration) {
		r.m.Errors.WithLabelValues("retry").Inc()
		msg, attrs := r.resumes()
		r.log.Warn(msg, append(attrs, "err", err, "restart", restart, "of", maxRestarts, "in", wait)...)
	}
	return restarting(ctx, once, retried, time.Second)
}

// resumes says what a restart resumes from: the snapshot's stored chunk progress when the
// run failed while the snapshot was under way, otherwise the stream's stored position.
func (r *run) resumes() (string, []any) {
	if r.snapshotting {
		return "restarting: the snapshot resumes from its stored chunk progress; finished chunks are not read again", nil
	}
	if pos, _ := r.status.position.Load().(string); pos != "" {
		return "restarting: the binlog stream resumes from the stored position", []any{"position", pos}
	}
	return "restarting from the stored position", nil
}

// restarting calls once until it returns nil, a terminal error, or a retryable one before
// any call got the pipeline running, or maxRestarts retryable failures in a row. A restart
// that fails while starting again (the broker still away) is restarted too: only the
// first start's failures are the configuration's. The waits double from firstWait to
// 30 times it; retried is told of each.
func restarting(ctx context.Context, once func(context.Context) (running bool, err error),
	retried func(err error, restart int, wait time.Duration), firstWait time.Duration) error {
	restarts, ran := 0, false
	for {
		began := time.Now()
		running, err := once(ctx)
		ran = ran || running
		if ctx.Err() == nil && errors.Is(err, errRestartRequested) {
			continue // at once, and not counted: nothing failed
		}
		if ctx.Err() != nil || !ran || !fault.IsRetryable(err) {
			return err
		}
		if time.Since(began) >= restartReset {
			restarts = 0
		}
		if restarts == maxRestarts {
			return err
		}
		wait := min(firstWait<<restarts, 30*firstWait)
		restarts++
		retried(err, restarts, wait)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// run is one execution of a pipeline.
type run struct {
	def    *pipeline.Definition
	opts   Options
	log    *slog.Logger
	m      *metrics.Metrics
	routes *routing
	store  *state.Store
	id     state.Identity
	src    cdc.Config
	snk    upsert.Config

	phases        *phases
	capture       *captureSet          // the captured set, with a snapshot (initial and snapshot modes); nil otherwise
	running       bool                 // this run got past its start: its failures may be restarted
	snapshotting  bool                 // the snapshot is under way (set by produce; read after the run returns)
	source        *cdc.Source          // set by produce before the stream's first batch; then read by forward
	streaming     chan struct{}        // closed by produce when the stream starts
	chunks        chunkParts           // owned by forward
	history       historyParts         // owned by forward
	handoff       *upsert.State        // the state stored while the hand-off filters; owned by forward
	handoffTables []byte               // the encoded captured set that handoff holds; owned by forward
	shapes        *schemachange.Mapper // schema.change.behavior; owned by forward
	transforms    *transform.Rules     // the transform block's projections and filters; owned by forward
	warned        map[string]bool      // the source checks whose warning was logged (preflight)
	lag           lagClock             // the lag metric's clock (lag.go)
	writes        *written             // the written-records observer, for the summary
	display       progress.Display
	status        status

	recordTables sync.Once // exactly-once: records the table selection once a join's pending state is committed

	mu      sync.Mutex
	pending *upsert.Checkpoint // the last acknowledged checkpoint not yet saved
}

func newRun(def *pipeline.Definition, opts Options) (*run, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SaveEvery <= 0 {
		opts.SaveEvery = 200 * time.Millisecond
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = upsert.DefaultStopTimeout
	}
	if opts.StateDir == "" {
		opts.StateDir = DefaultStateDir(def.Pipeline.Name)
	}
	r := &run{def: def, opts: opts, log: opts.Logger, m: opts.Metrics, display: opts.Display,
		warned: map[string]bool{}}
	if r.display == nil {
		r.display = progress.NewLog(opts.Logger, 30*time.Second)
	}
	if r.m == nil {
		r.m = metrics.New(def.Pipeline.Name)
	}
	var err error
	if r.routes, err = newRouting(def); err != nil {
		return nil, err
	}
	if r.src, err = sourceConfig(def, r.routes, r.log); err != nil {
		return nil, err
	}
	if r.snk, err = sinkConfig(def, r.routes, r.log); err != nil {
		return nil, err
	}
	r.snk.Acked = r.acked
	r.snk.StateInterval = opts.SaveEvery
	r.snk.StopTimeout, r.snk.ConnectTimeout = opts.StopTimeout, def.Source.ConnectTimeout
	r.writes = &written{m: r.m, count: &r.status.records, bytes: &r.status.bytes}
	r.snk.Written = r.writes.observe
	r.snk.SharedTopic = r.sharedTopic
	r.id = state.Identity{Pipeline: def.Pipeline.Name, Source: sourceAddr(def), Tables: tablesIdentity(def)}
	if r.snk.Identity, err = json.Marshal(kafkaIdentity(r.id, opts.Scrubber)); err != nil {
		return nil, err
	}
	if opts.Scrubber != nil {
		r.m.ScrubLabels(opts.Scrubber.Scrub)
	}
	if r.store, err = state.OpenSecret(opts.StateDir, r.id, stateSecrets(opts.Scrubber)); err != nil {
		return nil, err
	}
	r.snk.Ledger = r.store // partition counts are part of the data's layout (upsert/layout.go)
	return r, nil
}

// stateSecrets returns the scrubber as the state's Secrets, nil when there is none.
func stateSecrets(s *secrets.Scrubber) state.Secrets {
	if s == nil {
		return nil
	}
	return s
}

func tablesIdentity(def *pipeline.Definition) string {
	if def.Source.Exclude == "" {
		return def.Source.Tables
	}
	return def.Source.Tables + " exclude " + def.Source.Exclude
}

func (r *run) exactlyOnce() bool { return r.snk.Guarantee == upsert.ExactlyOnce }

func (r *run) run(ctx context.Context) error {
	sink, err := upsert.New(r.snk)
	if err != nil {
		return err
	}
	defer sink.Close()
	stored, err := r.startCheckpoint(ctx, sink)
	if err != nil {
		return err
	}
	ph, err := r.planPhases(stored)
	if err != nil {
		return err
	}
	if r.shapes, err = newShapes(r.def, stored); err != nil {
		return fmt.Errorf("state %s: %w", r.store.Dir(), err)
	}
	if r.transforms, err = newTransforms(r.def); err != nil {
		return err
	}
	if err := r.preflight(ctx, ph.from); err != nil {
		return err
	}
	if err := r.stopAt(ctx, ph); err != nil {
		return err
	}
	if err := r.begin(ctx, ph, sink); err != nil {
		return err
	}
	if err := r.planJoin(ctx, ph, stored, sink); err != nil {
		return err
	}
	r.phases, r.running = ph, true
	// A re-snapshot request is watched for once the stream runs after an initial snapshot:
	// the next run can take it then.
	watch := ph.stream && r.def.Source.StartupMode == pipeline.StartupInitial
	r.streaming = make(chan struct{})

	g, gctx := errgroup.WithContext(ctx)
	pipe := newPhasePipe()
	inputs := make(chan upsert.Input, pipeDepth)
	sinkDone := make(chan struct{})
	g.Go(func() error {
		defer pipe.closeAll()
		if err := r.produce(gctx, ph, pipe); err != nil && gctx.Err() == nil {
			r.m.Errors.WithLabelValues("source").Inc()
			return err
		}
		return nil
	})
	g.Go(func() error { defer close(inputs); return r.forward(gctx, pipe, inputs) })
	sinkCtx, stopSink := r.sinkContext(ctx, sink, sinkDone)
	defer stopSink()
	g.Go(func() error {
		defer close(sinkDone)
		if err := sink.Run(sinkCtx, inputs); err != nil {
			r.m.Errors.WithLabelValues("sink").Inc()
			return err
		}
		return nil
	})
	if !r.exactlyOnce() {
		g.Go(func() error { return r.saveLoop(gctx, sinkDone) })
	}
	if watch {
		j := ph.join
		g.Go(func() error { return r.watchResnapshot(gctx, sinkDone, j) })
	}
	go r.showStatus(sinkDone)
	err = g.Wait()
	pipe.closeHandoff()
	if serr := r.saveLast(); err == nil {
		err = serr
	}
	return err
}

// sinkContext is the sink's context. A stop (ctx cancelled) stops the source at once, but
// the sink first writes and acknowledges what was already handed to it (the input channel
// closes behind the source), so that the position stored at the end is as far as possible.
// The run owns the one stop deadline, Options.StopTimeout from the signal: the sink is
// told it (its final flush, commit or abort end by then), and is cancelled when it passes
// (a broker that is down).
func (r *run) sinkContext(ctx context.Context, sink *upsert.Sink, sinkDone <-chan struct{}) (context.Context, context.CancelFunc) {
	sinkCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-sinkDone:
			return
		case <-ctx.Done():
		}
		sink.StopBy(time.Now().Add(r.opts.StopTimeout))
		t := time.NewTimer(r.opts.StopTimeout)
		defer t.Stop()
		select {
		case <-sinkDone:
		case <-t.C:
			r.log.Warn("the sink did not finish within the stop timeout; what it holds is left for the next run", "timeout", r.opts.StopTimeout)
			cancel()
		}
	}()
	return sinkCtx, cancel
}

// startCheckpoint returns the stored checkpoint: from Kafka with exactly-once (the sink's
// Start fences any zombie and reads it with read_committed), else from the local store,
// or from Kafka's copy when the state directory has none (see resumeState).
func (r *run) startCheckpoint(ctx context.Context, sink *upsert.Sink) (*state.Checkpoint, error) {
	kafka, err := sink.Start(ctx)
	if err != nil {
		return nil, err
	}
	if r.opts.ResetState {
		return nil, r.resetState(ctx, sink)
	}
	if err := r.checkStoredIdentity(sink.StoredIdentity()); err != nil {
		return nil, err
	}
	var local *state.Checkpoint
	if !r.exactlyOnce() {
		if local, err = r.store.Load(); err != nil {
			return nil, err
		}
	}
	return r.resumeState(local, kafka)
}

// stopAt sets, with UntilCaughtUp, the position where the stream stops: the server's
// position now, before the snapshot (if one is due) starts.
func (r *run) stopAt(ctx context.Context, ph *phases) error {
	if !r.opts.UntilCaughtUp {
		return nil
	}
	stop, err := cdc.CurrentPosition(ctx, r.src)
	if err != nil {
		return err
	}
	r.src.StopAt = stop
	r.log.Info("running until caught up", "target", stop.String(), "snapshot", ph.runSnap)
	return nil
}

// forward passes batches from the producer to the sink: snapshot chunks with their progress,
// then stream transactions, through the hand-off filter while it is active; it keeps the lag
// metric.
func (r *run) forward(ctx context.Context, pipe *phasePipe, out chan<- upsert.Input) error {
	// send hands inputs to the sink; lagged: they are stream transactions, whose commit
	// times the lag metric follows (lag.go).
	send := func(lagged bool, inputs ...upsert.Input) bool {
		for _, in := range inputs {
			if lagged && in.End && len(in.Position) > 0 {
				r.lag.seen(in.CommitTime, time.Now()) // before the sink can acknowledge it
			}
			select {
			case out <- in: // room at once: no select over the context
				continue
			default:
			}
			if !sendWaiting(ctx, out, in) {
				return false
			}
		}
		return true
	}
	for b := range pipe.snapshot {
		b, err := r.apply(b)
		if err != nil {
			return err
		}
		in := upsert.Input{Batch: b}
		switch {
		case b.End && r.phases.join != nil:
			in = r.joinInput(b)
		case b.End:
			if in, err = r.chunkInput(b); err != nil {
				return err
			}
		}
		if !send(false, in) {
			return nil
		}
	}
	handoff := <-pipe.handoff
	var held []change.Batch // a stream transaction's batches, held while the hand-off filters
	for b := range pipe.stream {
		if handoff == nil {
			b, err := r.apply(b)
			if err != nil {
				return err
			}
			in := upsert.Input{Batch: b}
			if b.End {
				captured, err := r.capturedProgress()
				if err != nil {
					return err
				}
				in.State.Snapshot = captured
				in.State.Shapes = r.shapes.Encode()
				if err := r.schemaState(&in.State); err != nil {
					return err
				}
			}
			if !send(true, in) {
				return nil
			}
			continue
		}
		held = append(held, b)
		if !b.End {
			continue
		}
		inputs, done, err := r.filterHeld(ctx, handoff, held)
		if err != nil {
			return err
		}
		held = nil
		if done {
			handoff.Close() // its connections, if it kept any to weigh keys
			handoff = nil
		}
		if !send(true, inputs...) {
			return nil
		}
	}
	return nil
}

// apply maps a batch onto the written table shapes (schema.change.behavior), then through
// the transform block, as the sink is to receive it: snapshot and stream batches alike.
func (r *run) apply(b change.Batch) (change.Batch, error) {
	b, err := r.shapes.Apply(b)
	if err != nil {
		return b, err
	}
	return r.transforms.Apply(b)
}

// sendWaiting hands in to the sink, which is behind (Kafka is slow, or down), or gives up
// when ctx ends. The lag metric goes on rising meanwhile (followLag).
func sendWaiting(ctx context.Context, out chan<- upsert.Input, in upsert.Input) bool {
	select {
	case out <- in:
		return true
	case <-ctx.Done():
		return false
	}
}

// setLag sets the source lag metric and the status line's lag.
func (r *run) setLag(lag time.Duration) {
	r.m.SourceLag.Set(lag.Seconds())
	r.status.lagMillis.Store(lag.Milliseconds())
}

// chunkInput turns the End batch of a snapshot chunk into an input carrying the progress to
// store with it; it stores no binlog position.
func (r *run) chunkInput(b change.Batch) (upsert.Input, error) {
	p, err := r.phases.snap.ProgressAt(b.Position)
	if err != nil {
		return upsert.Input{}, err
	}
	head, chunks, err := r.chunks.parts(&p)
	if err != nil {
		return upsert.Input{}, err
	}
	b.Position = nil
	if p.Done {
		// The finished snapshot stores where the stream takes over, also when it
		// covered no table: never a finished snapshot without a position.
		pos, ok, err := p.HandoffPosition()
		if err != nil {
			return upsert.Input{}, err
		}
		if ok {
			b.Position = []byte(pos.String())
		}
	}
	return upsert.Input{Batch: b, State: upsert.State{Snapshot: head, Chunks: chunks, Shapes: r.shapes.Encode()}}, nil
}

// filterHeld filters a held stream transaction through the hand-off and returns its inputs,
// and whether the hand-off is finished. Until the stream has passed every chunk's high
// watermark, the finished snapshot progress is stored with each position, so that a restart
// filters the same way: its parts are encoded once (the snapshot is over, its progress no
// longer changes), and the sink writes only the position and a changed schema history.
func (r *run) filterHeld(ctx context.Context, h *snapshot.Handoff, held []change.Batch) ([]upsert.Input, bool, error) {
	end := held[len(held)-1]
	pos, err := streamPosition(end)
	if err != nil {
		return nil, false, err
	}
	done := h.Done(pos)
	var st upsert.State
	if !done {
		if st, err = r.handoffState(); err != nil {
			return nil, false, err
		}
	} else {
		r.log.Info("the binlog stream has passed the snapshot; hand-off finished", "position", pos.String())
		if st.Snapshot, err = r.capturedProgress(); err != nil {
			return nil, false, err
		}
	}
	inputs := make([]upsert.Input, len(held))
	for i, b := range held {
		kept, err := h.Filter(ctx, b, pos)
		if err == nil {
			kept, err = r.apply(kept)
		}
		if err != nil {
			return nil, false, err
		}
		inputs[i] = upsert.Input{Batch: kept}
	}
	if err := r.schemaState(&st); err != nil {
		return nil, false, err
	}
	st.Shapes = r.shapes.Encode()
	inputs[len(inputs)-1].State = st
	return inputs, done, nil
}

// capturedProgress is the snapshot progress stored once the hand-off is over: the captured
// set, the same slice until it changes (nil without a snapshot).
func (r *run) capturedProgress() ([]byte, error) {
	if r.capture == nil {
		return nil, nil
	}
	return r.capture.encoded()
}

// streamPosition is the position of a stream transaction's End batch: the source's typed
// one, parsed from the text only when the source gave none.
func streamPosition(end change.Batch) (binlogpos.Position, error) {
	if pos, ok := end.Mark.(binlogpos.Position); ok {
		return pos, nil
	}
	pos, err := binlogpos.ParsePosition(string(end.Position))
	if err != nil {
		return binlogpos.Position{}, fmt.Errorf("stream position %q: %w", end.Position, err)
	}
	return pos, nil
}

// handoffState is the state stored with the positions of the hand-off: the finished
// snapshot's progress, split into its parts once (again only when a table joins the
// captured set).
func (r *run) handoffState() (upsert.State, error) {
	var tables []byte
	if r.capture != nil {
		var err error
		if tables, err = r.capture.encoded(); err != nil {
			return upsert.State{}, err
		}
	}
	if r.handoff == nil || !sameSlice(tables, r.handoffTables) {
		p := r.phases.snap.Progress()
		if r.capture != nil {
			p.Tables = r.capture.list() // with the tables captured from their CREATE TABLE
		}
		head, chunks, err := r.chunks.parts(&p)
		if err != nil {
			return upsert.State{}, err
		}
		r.handoff, r.handoffTables = &upsert.State{Snapshot: head, Chunks: chunks}, tables
	}
	return *r.handoff, nil
}

// acked is the sink's report of an acknowledged (or committed) checkpoint.
func (r *run) acked(cp upsert.Checkpoint) {
	r.m.TransactionsCommitted.Add(float64(cp.Transactions))
	r.lag.acked(cp, time.Now())
	if r.exactlyOnce() {
		r.m.KafkaTransactions.Inc()
		if r.phases != nil && r.phases.join != nil {
			r.recordTables.Do(func() { // the pending join is committed: the selection is the state's
				if err := r.joinStored(r.phases.join); err != nil {
					r.log.Warn("could not record the table selection in the state directory", "state", r.store.Dir(), "err", err)
				}
			})
		}
		return
	}
	r.mu.Lock()
	r.pending = &cp
	r.mu.Unlock()
}

// saveLoop writes acknowledged checkpoints to the local store at most every SaveEvery.
func (r *run) saveLoop(ctx context.Context, sinkDone <-chan struct{}) error {
	tick := time.NewTicker(r.opts.SaveEvery)
	defer tick.Stop()
	for {
		select {
		case <-sinkDone:
			return nil
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if err := r.saveLast(); err != nil {
			return err
		}
	}
}

// saveLast writes the pending checkpoint, if any.
func (r *run) saveLast() error {
	r.mu.Lock()
	cp := r.pending
	r.pending = nil
	r.mu.Unlock()
	if cp == nil {
		return nil
	}
	stored, err := checkpointOf(*cp)
	if err == nil {
		err = r.store.Save(stored)
	}
	if err != nil {
		r.m.Errors.WithLabelValues("state").Inc()
		// Keep it pending: the next attempt (or the next run, from the last good one) retries.
		r.mu.Lock()
		if r.pending == nil {
			r.pending = cp
		}
		r.mu.Unlock()
		return fault.Terminal(fmt.Errorf("store position %s: %w", cp.Position, err)) // a full or read-only disk needs a person
	}
	r.m.PositionStored.SetToCurrentTime()
	r.status.position.Store(string(cp.Position))
	return nil
}
