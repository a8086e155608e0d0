package upsert

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ingestkit/ingest/change"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Guarantee is the option sink.delivery-guarantee.
type Guarantee uint8

// The delivery guarantees of OUTPUT.md.
const (
	// AtLeastOnce (the default): acks=all, idempotent; a checkpoint is reported once every
	// record of its transaction and of all before it is acknowledged.
	AtLeastOnce Guarantee = iota
	// ExactlyOnce: records and checkpoints are written in Kafka transactions.
	ExactlyOnce
	// None: fire and forget (acks=1 unless acks=0 is given, no idempotence).
	None
)

// String returns the option value.
func (g Guarantee) String() string {
	return [...]string{"at-least-once", "exactly-once", "none"}[g]
}

// ParseGuarantee parses a sink.delivery-guarantee value.
func ParseGuarantee(s string) (Guarantee, error) {
	for g := AtLeastOnce; g <= None; g++ {
		if g.String() == s {
			return g, nil
		}
	}
	return 0, fmt.Errorf("upsert: sink.delivery-guarantee: invalid value %q; valid: at-least-once, exactly-once, none", s)
}

// Input is one batch for the sink, with the caller's state.
type Input struct {
	change.Batch
	// State is the state to store with the batch's position (read only when End is set);
	// it comes back in the [Checkpoint].
	State State
}

// Config configures a [Sink]. Zero values mean the defaults named on each field.
type Config struct {
	// Pipeline is the pipeline name (required): the key of the state record and the base
	// of the default transactional id.
	Pipeline string
	// Properties are the parsed properties.* options (required; see [ParseProperties]).
	Properties *Properties
	// Guarantee is sink.delivery-guarantee (default AtLeastOnce).
	Guarantee Guarantee
	// TransactionalID is the transactional id in exactly-once mode (default "ingest-" +
	// Pipeline); the runner passes sink.transactional-id-prefix when it is set.
	TransactionalID string
	// Topics returns the topics a table's records go to (required; the route package's
	// Table.Topics). It must return at least one topic.
	Topics func(change.TableID) []string
	// Encode are the encoding options.
	Encode EncodeOptions
	// Format, when set, encodes the changes instead of an [Encoder] with Encode: an
	// [EventEncoder] for type kafka.
	Format Format
	// Targets, when set, returns the targets of a table (topic and the table id its records
	// name) instead of Topics with the source table's id; Topics is then not used.
	Targets func(change.TableID) []Target
	// AllToZero is partition.strategy all-to-zero: every record but the state record goes
	// to partition 0.
	AllToZero bool
	// TopicConfigs are the configs of created topics (default cleanup.policy=compact).
	TopicConfigs map[string]string
	// BufferMaxRows and BufferInterval are sink.buffer-flush.max-rows and .interval: with
	// both set, only the latest record per (topic, key) is kept and written when either
	// limit is reached. Both zero: no buffering.
	BufferMaxRows  int
	BufferInterval time.Duration
	// AutoCreate is sink.topic.auto-create (the pipeline's default is true): missing
	// topics are created compacted; otherwise a missing topic is an error.
	AutoCreate bool
	// Partitions and ReplicationFactor are sink.topic.partitions and
	// .replication-factor for created topics; 0 means the cluster's default.
	Partitions        int32
	ReplicationFactor int16
	// Creator creates missing topics (default: the Kafka admin API on the sink's client).
	Creator TopicCreator
	// Ledger, when set, keeps the partition count of every topic written to across runs: a
	// topic whose count differs from the recorded one is refused before the first record of
	// a run (layout.go). Without it, counts are only held fixed within a run.
	Ledger PartitionLedger
	// StateTopic is the compacted topic of the checkpoints (default [DefaultStateTopic]).
	StateTopic string
	// Identity is what the pipeline's state belongs to (opaque JSON); it is stored with the
	// state and returned by [Sink.StoredIdentity], so that a caller can tell whether the
	// state in Kafka is its own.
	Identity []byte
	// StateInterval bounds how often an at-least-once (or none) sink writes the newest
	// acknowledged checkpoint to the state topic (default 1s); the last one is written
	// when Run stops.
	StateInterval time.Duration
	// TransactionInterval and TransactionMaxBytes bound an exactly-once Kafka transaction:
	// it is committed at the first source transaction end after either is reached
	// (defaults 1s and 64 MiB).
	TransactionInterval time.Duration
	TransactionMaxBytes int64
	// TruncateTombstones is sink.truncate.tombstones: a TRUNCATE TABLE, DROP TABLE or
	// RENAME TABLE away of a table writes a tombstone for every key the table has in its
	// topics, found by reading them back (clear.go). Only with the upsert [Encoder]. Off,
	// such a statement writes nothing (and says so in the log).
	TruncateTombstones bool
	// SharedTopic reports whether tables other than table write to topic, so that a record
	// without table headers there cannot be told to be table's. Nil: every topic may be.
	SharedTopic func(table change.TableID, topic string) bool
	// SkipOversized is sink.skip-oversized-records: a record larger than
	// max.request.size is dropped with a warning instead of stopping the sink.
	SkipOversized bool
	// Acked is called with each checkpoint that is acknowledged (at-least-once, none) or
	// committed (exactly-once), in order, from Run's goroutine; it must not block for long.
	Acked func(Checkpoint)
	// Written, when set, is called for every record the broker acknowledged (with
	// exactly-once: written into the open transaction), from the producer's goroutines; it
	// must be fast and safe for concurrent use (metrics).
	Written func(Written)
	// Logger receives warnings and notices (default slog.Default()).
	Logger *slog.Logger
	// StopTimeout bounds the whole stop of Run, the final flush and commit (or abort)
	// together, from the moment it begins (default 20s); [Sink.StopBy] can set an earlier end.
	StopTimeout time.Duration
	// ConnectTimeout bounds the metadata request with which Start checks that a broker
	// answers (default 30s, the source's connect.timeout in a pipeline).
	ConnectTimeout time.Duration
	// ClientOpts are added to the franz-go options last (tests, tuning).
	ClientOpts []kgo.Opt
}

// Written describes one acknowledged record, for metrics.
type Written struct {
	Table     change.TableID
	Topic     string
	Bytes     int           // key plus value
	Tombstone bool          // the record has no value
	Latency   time.Duration // from handing the record to the producer to its acknowledgement
}

// Stats are counters of a running sink, safe to read at any time.
type Stats struct {
	// Records is the number of records handed to the producer.
	Records atomic.Int64
	// Skipped is the number of records dropped for being larger than max.request.size.
	Skipped atomic.Int64
	// Replaced is the number of records the buffer dropped for a later one of their key.
	Replaced atomic.Int64
	// Commits and Aborts count exactly-once Kafka transactions.
	Commits, Aborts atomic.Int64
}

// Sink writes batches of changes to Kafka as keyed JSON upserts.
//
// Use: [New] checks the configuration; [Sink.Start] connects and returns the stored
// checkpoint (exactly-once); [Sink.Run] consumes the input channel until it is closed or
// the context is cancelled, then flushes (and commits) within Config.StopTimeout and
// returns nil; a failure returns an [*Error]. Run reports progress through Config.Acked.
// A Sink runs once; Run closes its client when it returns.
type Sink struct {
	cfg    Config
	log    *slog.Logger
	cl     *kgo.Client
	admin  *kadm.Client
	topics *topicManager
	part   *fixedPartitioner
	enc    Format
	buf    *buffer
	track  *tracker
	txn    *txnState
	state  *stateWriter // the state topic's records; set by Start
	stored *StoredState // what Start read from the state topic
	alo    aloState     // at-least-once (and none): the state written behind the acknowledgements
	msgs   []Message
	sent   []sentRecord // the rest of the current block of newRecord
	onDone func(*kgo.Record, error)
	stats  Stats
	// now is the time the batch being written (or the buffer being flushed) was taken: its
	// records' send latency starts there. One clock reading per batch instead of per record.
	now time.Time

	failMu   sync.Mutex
	failErr  error
	failed   chan struct{} // closed on the first record failure
	canceled atomic.Bool   // a record was not produced because Run's context ended

	started   bool
	closeOnce sync.Once

	marks resnapshotMarks // where the records of the tables snapshotted again begin (clear.go)

	txnChanges   bool         // the source transaction being written had changes so far
	stopBy       atomic.Int64 // StopBy, Unix nanoseconds; 0: not set
	stopDeadline time.Time    // when the stop begun by Run must be over; zero until then
}

// DefaultStopTimeout is Config.StopTimeout's default: under Kubernetes' 30s grace period.
const DefaultStopTimeout = 20 * time.Second

// StopBy sets when Run's stop must be over at the latest: the owner of a run's stop
// deadline sets it once (at SIGTERM), and the final flush, commit or abort all end by then.
// What could not be written by then is left for the next run. Safe to call from any
// goroutine.
func (s *Sink) StopBy(t time.Time) { s.stopBy.Store(t.UnixNano()) }

// stopContext returns the context of the stop: not cancelled with ctx, but ended at the
// stop's one deadline, fixed by the first call (now plus StopTimeout, or StopBy if that is
// earlier) and shared by every later call, so that a flush followed by an abort does not
// get the time twice.
func (s *Sink) stopContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.stopDeadline.IsZero() {
		s.stopDeadline = time.Now().Add(s.cfg.StopTimeout)
	}
	if by := s.stopBy.Load(); by != 0 && time.Unix(0, by).Before(s.stopDeadline) {
		s.stopDeadline = time.Unix(0, by)
	}
	return context.WithDeadline(context.WithoutCancel(ctx), s.stopDeadline)
}

// New checks cfg and returns a Sink. It does no I/O.
func New(cfg Config) (*Sink, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg.defaults()
	s := &Sink{cfg: cfg, log: cfg.Logger, enc: cfg.Format, failed: make(chan struct{})}
	if s.enc == nil {
		enc := NewEncoder(cfg.Encode)
		enc.pool = newSlabPool(poisonSlabs)
		s.enc = enc
	}
	s.onDone = s.done
	s.part = newFixedPartitioner(s.grew)
	if cfg.BufferMaxRows > 0 {
		s.buf = newBuffer(cfg.BufferMaxRows, cfg.BufferInterval)
	}
	if cfg.Guarantee == ExactlyOnce {
		s.txn = &txnState{}
	} else {
		s.track = newTracker()
	}
	return s, nil
}

func (c *Config) check() error {
	switch {
	case c.Pipeline == "":
		return errors.New("upsert: the pipeline name is required")
	case c.Properties == nil:
		return errors.New("upsert: the sink properties are required")
	case c.Topics == nil && c.Targets == nil:
		return errors.New("upsert: the topic router is required")
	case c.Guarantee > None:
		return fmt.Errorf("upsert: invalid delivery guarantee %d", c.Guarantee)
	case (c.BufferMaxRows > 0) != (c.BufferInterval > 0):
		return errors.New("upsert: sink.buffer-flush.max-rows and sink.buffer-flush.interval must be set together")
	case c.BufferMaxRows < 0 || c.BufferInterval < 0:
		return errors.New("upsert: sink.buffer-flush.* must not be negative")
	}
	return c.checkAcks()
}

// checkAcks refuses properties that contradict the delivery guarantee.
func (c *Config) checkAcks() error {
	p := c.Properties
	if c.Guarantee == None {
		if p.Idempotence != nil && *p.Idempotence {
			return errors.New("upsert: sink.delivery-guarantee none does not use idempotence; remove properties.enable.idempotence")
		}
		return nil
	}
	if p.Acks != AcksUnset && p.Acks != AcksAll {
		return fmt.Errorf("upsert: sink.delivery-guarantee %s needs acks=all; remove properties.acks", c.Guarantee)
	}
	if p.Idempotence != nil && !*p.Idempotence {
		return fmt.Errorf("upsert: sink.delivery-guarantee %s needs the idempotent producer (it keeps per-key order across retries); remove properties.enable.idempotence=false", c.Guarantee)
	}
	return nil
}

func (c *Config) defaults() {
	if c.TransactionalID == "" {
		c.TransactionalID = "ingest-" + c.Pipeline
	}
	if c.StateTopic == "" {
		c.StateTopic = DefaultStateTopic
	}
	if c.StateInterval <= 0 {
		c.StateInterval = time.Second
	}
	if c.TransactionInterval <= 0 {
		c.TransactionInterval = time.Second
	}
	if c.TransactionMaxBytes <= 0 {
		c.TransactionMaxBytes = 64 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.StopTimeout <= 0 {
		c.StopTimeout = DefaultStopTimeout
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 30 * time.Second
	}
	if c.Partitions == 0 {
		c.Partitions = -1
	}
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = -1
	}
	if c.TopicConfigs == nil {
		c.TopicConfigs = map[string]string{"cleanup.policy": "compact"}
	}
}

// Stats returns the sink's counters.
func (s *Sink) Stats() *Stats { return &s.stats }

// clientOpts are the franz-go options of the sink's producer.
func (s *Sink) clientOpts() []kgo.Opt {
	p := s.cfg.Properties
	// The default minimum metadata age (5s) would make the first records to a topic the
	// sink just created wait that long; a shorter one costs a few more metadata requests.
	opts := append(p.ClientOpts(), kgo.RecordPartitioner(statePartitioner{state: s.cfg.StateTopic, data: s.partitioner()}),
		kgo.MetadataMinAge(250*time.Millisecond))
	switch s.cfg.Guarantee {
	case None:
		acks := kgo.LeaderAck()
		if p.Acks == AcksNone {
			acks = kgo.NoAck()
		} else if p.Acks == AcksAll {
			acks = kgo.AllISRAcks()
		}
		opts = append(opts, kgo.RequiredAcks(acks), kgo.DisableIdempotentWrite())
	case ExactlyOnce:
		opts = append(opts, kgo.TransactionalID(s.cfg.TransactionalID))
		if p.TransactionTimeout > 0 {
			opts = append(opts, kgo.TransactionTimeout(p.TransactionTimeout))
		}
	}
	return append(opts, s.cfg.ClientOpts...)
}

// Start connects to Kafka, makes sure that the state topic exists and returns the
// pipeline's checkpoint stored there, or nil when there is none. In exactly-once mode it
// first fences any earlier writer with the same transactional id (aborting its open
// transaction), and the checkpoint is the last committed one; in the other modes it is the
// copy an earlier run wrote behind its acknowledgements (the caller keeps its own too).
func (s *Sink) Start(ctx context.Context) (*Checkpoint, error) {
	if s.started {
		return nil, errors.New("upsert: sink already started")
	}
	s.started = true
	if err := s.probe(ctx); err != nil {
		return nil, err
	}
	// An EOF as the first answer on a new connection is, by franz-go's default, a
	// configuration error that fails the records; a broker that is stopping or starting
	// gives the same. probe has ruled the configuration error out, so retry it.
	cl, err := kgo.NewClient(append(s.clientOpts(), kgo.AlwaysRetryEOF())...)
	if err != nil {
		return nil, fmt.Errorf("upsert: %w", err)
	}
	s.cl, s.admin = cl, kadm.NewClient(cl)
	creator := s.cfg.Creator
	if creator == nil {
		creator = KafkaTopicCreator{Admin: s.admin}
	}
	s.topics = &topicManager{admin: s.admin, creator: creator, create: s.cfg.AutoCreate, log: s.log,
		known: map[string]bool{},
		spec: TopicSpec{Partitions: s.cfg.Partitions, ReplicationFactor: s.cfg.ReplicationFactor,
			Configs: s.cfg.TopicConfigs},
		layout: &topicLayout{ledger: s.cfg.Ledger, recorded: map[string]int32{}, part: s.part}}
	if err := s.checkLayout(ctx); err != nil {
		s.Close()
		return nil, err
	}
	cp, err := s.startState(ctx)
	if err != nil {
		s.Close()
		return nil, err
	}
	return cp, nil
}

// checkLayout loads the recorded partition counts and checks the topics they name, before
// the first record of the run.
func (s *Sink) checkLayout(ctx context.Context) error {
	if s.cfg.Ledger == nil {
		return nil
	}
	recorded, err := s.cfg.Ledger.Partitions()
	if err != nil {
		return &Error{Op: "read partition counts", Err: err}
	}
	s.topics.layout.recorded = recorded
	return s.topics.checkRecorded(ctx)
}

// grew is told by the partitioner that the client sees another partition count for topic
// than the one fixed for the run: the sink stops (the partitioner keeps using the fixed
// count meanwhile, so no record goes to a partition of the new layout).
func (s *Sink) grew(topic string, fixed, seen int) {
	s.fail(&Error{Op: "produce", Topic: topic, Err: &PartitionCountError{Topic: topic, Current: int32(seen),
		Recorded: int32(fixed), State: s.ledgerDir(), Running: true}})
}

func (s *Sink) ledgerDir() string {
	if s.cfg.Ledger == nil {
		return ""
	}
	return s.cfg.Ledger.Dir()
}

// probeAttempts is how many times probe tries a metadata request whose new connection
// gave an EOF on the first read before that counts as a configuration error.
const probeAttempts = 3

// probe asks the brokers for metadata, for at most ConnectTimeout, with a client that keeps
// franz-go's default for an EOF on a new connection's first read: an error at once, which is
// what a listener expecting SASL or TLS gives a client speaking neither. Three such answers
// in a row are a configuration error. An answer of Kafka's (an error code: refused
// credentials, say) is left to the sink's client, which says what it is. Anything else
// until ConnectTimeout has passed (a wrong address, a broker that is down or restarting, a
// port where something else answers; tried again every second) is a retryable connect
// error: on a first start the caller stops with it before anything is read; on a restart
// it tries again later.
func (s *Sink) probe(ctx context.Context) error {
	cl, err := kgo.NewClient(append(s.cfg.Properties.ClientOpts(), s.cfg.ClientOpts...)...)
	if err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	defer cl.Close()
	admin := kadm.NewClient(cl)
	pctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	defer cancel()
	var last error // the last failure that says more than the deadline
	for eofs := 0; ; {
		_, err := admin.BrokerMetadata(pctx)
		if last == nil || !errors.Is(err, context.DeadlineExceeded) {
			last = err
		}
		var eof *kgo.ErrFirstReadEOF
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &eof):
			if eofs++; eofs == probeAttempts {
				return &Error{Op: "connect", Err: fmt.Errorf("%w; check properties.security.protocol (and the sasl.* and ssl.* properties) against the brokers' listener", err)}
			}
		case kafkaAnswered(err):
			return nil
		}
		select {
		case <-time.After(time.Second):
		case <-pctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &Error{Op: "connect", Retryable: true, Err: fmt.Errorf("no Kafka broker of properties.bootstrap.servers %s answered within %s "+
				"(the source's connect.timeout): %w; check the address and that the brokers are up", strings.Join(s.cfg.Properties.Brokers, ","), s.cfg.ConnectTimeout, last)}
		}
	}
}

// kafkaAnswered reports whether err is an error code from a Kafka broker.
func kafkaAnswered(err error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke)
}

// Close releases the client. Run calls it; call it yourself only after a Start that is not
// followed by Run. It is safe to call more than once.
func (s *Sink) Close() {
	s.closeOnce.Do(func() {
		if s.cl != nil {
			s.cl.Close()
		}
	})
}

// Run writes the batches of in until in is closed or ctx is cancelled, then flushes what
// it holds (committing in exactly-once mode, when the input ended on a transaction
// boundary) within Config.StopTimeout, reports the final checkpoint and returns nil. It
// returns an error when a record cannot be written; the caller restarts from the last
// reported checkpoint. Run calls Start first if the caller has not.
func (s *Sink) Run(ctx context.Context, in <-chan Input) (err error) {
	if !s.started {
		if _, err := s.Start(ctx); err != nil {
			return err
		}
	}
	defer s.Close()
	tick := time.NewTicker(s.tickInterval())
	defer tick.Stop()
	fast := 0 // batches taken in a row without looking at the other cases
	for {
		if fast < maxFastBatches {
			select {
			case b, ok := <-in: // a batch waiting: take it without a select over five cases
				fast++
				if err := s.take(ctx, b, ok); err != nil || !ok {
					return err
				}
				continue
			default:
			}
		}
		fast = 0
		select {
		case <-ctx.Done():
			return s.stop(ctx)
		case b, ok := <-in:
			if err := s.take(ctx, b, ok); err != nil || !ok {
				return err
			}
		case <-tick.C:
			if err := s.tick(ctx); err != nil {
				return s.abort(ctx, err)
			}
		case <-s.notify():
			s.report()
		case <-s.failed:
			return s.abort(ctx, s.failure())
		}
	}
}

// maxFastBatches is how many waiting batches Run takes in a row before it looks at the
// context, the ticker, acknowledgements and failures again.
const maxFastBatches = 16

// take writes one batch received by Run, or, when in is closed (ok false), stops. It
// returns what Run returns, nil to go on.
func (s *Sink) take(ctx context.Context, b Input, ok bool) error {
	if !ok {
		return s.stop(ctx)
	}
	if err := s.write(ctx, &b); err != nil {
		if ctx.Err() != nil {
			return s.stop(ctx) // cancelled in the middle of the batch
		}
		return s.abort(ctx, err)
	}
	if b.Release != nil {
		b.Release() // the records hold encoded copies; the rows are done with
	}
	return nil
}

func (s *Sink) tickInterval() time.Duration {
	d := 100 * time.Millisecond
	if s.buf != nil {
		d = min(d, max(s.cfg.BufferInterval/4, 5*time.Millisecond))
	}
	if s.txn != nil {
		d = min(d, max(s.cfg.TransactionInterval/4, 5*time.Millisecond))
	}
	return d
}

func (s *Sink) notify() <-chan struct{} {
	if s.track == nil {
		return nil
	}
	return s.track.notify
}

// write encodes and sends (or buffers) the records of one batch.
func (s *Sink) write(ctx context.Context, b *Input) error {
	s.now = time.Now()
	cl, err := s.prepareClear(ctx, b) // before the batch's transaction (clear.go)
	if err != nil {
		return err
	}
	if s.txn != nil && len(b.Changes) > 0 {
		if err := s.beginTxn(); err != nil {
			return err
		}
		s.txn.partial = true
	}
	for i := range b.Changes {
		c := &b.Changes[i]
		if clears(c) && c.Schema != nil {
			if err := s.writeClear(ctx, cl, c, b.CommitTime); err != nil {
				return err
			}
			continue
		}
		if err := s.writeChange(ctx, c, b.CommitTime); err != nil {
			return err
		}
	}
	if !b.End {
		s.txnChanges = s.txnChanges || len(b.Changes) > 0
		return nil
	}
	cp := &Checkpoint{Position: b.Position, State: b.State, CommitTime: b.CommitTime}
	if len(b.Position) > 0 { // a snapshot chunk's end has none
		cp.Ends = 1
		if s.txnChanges || len(b.Changes) > 0 {
			cp.Transactions = 1
		}
	}
	s.txnChanges = false
	if s.txn != nil {
		return s.endTxn(ctx, cp)
	}
	s.track.pendingCheckpoint(cp)
	if s.buf == nil || s.buf.len() == 0 {
		s.track.sealPending()
	}
	return nil
}

func (s *Sink) writeChange(ctx context.Context, c *change.Change, commit time.Time) error {
	if c.Op == change.SchemaChange {
		return nil
	}
	if c.Schema == nil {
		return errors.New("upsert: change without a schema")
	}
	table := c.Schema.Table
	if s.cfg.Targets != nil {
		return s.writeTargets(ctx, c, commit, s.cfg.Targets(table))
	}
	topics := s.cfg.Topics(table)
	if len(topics) == 0 {
		return &Error{Op: "route", Table: table, Err: errors.New("no topic for the table")}
	}
	if err := s.topics.ensure(ctx, topics); err != nil {
		return err
	}
	var err error
	if s.msgs, err = s.enc.EncodeTo(s.msgs[:0], c, commit, nil); err != nil {
		return &Error{Op: "encode", Table: table, Err: err}
	}
	return s.send(ctx, table, topics)
}

// writeTargets writes one change to each of its targets; a format whose messages depend
// on the target encodes the change for each.
func (s *Sink) writeTargets(ctx context.Context, c *change.Change, commit time.Time, targets []Target) error {
	table := c.Schema.Table
	if len(targets) == 0 {
		return &Error{Op: "route", Table: table, Err: errors.New("no topic for the table")}
	}
	if !s.enc.PerTarget() {
		topics := make([]string, len(targets))
		for i, t := range targets {
			topics[i] = t.Topic
		}
		if err := s.topics.ensure(ctx, topics); err != nil {
			return err
		}
		var err error
		if s.msgs, err = s.enc.EncodeTo(s.msgs[:0], c, commit, &targets[0]); err != nil {
			return &Error{Op: "encode", Table: table, Err: err}
		}
		return s.send(ctx, table, topics)
	}
	for i := range targets {
		topic := []string{targets[i].Topic}
		if err := s.topics.ensure(ctx, topic); err != nil {
			return err
		}
		var err error
		if s.msgs, err = s.enc.EncodeTo(s.msgs[:0], c, commit, &targets[i]); err != nil {
			return &Error{Op: "encode", Table: table, Topic: targets[i].Topic, Err: err}
		}
		if err := s.send(ctx, table, topic); err != nil {
			return err
		}
	}
	return nil
}

// send writes the encoded messages s.msgs to each of topics.
func (s *Sink) send(ctx context.Context, table change.TableID, topics []string) error {
	for _, m := range s.msgs {
		// Each record holds the message's slabs until it is acknowledged: the first takes
		// over the message's holds, the copies for other topics hold them once more, all
		// before the first can be acknowledged.
		for range topics[1:] {
			m.slabs.hold()
		}
		for _, topic := range topics {
			r := s.newRecord()
			r.rec = kgo.Record{Topic: topic, Key: m.Key, Value: m.Value, Headers: m.Headers, Timestamp: m.Timestamp}
			r.meta.table = table
			r.meta.slabs = m.slabs
			if err := s.emit(ctx, outRecord{rec: &r.rec, meta: &r.meta, table: table}); err != nil {
				return err
			}
		}
	}
	return nil
}

// sentRecord is a record and what its promise needs, allocated together in blocks of
// sentBlock (one allocation per block instead of a record and a closure per record).
type sentRecord struct {
	rec  kgo.Record
	meta recordMeta
}

// recordMeta is a record's Context (franz-go's field for enriching records): it wraps the
// context given to Produce, so the producer's cancellation is unchanged, and carries what
// the one promise function of the sink needs to complete the record.
type recordMeta struct {
	context.Context
	table change.TableID
	unit  *unit
	start time.Time
	slabs slabHolds // released once the record is acknowledged, or known never to be sent
}

const sentBlock = 256

// newRecord returns a zero sentRecord from the current block. Blocks are never reused: a
// block is garbage once the client has let go of all its records.
func (s *Sink) newRecord() *sentRecord {
	if len(s.sent) == 0 {
		s.sent = make([]sentRecord, sentBlock)
	}
	r := &s.sent[0]
	s.sent = s.sent[1:]
	return r
}

// emit checks a record's size and buffers or produces it.
func (s *Sink) emit(ctx context.Context, r outRecord) error {
	if size := recordSize(r.rec); size > int(s.cfg.Properties.MaxRequestSize) {
		err := &OversizedError{Size: size, Max: int(s.cfg.Properties.MaxRequestSize)}
		if !s.cfg.SkipOversized {
			return &Error{Op: "produce", Topic: r.rec.Topic, Table: r.table, Key: r.rec.Key, Err: err}
		}
		s.stats.Skipped.Add(1)
		s.log.Warn("upsert: skipping oversized record (sink.skip-oversized-records)", "topic", r.rec.Topic,
			"table", r.table.String(), "key", string(truncate(r.rec.Key)), "size", size, "max", err.Max)
		if r.meta != nil {
			r.meta.slabs.release()
		}
		return nil
	}
	if s.buf == nil {
		return s.produce(ctx, r)
	}
	full := s.buf.add(r, s.now)
	if full {
		return s.flush(ctx)
	}
	return nil
}

// flush produces every buffered record and attaches the checkpoint waiting for them.
func (s *Sink) flush(ctx context.Context) error {
	if s.buf == nil {
		return nil
	}
	s.stats.Replaced.Store(s.buf.replaced)
	s.now = time.Now()
	for _, r := range s.buf.take() {
		if err := s.produce(ctx, r); err != nil {
			return err
		}
	}
	if s.track != nil {
		s.track.sealPending()
	}
	return nil
}

// produce hands one record to the client. It blocks while the client's buffer is full,
// which is what slows the source down when Kafka is slow.
func (s *Sink) produce(ctx context.Context, r outRecord) error {
	if err := s.failure(); err != nil {
		return err
	}
	s.stats.Records.Add(1)
	var u *unit
	if s.txn != nil {
		s.txn.bytes += int64(len(r.rec.Key) + len(r.rec.Value))
	} else {
		u = s.track.add()
	}
	if r.meta == nil { // a record built without its meta (tests)
		s.cl.Produce(ctx, r.rec, s.promise(r.table, u))
		return nil
	}
	m := r.meta
	m.Context, m.unit = ctx, u
	m.start = s.now
	r.rec.Context = m
	s.cl.Produce(ctx, r.rec, s.onDone)
	return nil
}

// done is the promise of the records with a recordMeta (Sink.onDone).
func (s *Sink) done(r *kgo.Record, err error) {
	m := r.Context.(*recordMeta)
	s.complete(r, err, m.table, m.unit, m.start)
	if err == nil {
		// Written: the client no longer reads the record's bytes. A failed record keeps
		// its slabs, since the error that names its key may be read later.
		m.slabs.release()
	}
}

// written reports an acknowledged record to Config.Written.
func (s *Sink) written(table change.TableID, r *kgo.Record, start time.Time) {
	s.cfg.Written(Written{Table: table, Topic: r.Topic, Bytes: len(r.Key) + len(r.Value),
		Tombstone: r.Value == nil, Latency: time.Since(start)})
}

// promise returns the callback of a record without a recordMeta (the state record of a
// transaction, records built by tests): it calls complete. Promises run on the client's
// goroutine and never block.
func (s *Sink) promise(table change.TableID, u *unit) func(*kgo.Record, error) {
	var start time.Time
	if s.cfg.Written != nil {
		start = time.Now()
	}
	return func(r *kgo.Record, err error) { s.complete(r, err, table, u, start) }
}

// complete records the result of one record: the metrics, the first failure, its unit.
func (s *Sink) complete(r *kgo.Record, err error, table change.TableID, u *unit, start time.Time) {
	if err == nil && s.cfg.Written != nil {
		s.written(table, r, start)
	}
	if err != nil && errors.Is(err, context.Canceled) {
		// Run is stopping: the record was never written; its unit stays incomplete and
		// an exactly-once transaction holding it is aborted, not committed.
		s.canceled.Store(true)
	} else if err != nil {
		if errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge) {
			err = fmt.Errorf("%w (the broker or topic limit max.message.bytes is lower than the record)", err)
		}
		s.fail(wrap("produce", r.Topic, table, r.Key, err))
	}
	if u != nil {
		u.done(err)
	}
}

// fail records the first failure and wakes Run.
func (s *Sink) fail(err error) {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	if s.failErr == nil {
		s.failErr = err
		close(s.failed)
	}
}

func (s *Sink) failure() error {
	select {
	case <-s.failed: // closed once failErr is set; the check takes no lock (produce, per record)
	default:
		return nil
	}
	s.failMu.Lock()
	defer s.failMu.Unlock()
	return s.failErr
}

// report passes the newest fully acknowledged checkpoint to Config.Acked.
func (s *Sink) report() {
	cp := s.track.release()
	if cp == nil {
		return
	}
	if s.cfg.Acked != nil {
		s.cfg.Acked(*cp)
	}
	s.alo.due = cp
}

// tick flushes the buffer when its interval is due, and commits a due transaction.
func (s *Sink) tick(ctx context.Context) error {
	if s.buf != nil && s.buf.due(time.Now()) {
		if err := s.flush(ctx); err != nil {
			return err
		}
	}
	if s.txn != nil {
		return s.maybeCommit(ctx, false)
	}
	s.writeState(ctx, false)
	return nil
}

// stop ends Run after the input closed or ctx was cancelled: flush, wait for the
// acknowledgements (or commit) within StopTimeout, report.
func (s *Sink) stop(ctx context.Context) error {
	sctx, cancel := s.stopContext(ctx)
	defer cancel()
	if s.txn != nil {
		return s.stopTxn(sctx)
	}
	if err := s.flush(sctx); err != nil {
		return s.abort(sctx, err)
	}
	s.track.seal(nil)
	if err := s.cl.Flush(sctx); err != nil {
		s.report()
		return &Error{Op: "flush", Retryable: true, Err: err}
	}
	s.report()
	if err := s.failure(); err != nil {
		return err
	}
	s.writeState(sctx, true)
	if err := s.cl.Flush(sctx); err != nil {
		s.log.Warn("upsert: the last checkpoint was not written to the state topic", "topic", s.cfg.StateTopic, "err", err)
	}
	return nil
}

// abort ends Run after a failure: report what is safely written, abort an open
// transaction, and return err.
func (s *Sink) abort(ctx context.Context, err error) error {
	if s.txn != nil {
		err = s.timedOut(err)
		s.abortTxn(ctx)
		return err
	}
	s.report()
	return err
}

// recordSize is the size the record takes in a record batch of its own, as franz-go
// counts it against ProducerBatchMaxBytes (max.request.size).
func recordSize(r *kgo.Record) int {
	const batchOverhead = 61 + 64 // the batch header, and room for the request's framing
	n := 1 + 10 + 5 + varintLen(len(r.Key)) + len(r.Key) + varintLen(len(r.Value)) + len(r.Value) + varintLen(len(r.Headers))
	for _, h := range r.Headers {
		n += varintLen(len(h.Key)) + len(h.Key) + varintLen(len(h.Value)) + len(h.Value)
	}
	return batchOverhead + varintLen(n) + n
}

func varintLen(n int) int {
	l := 1
	for u := uint64(n) << 1; u >= 0x80; u >>= 7 {
		l++
	}
	return l
}
