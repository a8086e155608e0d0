package binlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/google/uuid"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/history"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
)

// Stream turns binlog events into batches, one source transaction at a time. It is owned
// by the goroutine running Source.Run and survives reconnects: delivered is where a new
// connection resumes, and skip drops the changes of a half-delivered transaction that the
// new connection replays.
type Stream struct {
	cfg   Options
	cache *history.Cache
	out   chan<- change.Batch
	now   func() time.Time

	Delivered binlogpos.Position // after the last transaction whose End batch was sent (or skipped)
	cur       binlogpos.Position // file/offset of the next event; GTIDs as of the last complete transaction
	gtidKnown bool               // cur's GTID form covers every domain, so it can be resumed from

	// The open transaction.
	inTxn      bool
	standalone bool // MariaDB: the transaction ends with its first statement (DDL)
	txnGTID    binlogpos.GTID
	txnMySQL   mysqlGTID
	batch      []change.Change
	emitted    int // changes of this transaction already sent in End=false batches
	batchBytes int // binlog bytes of the rows events whose changes are in batch
	skip       int // changes of this transaction to drop (sent before a reconnect)
	eventTime  uint32
	tables     map[uint64]*mappedTable // binlog table id → captured table; nil value: not captured
	maps       map[uint64]*seenMap     // the table maps of earlier transactions, to reuse
	StartAfter int64                   // StartTimestamp: transactions committed before (unix s) are skipped
	Pending    *schema.PendingRows     // the undecoded rows of the connection's captured tables

	lastBeat time.Time // when the last batch was sent
	sentPos  string    // the position of the last End batch sent
}

// seenMap is a TABLE_MAP event of an earlier transaction and what was made of it: whether
// the table is captured and, once it has been described, its plan. Every transaction maps its
// tables again; matching the route patterns and planning the row decoder each time is most
// of the cost of a one-row transaction.
type seenMap struct {
	schema, table []byte
	types         []byte
	meta          []uint16
	captured      bool
	told          bool         // Config.Uncaptured was told of the table
	mapped        *mappedTable // nil until the table is described
}

// same reports whether tm maps the same table with the same columns as m.
func (m *seenMap) same(tm *replication.TableMapEvent) bool {
	return bytes.Equal(m.schema, tm.Schema) && bytes.Equal(m.table, tm.Table) &&
		bytes.Equal(m.types, tm.ColumnType) && slices.Equal(m.meta, tm.ColumnMeta)
}

// mappedTable is a captured table as a TABLE_MAP event maps it: its description and the plan
// that decodes its row images (nil: go-mysql decodes them).
type mappedTable struct {
	*schema.Table
	plan *schema.RowPlan
}

type mysqlGTID struct {
	sid string
	gno int64
}

// Options is what a stream needs of the source's configuration; each field has the
// meaning of cdc.Config's field of the same name (cdc/config.go).
type Options struct {
	Tables     func(db, table string) bool
	Created    func(id change.TableID, at binlogpos.Position)
	Renamed    func(id change.TableID, at binlogpos.Position)
	Keyless    func(id change.TableID, rows bool) error
	Uncaptured func(id change.TableID)
	MaxBatch   int
	Heartbeat  time.Duration
	StopAt     binlogpos.Position
	Logger     *slog.Logger
}

// NewStream returns a stream that sends its batches to out, from position from of the
// binlog; gtidKnown says the position's GTID form is complete (a new connection may resume
// from it). The tables are described through cache.
func NewStream(cfg Options, cache *history.Cache, out chan<- change.Batch, from binlogpos.Position, gtidKnown bool) *Stream {
	return &Stream{cfg: cfg, cache: cache, out: out, now: time.Now, Delivered: from, cur: from,
		gtidKnown: gtidKnown, tables: map[uint64]*mappedTable{}, maps: map[uint64]*seenMap{}}
}

// Resume prepares for a new connection from s.delivered: the open transaction, if any, is
// replayed from its start and its changes already sent are skipped.
func (s *Stream) Resume() {
	s.skip = s.emitted
	s.emitted = 0
	s.cur = s.Delivered
	s.inTxn = false
	s.batch, s.batchBytes = s.batch[:0], 0
	clear(s.tables)
	clear(s.maps) // table ids are the server's: a restarted server reuses them
}

// Handle processes one event. It blocks while out is full.
func (s *Stream) Handle(ctx context.Context, ev *replication.BinlogEvent) error {
	h := ev.Header
	if h.Timestamp != 0 {
		s.eventTime = h.Timestamp
	}
	switch e := ev.Event.(type) {
	case *replication.RotateEvent:
		s.cur.File, s.cur.Offset = string(e.NextLogName), uint32(e.Position)
		return nil
	case *replication.MariadbGTIDListEvent:
		s.gtidList(e)
	case *replication.PreviousGTIDsEvent:
		s.previousGTIDs(e)
	case *replication.MariadbGTIDEvent:
		s.begin(h)
		g, flags := mariaDBGTID(ev)
		s.standalone = flags&replication.BINLOG_MARIADB_FL_STANDALONE != 0
		s.txnGTID = g
	case *replication.GTIDEvent:
		s.begin(h)
		if sid, err := uuid.FromBytes(e.SID); err == nil {
			s.txnMySQL = mysqlGTID{sid: sid.String(), gno: e.GNO}
		}
	case *replication.TableMapEvent:
		if err := s.tableMap(ctx, e); err != nil {
			return err
		}
	case *replication.RowsEvent:
		if err := s.rows(ctx, h, e); err != nil {
			return err
		}
	case *replication.XIDEvent:
		s.advance(h)
		return s.commit(ctx)
	case *replication.QueryEvent:
		s.advance(h)
		return s.query(ctx, e)
	case *replication.TransactionPayloadEvent:
		return &CompressedTransactionError{Position: s.cur}
	}
	s.advance(h)
	if isHeartbeat(h) && !s.inTxn {
		return s.Heartbeat(ctx, false)
	}
	return nil
}

// mariaDBGTID reads a MariaDB GTID event from its raw bytes. The decoded
// MariadbGTIDEvent.GTID must not be read: go-mysql's syncer keeps a pointer to it in its
// accumulated GTID set and overwrites it with later GTIDs from its own goroutine (a data
// race; with a GTID start it changes under the reader's feet).
func mariaDBGTID(ev *replication.BinlogEvent) (binlogpos.GTID, byte) {
	body := ev.RawData[replication.EventHeaderSize:]
	return binlogpos.GTID{
		Domain: binary.LittleEndian.Uint32(body[8:]),
		Server: ev.Header.ServerID,
		Seq:    binary.LittleEndian.Uint64(body),
	}, body[12]
}

// advance moves the file offset past the event (LogPos is the end of the event; 0 on
// artificial events).
func (s *Stream) advance(h *replication.EventHeader) {
	if h.LogPos != 0 && !isHeartbeat(h) {
		s.cur.Offset = h.LogPos
	}
}

func isHeartbeat(h *replication.EventHeader) bool {
	return h.EventType == replication.HEARTBEAT_EVENT || h.EventType == replication.HEARTBEAT_LOG_EVENT_V2
}

func (s *Stream) begin(h *replication.EventHeader) {
	s.inTxn, s.standalone = true, false
	s.txnGTID, s.txnMySQL = binlogpos.GTID{}, mysqlGTID{}
	s.advance(h)
}

// gtidList takes the GTID state at the start of a binlog file when the stream does not
// know it yet (a start by file and offset): the last GTID of each domain.
func (s *Stream) gtidList(e *replication.MariadbGTIDListEvent) {
	if s.gtidKnown {
		return
	}
	var set []binlogpos.GTID
	for _, g := range e.GTIDs {
		cur := binlogpos.GTID{Domain: g.DomainID, Server: g.ServerID, Seq: g.SequenceNumber}
		if i := gtidIndex(set, g.DomainID); i >= 0 {
			if set[i].Seq < cur.Seq {
				set[i] = cur
			}
			continue
		}
		set = binlogpos.WithGTID(set, cur)
	}
	s.cur.MariaDB, s.gtidKnown = set, true
	if !s.inTxn {
		s.Delivered.MariaDB = set
	}
}

func gtidIndex(set []binlogpos.GTID, domain uint32) int {
	for i, g := range set {
		if g.Domain == domain {
			return i
		}
	}
	return -1
}

func (s *Stream) previousGTIDs(e *replication.PreviousGTIDsEvent) {
	if s.gtidKnown {
		return
	}
	if set, err := binlogpos.NormalizeMySQLGTIDSet(e.GTIDSets); err == nil {
		s.cur.MySQL, s.gtidKnown = set, true
	}
}

// tableMap maps a table id of the transaction to its captured table (or to nil). A table
// mapped alike by an earlier transaction keeps its plan, as long as the schema cache still
// describes it with the same Table (a DDL replaces it).
func (s *Stream) tableMap(ctx context.Context, tm *replication.TableMapEvent) error {
	seen := s.maps[tm.TableID]
	if seen == nil || !seen.same(tm) {
		seen = &seenMap{schema: bytes.Clone(tm.Schema), table: bytes.Clone(tm.Table),
			types: bytes.Clone(tm.ColumnType), meta: slices.Clone(tm.ColumnMeta),
			captured: s.cfg.Tables(string(tm.Schema), string(tm.Table))}
		s.maps[tm.TableID] = seen
	}
	if !seen.captured {
		s.tables[tm.TableID] = nil
		if s.cfg.Uncaptured != nil && !seen.told {
			seen.told = true
			s.cfg.Uncaptured(change.TableID{DB: string(tm.Schema), Table: string(tm.Table)})
		}
		return nil
	}
	t, err := s.cache.FromTableMap(ctx, tm, s.Delivered)
	if id := (change.TableID{DB: string(tm.Schema), Table: string(tm.Table)}); err != nil {
		if !errors.As(err, new(*schema.NoPrimaryKeyError)) || s.cfg.Keyless == nil {
			return s.schemaError(id, err)
		}
		// Rows of a table without a key: the caller stops (the error) or stops capturing it.
		if err := s.cfg.Keyless(id, true); err != nil {
			return err
		}
		delete(s.cache.Keyless, id)
		seen.captured = false
		s.tables[tm.TableID] = nil
		return nil
	}
	if seen.mapped == nil || seen.mapped.Table != t {
		seen.mapped = &mappedTable{Table: t, plan: schema.NewRowPlan(tm, t)}
	}
	s.tables[tm.TableID] = seen.mapped
	return nil
}

func (s *Stream) schemaError(id change.TableID, err error) error {
	if errors.As(err, new(*schema.NoPrimaryKeyError)) {
		return err
	}
	return &SchemaError{Table: id, Position: s.cur, Err: err}
}

// rows converts a rows event of a captured table into changes. The rows are in s.pending
// (undecoded), or in e.Rows when go-mysql decoded them.
func (s *Stream) rows(ctx context.Context, h *replication.EventHeader, e *replication.RowsEvent) error {
	s.advance(h)
	data, pending := s.Pending.Take(e)
	t := s.tables[e.TableID]
	if t == nil || !pending && e.Rows == nil {
		return nil
	}
	op, step := change.Insert, 1
	switch e.Type() {
	case replication.EnumRowsEventTypeUpdate:
		op, step = change.Update, 2
	case replication.EnumRowsEventTypeDelete:
		op = change.Delete
	}
	vals, err := schema.DecodeImages(h, e, t.Table, t.plan, data, pending, step)
	if err != nil {
		return s.schemaError(t.Schema.Table, err)
	}
	s.batchBytes += int(h.EventSize)
	n := len(t.Columns)
	image := func(i int) change.Row { return vals[i*n : (i+1)*n : (i+1)*n] }
	for i := 0; n > 0 && (i+step)*n <= len(vals); i += step {
		c := change.Change{Schema: t.Schema, Op: op}
		switch op {
		case change.Insert:
			c.After = image(i)
		case change.Delete:
			c.Before = image(i)
		default:
			c.Before, c.After = image(i), image(i+1)
		}
		if err := s.add(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// add appends a change to the open transaction, sending a partial batch when full.
func (s *Stream) add(ctx context.Context, c change.Change) error {
	if s.skip > 0 {
		s.skip--
		s.emitted++
		return nil
	}
	if s.skipping() {
		return nil
	}
	s.batch = append(s.batch, c)
	if len(s.batch) < s.cfg.MaxBatch && s.batchBytes < MaxBatchBytes {
		return nil
	}
	n := len(s.batch)
	if err := s.send(ctx, change.Batch{Changes: s.batch, CommitTime: s.commitTime()}); err != nil {
		return err
	}
	s.emitted += n
	s.batch, s.batchBytes = make([]change.Change, 0, s.cfg.MaxBatch), 0
	return nil
}

// MaxBatchBytes bounds the rows a batch holds, by the binlog bytes of their rows events
// (the rows of the event being added still join it): a transaction of wide rows is sent in
// batches of about this size rather than of MaxBatch changes, so that the batches in flight
// between the stream and the sink stay a few tens of MB whatever the row size.
const MaxBatchBytes = 4 << 20

// skipping reports whether the open transaction is before the StartTimestamp instant.
func (s *Stream) skipping() bool {
	return s.StartAfter != 0 && int64(s.eventTime) < s.StartAfter
}

func (s *Stream) commitTime() time.Time {
	if s.eventTime == 0 {
		return time.Time{} // no event read yet (a heartbeat at the start position)
	}
	return time.Unix(int64(s.eventTime), 0).UTC()
}

// query handles a QueryEvent: the BEGIN and COMMIT of non-transactional tables, and DDL.
func (s *Stream) query(ctx context.Context, e *replication.QueryEvent) error {
	switch history.ClassifyQuery(string(e.Query)) {
	case history.QueryBegin:
		s.inTxn = true
		return nil
	case history.QueryCommit:
		return s.commit(ctx)
	case history.QueryDDL:
		if err := s.ddl(ctx, string(e.Schema), string(e.Query)); err != nil {
			return err
		}
		return s.commit(ctx)
	case history.QueryDML:
		// Rows written as a statement cannot be read; skipping them would lose them.
		id, known := history.DMLTable(string(e.Schema), string(e.Query))
		if !known || s.cfg.Tables(id.DB, id.Table) {
			return &StatementFormatError{Table: id, Position: s.Delivered, Statement: string(e.Query)}
		}
	}
	if !s.inTxn || s.standalone {
		return s.commit(ctx)
	}
	return nil
}

// ddl applies a DDL statement to the schema history and adds a SchemaChange for each
// captured table it changed (schemachanges.go).
func (s *Stream) ddl(ctx context.Context, db, query string) error {
	at := s.endPosition()
	created := history.CreatedTables(db, query, s.cache.Hist)
	if s.cfg.Created != nil {
		for _, id := range created {
			s.cfg.Created(id, at)
		}
	}
	if s.cfg.Renamed != nil {
		for _, id := range history.RenamedTables(db, query, s.cache.Hist) {
			s.cfg.Renamed(id, at)
		}
	}
	ids, err := s.cache.Hist.Apply(ctx, s.cache.Loader, s.cfg.Logger, db, query, at)
	if err != nil {
		return s.schemaError(change.TableID{DB: db}, fmt.Errorf("after %q: %w", query, err))
	}
	changes, err := s.schemaChanges(db, query, at, ids, created)
	if err != nil {
		return err
	}
	for _, c := range changes {
		if err := s.add(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// endPosition is the position after the open transaction once its last event has been
// handled: what commit stores.
func (s *Stream) endPosition() binlogpos.Position {
	pos := s.cur
	if !s.gtidKnown {
		pos.MariaDB, pos.MySQL = nil, ""
		return pos
	}
	if s.txnGTID != (binlogpos.GTID{}) {
		pos.MariaDB = binlogpos.WithGTID(pos.MariaDB, s.txnGTID)
	}
	if s.txnMySQL.sid != "" {
		pos.MySQL = binlogpos.AddMySQLGTID(pos.MySQL, s.txnMySQL.sid, uint64(s.txnMySQL.gno))
	}
	return pos
}

// commit ends the open transaction: the position moves past it and, when it changed
// captured tables, the End batch is sent.
func (s *Stream) commit(ctx context.Context) error {
	pos := s.endPosition()
	if s.gtidKnown {
		s.cur.MariaDB, s.cur.MySQL = pos.MariaDB, pos.MySQL
	}
	hadChanges := len(s.batch) > 0 || s.emitted > 0
	s.inTxn, s.standalone, s.skip = false, false, 0
	s.Delivered = pos
	clear(s.tables)
	done := s.Reached(pos)
	if !hadChanges {
		if err := s.Heartbeat(ctx, done); err != nil {
			return err
		}
	} else {
		b := change.Batch{Changes: s.batch, CommitTime: s.commitTime(), End: true, Position: []byte(pos.String()), Mark: pos}
		s.batch, s.emitted, s.batchBytes = nil, 0, 0
		if err := s.send(ctx, b); err != nil {
			return err
		}
	}
	if done {
		return ErrCaughtUp
	}
	return nil
}

// ErrCaughtUp ends a stream that has reached Config.StopAt.
var ErrCaughtUp = errors.New("cdc: caught up")

// Reached reports whether pos is at or past Config.StopAt.
func (s *Stream) Reached(pos binlogpos.Position) bool {
	if s.cfg.StopAt.IsZero() {
		return false
	}
	c, ok := pos.Compare(s.cfg.StopAt)
	return ok && c >= 0
}

// Heartbeat sends an empty End batch with the delivered position when it is due: the
// position moved and nothing was sent for a heartbeat interval.
func (s *Stream) Heartbeat(ctx context.Context, force bool) error {
	pos := s.Delivered.String()
	if pos == s.sentPos || (!force && s.now().Sub(s.lastBeat) < s.cfg.Heartbeat) {
		return nil
	}
	return s.send(ctx, change.Batch{CommitTime: s.commitTime(), End: true, Position: []byte(pos), Mark: s.Delivered})
}

func (s *Stream) send(ctx context.Context, b change.Batch) error {
	select {
	case s.out <- b: // room at once: no select over the context (one-row transactions)
	default:
		select {
		case s.out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.lastBeat = s.now()
	if b.End {
		s.sentPos = string(b.Position)
	}
	return nil
}
