package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ingestkit/ingest/metrics"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/progress"
	"github.com/ingestkit/ingest/runner"
	"github.com/ingestkit/ingest/secrets"
	"github.com/ingestkit/ingest/upsert"
)

// The defaults of the group settings: a worker that dies is noticed after
// DefaultSessionTimeout, which bounds most of the failover (docs/scaling.md).
const (
	DefaultSessionTimeout    = 10 * time.Second
	DefaultHeartbeatInterval = time.Second
	DefaultRestartWait       = 5 * time.Second
)

// TopicPrefix is the prefix of a group's internal topic: __ingest_fleet_<group>.
const TopicPrefix = "__ingest_fleet_"

// RunFunc runs one pipeline until ctx is cancelled; runner.Run is the real one.
type RunFunc func(ctx context.Context, def *pipeline.Definition, opts runner.Options) error

// Config is the configuration of a worker.
type Config struct {
	// Group is the group name (--group): the Kafka consumer group id, and the name of the
	// internal topic TopicPrefix+Group.
	Group string
	// Set is the pipelines of the group.
	Set *Set
	// ClientOpts connect to the Kafka cluster of the pipelines (their sink's security
	// settings included).
	ClientOpts []kgo.Opt
	// SessionTimeout is the group session timeout (default DefaultSessionTimeout; the broker
	// bounds it by group.min.session.timeout.ms, 6s by default); HeartbeatInterval the
	// heartbeat interval (default DefaultHeartbeatInterval); RebalanceTimeout how long the
	// members have to rejoin in a rebalance, stopping the pipelines they give up (default
	// StopTimeout plus 30s).
	SessionTimeout, HeartbeatInterval, RebalanceTimeout time.Duration
	// StateRoot holds one state directory per pipeline, StateRoot/<pipeline.name>
	// (default: runner.DefaultStateDir).
	StateRoot string
	// StopTimeout bounds the stop of one pipeline (runner.Options.StopTimeout).
	StopTimeout time.Duration
	// RestartWait is the first wait before a failed pipeline is run again (default
	// DefaultRestartWait); the waits double up to a minute.
	RestartWait time.Duration
	// StatusAddr is the address of the worker's status page, told to the group ("" none).
	StatusAddr string
	// Logger receives the logs (default slog.Default()); each pipeline's carry its name.
	Logger *slog.Logger
	// Scrubber knows the secret values (runner.Options.Scrubber).
	Scrubber *secrets.Scrubber
	// Run runs a pipeline (default runner.Run).
	Run RunFunc
	// ClientLogLevel is the level from which the group client's own logs are logged
	// (default kgo.LogLevelWarn).
	ClientLogLevel kgo.LogLevel
}

// Worker is one `ingest serve` process: a member of the group that runs the pipelines
// assigned to it.
type Worker struct {
	cfg   Config
	log   *slog.Logger
	topic string
	m     *fleetMetrics

	mu       sync.Mutex
	owned    map[string]*owned
	metrics  map[string]*metrics.Metrics // per pipeline, kept across ownerships
	draining bool
	member   string
	gen      int32
	refusal  chan string
	cl       *kgo.Client
	contact  *contact
	given    map[string]bool // the pipelines the group assigned to this worker
	// suspended: the coordinator has not been heard from for a session timeout, so the group
	// has most likely given this worker's pipelines to others; they are stopped until it
	// answers again (and then run again unless the group took them away meanwhile).
	suspended bool
}

// owned is a pipeline this worker runs.
type owned struct {
	t      *tracker
	cancel context.CancelFunc
	done   chan struct{}
}

// NewWorker returns a worker; Run runs it.
func NewWorker(cfg Config) (*Worker, error) {
	if cfg.Group == "" {
		return nil, errors.New("fleet: no group name")
	}
	if cfg.Set == nil {
		return nil, errors.New("fleet: no pipeline set")
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if cfg.HeartbeatInterval >= cfg.SessionTimeout {
		return nil, fmt.Errorf("fleet: heartbeat interval %s: want less than the session timeout %s (a third of it or less)",
			cfg.HeartbeatInterval, cfg.SessionTimeout)
	}
	if cfg.RebalanceTimeout <= 0 {
		stop := cfg.StopTimeout
		if stop <= 0 {
			stop = 20 * time.Second
		}
		cfg.RebalanceTimeout = stop + 30*time.Second
	}
	if cfg.RestartWait <= 0 {
		cfg.RestartWait = DefaultRestartWait
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Run == nil {
		cfg.Run = runner.Run
	}
	if cfg.ClientLogLevel == kgo.LogLevelNone {
		cfg.ClientLogLevel = kgo.LogLevelWarn
	}
	return &Worker{cfg: cfg, log: cfg.Logger.With("group", cfg.Group), topic: TopicPrefix + cfg.Group,
		m: newFleetMetrics(cfg.Group), owned: map[string]*owned{}, metrics: map[string]*metrics.Metrics{},
		refusal: make(chan string, 1), contact: newContact(), given: map[string]bool{}}, nil
}

// Topic is the group's internal topic.
func (w *Worker) Topic() string { return w.topic }

// Run joins the group and runs the pipelines assigned to this worker until ctx is cancelled
// (SIGTERM: it then stops its pipelines, positions stored, and leaves the group, so that the
// others take them over at once) or the group refuses it (an error wrapping [ErrRefused]).
func (w *Worker) Run(ctx context.Context) error {
	if err := w.ensureTopic(ctx); err != nil {
		return err
	}
	bal := NewBalancer(w.cfg.Set, w.topic, w.cfg.StatusAddr, func(reason string) {
		select {
		case w.refusal <- reason:
		default:
		}
	})
	opts := append([]kgo.Opt{}, w.cfg.ClientOpts...)
	opts = append(opts,
		kgo.ConsumerGroup(w.cfg.Group),
		kgo.ConsumeTopics(w.topic),
		kgo.Balancers(bal),
		kgo.DisableAutoCommit(),
		kgo.SessionTimeout(w.cfg.SessionTimeout),
		kgo.HeartbeatInterval(w.cfg.HeartbeatInterval),
		kgo.RebalanceTimeout(w.cfg.RebalanceTimeout),
		kgo.OnPartitionsAssigned(w.assigned),
		kgo.OnPartitionsRevoked(w.revoked),
		kgo.OnPartitionsLost(w.lost),
		kgo.WithLogger(kgoLogger{log: w.log, level: w.cfg.ClientLogLevel}),
		kgo.WithHooks(w.contact),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("fleet: group %s: %w", w.cfg.Group, err)
	}
	bal.self = func() string { id, _ := cl.GroupMetadata(); return id }
	w.mu.Lock()
	w.cl = cl
	w.mu.Unlock()
	w.log.Info("joining the group", "topic", w.topic, "pipelines", w.cfg.Set.Len(), "set", w.cfg.Set.Short(),
		"session_timeout", w.cfg.SessionTimeout, "heartbeat_interval", w.cfg.HeartbeatInterval)

	polled := make(chan error, 1)
	pctx, stopPoll := context.WithCancel(ctx)
	go func() { polled <- w.poll(pctx, cl) }()
	watched := make(chan struct{})
	go func() { defer close(watched); w.watch(pctx, cl) }()
	var runErr error
	select {
	case <-ctx.Done():
	case reason := <-w.refusal:
		runErr = fmt.Errorf("%w: %s", ErrRefused, reason)
	case runErr = <-polled:
		polled <- nil
	}
	stopPoll()
	if err := <-polled; runErr == nil {
		runErr = err
	}
	<-watched
	w.drain(runErr == nil)
	cl.Close() // leaves the group (its revoke finds nothing left to stop)
	w.stopAll()
	if runErr == nil {
		w.log.Info("left the group; every pipeline stopped with its position stored")
	}
	return runErr
}

// poll consumes the (empty) group topic, so that the client's group management runs, and
// logs the errors it reports, until ctx is cancelled or the client fails for good.
func (w *Worker) poll(ctx context.Context, cl *kgo.Client) error {
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if fs.IsClientClosed() {
			return errors.New("fleet: the Kafka client closed")
		}
		fs.EachError(func(t string, p int32, err error) {
			if errors.Is(err, context.Canceled) || errors.Is(err, ErrRefused) {
				return
			}
			w.log.Warn("group", "topic", t, "partition", p, "err", err)
		})
	}
}

// ensureTopic creates the group's topic with a partition per pipeline, or adds partitions to
// it when the set grew.
func (w *Worker) ensureTopic(ctx context.Context) error {
	cl, err := kgo.NewClient(w.cfg.ClientOpts...)
	if err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	n := int32(w.cfg.Set.Len())
	for attempt := 0; ; attempt++ {
		details, err := adm.ListTopics(ctx, w.topic)
		if err != nil {
			return fmt.Errorf("fleet: list topic %s: %w", w.topic, err)
		}
		d, ok := details[w.topic]
		switch {
		case !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition):
			resp, err := adm.CreateTopic(ctx, n, -1, map[string]*string{"retention.ms": ptr("3600000")}, w.topic)
			if err == nil {
				err = resp.Err
			}
			if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
				return fmt.Errorf("fleet: create topic %s with %d partitions: %w", w.topic, n, err)
			}
		case d.Err != nil:
			return fmt.Errorf("fleet: topic %s: %w", w.topic, d.Err)
		case int32(len(d.Partitions)) < n:
			resp, err := adm.UpdatePartitions(ctx, int(n), w.topic)
			if err == nil {
				err = resp.Error()
			}
			if err != nil && !errors.Is(err, kerr.InvalidPartitions) {
				return fmt.Errorf("fleet: grow topic %s to %d partitions: %w", w.topic, n, err)
			}
		default:
			return nil
		}
		if attempt == 50 {
			return fmt.Errorf("fleet: topic %s does not show %d partitions", w.topic, n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func ptr(s string) *string { return &s }

// assigned starts the pipelines of the partitions newly assigned.
func (w *Worker) assigned(_ context.Context, cl *kgo.Client, parts map[string][]int32) {
	w.noteGeneration(cl)
	w.m.rebalances.Inc()
	var names []string
	for _, p := range parts[w.topic] {
		if int(p) < w.cfg.Set.Len() {
			names = append(names, w.cfg.Set.At(int(p)).Name())
		}
	}
	if len(names) == 0 {
		return
	}
	sort.Strings(names)
	w.log.Info("pipelines assigned", "pipelines", names)
	w.mu.Lock()
	for _, name := range names {
		w.given[name] = true
	}
	if w.suspended {
		// An assignment is the coordinator's word that this worker is a member of the
		// current generation (kgo reported the lost pipelines before it rejoined): run all
		// that the group gives it.
		w.suspended = false
		names = names[:0]
		for name := range w.given {
			names = append(names, name)
		}
		sort.Strings(names)
		w.log.Info("the group coordinator answers again and has assigned pipelines to this worker", "pipelines", names)
	}
	w.mu.Unlock()
	for _, name := range names {
		w.start(name)
	}
}

// watch stops the owned pipelines when the group coordinator has not been heard from for a
// session timeout (a cut link, a paused process): the group has then most likely given them
// to other workers, which fence this one's writes, and this worker must not go on reading
// their binlogs and retrying their writes as a zombie. They run again when the group assigns
// pipelines to this worker (it rejoined: see assigned), or when the coordinator answers again
// and describes this worker as a member of a stable group still owning them (its session had
// not expired after all).
func (w *Worker) watch(ctx context.Context, cl *kgo.Client) {
	t := time.NewTicker(w.cfg.HeartbeatInterval)
	defer t.Stop()
	probed := make(chan *GroupState, 1)
	probing := false
	for {
		select {
		case <-ctx.Done():
			return
		case g := <-probed:
			probing = false
			if g != nil {
				w.contact.seen()
				w.resumeIfMember(cl, g)
			}
			continue
		case <-t.C:
		}
		if !probing {
			probing = true
			go func() {
				pctx, cancel := context.WithTimeout(ctx, 2*w.cfg.HeartbeatInterval)
				defer cancel()
				g, err := Describe(pctx, cl, w.cfg.Group)
				if err != nil {
					g = nil
				}
				probed <- g
			}()
		}
		silent := w.contact.silent(time.Now())
		w.mu.Lock()
		suspended, n := w.suspended, len(w.owned)
		if !suspended && silent > w.cfg.SessionTimeout {
			w.suspended = true
		}
		w.mu.Unlock()
		switch {
		case !suspended && silent > w.cfg.SessionTimeout:
			w.m.suspensions.Inc()
			w.log.Warn("no answer from the group coordinator for longer than the session timeout: the group has most likely "+
				"given this worker's pipelines to others; stopping them until it answers again", "silent", silent.Round(time.Millisecond),
				"session_timeout", w.cfg.SessionTimeout, "pipelines", n)
			w.stopAll()
		}
	}
}

// resumeIfMember runs, on a suspended worker that the coordinator still describes as a
// member of the stable group g, what the group still assigns to it.
func (w *Worker) resumeIfMember(cl *kgo.Client, g *GroupState) {
	if g.State != "Stable" || !w.isSuspended() {
		return
	}
	me, _ := cl.GroupMetadata()
	for _, m := range g.Members {
		if m.Member != me {
			continue
		}
		w.mu.Lock()
		if !w.suspended {
			w.mu.Unlock()
			return
		}
		w.suspended = false
		var names []string
		for _, name := range m.Pipelines {
			if w.given[name] {
				names = append(names, name)
			}
		}
		w.mu.Unlock()
		w.log.Info("the group coordinator answers again and still counts this worker a member; running its pipelines", "pipelines", names)
		for _, name := range names {
			w.start(name)
		}
		return
	}
}

// revoked stops the pipelines of the partitions revoked (a cooperative rebalance moves
// them elsewhere): they store their positions before the group assigns them again.
func (w *Worker) revoked(_ context.Context, cl *kgo.Client, parts map[string][]int32) {
	w.noteGeneration(cl)
	w.stopParts(parts, "revoked")
}

// lost stops the pipelines of partitions lost (the session expired): another worker may
// already run them, and fences this one's writes.
func (w *Worker) lost(_ context.Context, _ *kgo.Client, parts map[string][]int32) {
	w.stopParts(parts, "lost")
}

func (w *Worker) noteGeneration(cl *kgo.Client) {
	id, gen := cl.GroupMetadata()
	w.mu.Lock()
	w.member, w.gen = id, gen
	w.mu.Unlock()
}

func (w *Worker) stopParts(parts map[string][]int32, why string) {
	var names []string
	for _, p := range parts[w.topic] {
		if int(p) < w.cfg.Set.Len() {
			names = append(names, w.cfg.Set.At(int(p)).Name())
		}
	}
	if len(names) == 0 {
		return
	}
	w.mu.Lock()
	for _, name := range names {
		delete(w.given, name)
	}
	w.mu.Unlock()
	sort.Strings(names)
	w.log.Info("pipelines "+why+"; stopping them", "pipelines", names)
	w.stop(names)
}

// start runs the pipeline name until it is stopped, restarting it after failures.
func (w *Worker) start(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.draining {
		return
	}
	if _, ok := w.owned[name]; ok {
		return
	}
	p := w.cfg.Set.At(w.cfg.Set.index[name])
	m := w.metrics[name]
	if m == nil {
		m = metrics.New(name)
		if w.cfg.Scrubber != nil {
			m.ScrubLabels(w.cfg.Scrubber.Scrub)
		}
		w.metrics[name] = m
	}
	log := w.cfg.Logger.With("pipeline", name)
	t := newTracker(name, progress.NewLog(log, 30*time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	o := &owned{t: t, cancel: cancel, done: make(chan struct{})}
	w.owned[name] = o
	w.m.owned.Set(float64(len(w.owned)))
	opts := runner.Options{StateDir: w.stateDir(name), Logger: log, Metrics: m, Display: t,
		Scrubber: w.cfg.Scrubber, StopTimeout: w.cfg.StopTimeout}
	go func() {
		defer close(o.done)
		w.supervise(ctx, p.Def, opts, t, log)
	}()
}

func (w *Worker) stateDir(name string) string {
	if w.cfg.StateRoot == "" {
		return runner.DefaultStateDir(name)
	}
	return filepath.Join(w.cfg.StateRoot, name)
}

// supervise runs the pipeline until ctx is cancelled; a failed run is run again after a wait
// that doubles from RestartWait up to a minute (a run that lasted 5 minutes starts it again).
func (w *Worker) supervise(ctx context.Context, def *pipeline.Definition, opts runner.Options, t *tracker, log *slog.Logger) {
	wait := w.cfg.RestartWait
	for {
		began := time.Now()
		err := w.cfg.Run(ctx, def, opts)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("the run ended on its own")
		}
		if time.Since(began) > 5*time.Minute {
			wait = w.cfg.RestartWait
		}
		w.m.failures.WithLabelValues(def.Pipeline.Name).Inc()
		pause := wait
		if errors.Is(err, upsert.ErrFenced) {
			// Another worker runs it: the group moved it, and this worker hears of that at
			// its next heartbeat; give the group a session to settle before fencing back.
			pause = max(wait, w.cfg.SessionTimeout)
		}
		log.Error("pipeline failed; running it again", "err", err, "in", pause)
		t.update(func(s *PipelineStatus) {
			s.Phase, s.LastError, s.Running = PhaseFailed, err.Error(), time.Time{}
			s.Restarts++
		})
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		wait = min(2*wait, time.Minute)
		t.update(func(s *PipelineStatus) { s.Phase = PhaseStarting })
	}
}

// stop stops the named pipelines, in parallel, and waits for them (each within StopTimeout).
func (w *Worker) stop(names []string) {
	var stopping []*owned
	w.mu.Lock()
	for _, name := range names {
		if o, ok := w.owned[name]; ok {
			o.t.update(func(s *PipelineStatus) { s.Phase = PhaseStopping })
			o.cancel()
			stopping = append(stopping, o)
		}
	}
	w.mu.Unlock()
	for _, o := range stopping {
		<-o.done
	}
	w.mu.Lock()
	for _, name := range names {
		delete(w.owned, name)
	}
	w.m.owned.Set(float64(len(w.owned)))
	w.mu.Unlock()
}

// drain stops taking pipelines and, when graceful, stops the owned ones.
func (w *Worker) drain(graceful bool) {
	w.mu.Lock()
	w.draining = true
	n := len(w.owned)
	w.mu.Unlock()
	if graceful && n > 0 {
		w.log.Info("draining: stopping the pipelines, then leaving the group", "pipelines", n)
	}
	w.stopAll()
}

func (w *Worker) stopAll() {
	w.mu.Lock()
	names := make([]string, 0, len(w.owned))
	for name := range w.owned {
		names = append(names, name)
	}
	w.mu.Unlock()
	w.stop(names)
}

// Status is the worker's state, as /status shows it.
type Status struct {
	Group      string `json:"group"`
	Member     string `json:"member"`
	Generation int32  `json:"generation"`
	Set        string `json:"set"`
	Total      int    `json:"pipelines_total"`
	Draining   bool   `json:"draining"`
	// Suspended: the group coordinator has not answered for a session timeout; the worker
	// runs nothing until it does.
	Suspended bool             `json:"suspended"`
	Owned     []PipelineStatus `json:"owned"`
}

// Status returns the worker's state.
func (w *Worker) Status() Status {
	w.mu.Lock()
	st := Status{Group: w.cfg.Group, Member: w.member, Generation: w.gen, Set: w.cfg.Set.Hash(), Total: w.cfg.Set.Len(),
		Draining: w.draining, Suspended: w.suspended, Owned: []PipelineStatus{}}
	for _, o := range w.owned {
		st.Owned = append(st.Owned, o.t.status())
	}
	w.mu.Unlock()
	sort.Slice(st.Owned, func(i, j int) bool { return st.Owned[i].Name < st.Owned[j].Name })
	return st
}

func (w *Worker) isSuspended() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.suspended
}
