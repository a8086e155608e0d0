package cdc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/go-sql-driver/mysql"

	"github.com/ingestkit/ingest/cdc/binlog"
	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/history"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/fault"
)

// Source streams the row binlog of a MySQL or MariaDB server as change batches.
type Source struct {
	cfg     Config
	history *history.File // Config.SchemaHistory, parsed

	hist atomic.Pointer[history.History] // the running stream's, from Run's start on

	onConnect func(connectionID uint32)         // test hook: a replication connection got its first event
	onEvent   func(ev *replication.BinlogEvent) // test hook: an event is about to be handled
}

// New validates cfg and returns a Source. It does no I/O.
func New(cfg Config) (*Source, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	src := &Source{cfg: c}
	if len(c.SchemaHistory) > 0 {
		if src.history, err = history.Parse(c.SchemaHistory); err != nil {
			return nil, err
		}
	}
	return src, nil
}

// Run streams changes into out until ctx is cancelled (then it returns nil) or a fatal
// error occurs. Each source transaction touching captured tables becomes one or more
// batches, the last with End set and the position after the transaction; a full out
// blocks the stream (back-pressure). Lost connections are re-established from the last
// End position with backoff, without gaps or duplicates, each after the [Preflight] checks
// pass again (a reconfigured, rebuilt or replaced server ends Run with a [PreflightError]);
// the checks before the first read are the caller's. Run starts no goroutine that
// outlives it and must not be called concurrently on one Source.
func (s *Source) Run(ctx context.Context, out chan<- change.Batch) error {
	db, err := s.openDB()
	if err != nil {
		return err
	}
	defer db.Close()
	srv, err := inspectServer(ctx, db)
	if err != nil {
		return err
	}
	// What fails before the stream's loop, which classifies its own errors: a lost
	// connection is retryable, what the server refuses terminal (internal/fault).
	if err := checkKeys(ctx, db, &s.cfg); err != nil {
		return fault.MySQL(err)
	}
	if err := CheckKeysNotNull(ctx, db, s.cfg.Tables, s.cfg.Keys); err != nil {
		return fault.MySQL(err)
	}
	from, gtidKnown, err := s.startPosition(ctx, db, srv)
	if err != nil {
		return fault.MySQL(err)
	}
	loader := history.SQLInfo{DB: db, MariaDB: srv.mariaDB}
	hist, err := s.startHistory(ctx, loader, srv, from)
	if err != nil {
		return fault.MySQL(err)
	}
	cache := history.NewCache(hist, loader, schema.Options{
		TinyInt1AsBool: !s.cfg.TinyInt1AsNumber, Keys: s.cfg.Keys, Collations: srv.collations,
	}, s.cfg.Logger)
	st := binlog.NewStream(s.cfg.streamOptions(), cache, out, from, gtidKnown)
	if s.cfg.Startup == StartTimestamp && s.cfg.Position.IsZero() {
		st.StartAfter = s.cfg.StartTime.Unix()
	}
	if st.Reached(from) {
		// Already caught up. Without a stored history, hand the caller the start position
		// once, so that it can store it with the history just read (a later run from there
		// then decodes with the shapes of this point, not of its own start).
		if len(s.cfg.SchemaHistory) == 0 {
			_ = st.Heartbeat(ctx, true)
		}
		return nil
	}
	err = s.loop(ctx, srv, st)
	if ctx.Err() != nil || errors.Is(err, binlog.ErrCaughtUp) {
		return nil
	}
	return err
}

// SchemaHistory returns the schema history of the stream as opaque JSON, to be stored next
// to the positions of the End batches and given back in [Config.SchemaHistory] with the
// position on restart. It holds the shape of each captured table at every point since the
// stream's start, so a restart from a stored position decodes the events between that
// position and later DDL with the columns and facts of their time.
//
// A history taken at any time after an End batch was received is valid for that batch's
// position (and for every later one up to the time it was taken), so the caller may store
// it only when it changes, before or with the next position it stores. The returned slice is
// never modified and stays the same slice until the next DDL changes the history: compare by
// identity or bytes.Equal to notice a change. Before Run has read the initial schemas it
// returns Config.SchemaHistory. It is safe to call from any goroutine, also after Run
// returned.
func (s *Source) SchemaHistory() []byte {
	if h := s.hist.Load(); h != nil {
		return h.Encode()
	}
	return s.cfg.SchemaHistory
}

// startHistory builds the schema history the stream starts with: the stored one at the
// stored position when there is one, completed with the captured tables it does not have as
// information_schema shows them now.
func (s *Source) startHistory(ctx context.Context, loader history.SQLInfo, srv *server, from binlogpos.Position) (*history.History, error) {
	initial, err := loader.LoadAll(ctx, s.cfg.Tables)
	if err != nil {
		return nil, retryableOp("read information_schema", err)
	}
	hist := history.New(from, s.cfg.Tables, history.Env{MariaDB: srv.mariaDB, IntWidths: showsIntWidths(srv)})
	switch {
	case s.history != nil && !s.cfg.Position.IsZero():
		hist.Restore(s.history, s.cfg.Position, s.cfg.Logger)
	case s.history != nil:
		s.cfg.Logger.Warn("cdc: a schema history without a stored position is ignored")
	case !s.cfg.Position.IsZero() || s.cfg.Startup != StartLatest:
		s.cfg.Logger.Info("cdc: no stored schema history: the tables' shapes at the start position are taken from information_schema as it is now; "+
			"if DDL ran since, events before it may decode with the later columns", "position", from.String())
	}
	for id, info := range initial {
		if _, known := hist.Shape(id); !known {
			hist.Record(id, from, info)
		}
	}
	s.hist.Store(hist)
	return hist, nil
}

// showsIntWidths reports whether information_schema writes integer display widths: MariaDB
// and MySQL before 8.0.19.
func showsIntWidths(srv *server) bool {
	if srv.mariaDB {
		return true
	}
	var major, minor, patch int
	if _, err := fmt.Sscanf(srv.version, "%d.%d.%d", &major, &minor, &patch); err != nil {
		return false
	}
	return major < 8 || major == 8 && minor == 0 && patch < 19
}

// CurrentPosition reads the server's current binlog position (its GTID position on MariaDB,
// SHOW MASTER STATUS otherwise) with cfg's connection settings.
func CurrentPosition(ctx context.Context, cfg Config) (binlogpos.Position, error) {
	s, err := New(cfg)
	if err != nil {
		return binlogpos.Position{}, err
	}
	db, err := s.openDB()
	if err != nil {
		return binlogpos.Position{}, err
	}
	defer db.Close()
	srv, err := inspectServer(ctx, db)
	if err != nil {
		return binlogpos.Position{}, err
	}
	// The file form as well, so that a stream positioned by file alone can compare with it.
	st, err := masterStatus(ctx, db)
	if err != nil {
		return binlogpos.Position{}, err
	}
	pos, _, err := latestPosition(ctx, db, srv)
	if err != nil {
		return binlogpos.Position{}, err
	}
	pos.File, pos.Offset = st.File, st.Offset
	return pos, nil
}

// server is what Run learns of the server on connect.
type server struct {
	mariaDB    bool
	version    string
	collations map[uint64]string
}

func (s *Source) openDB() (*sql.DB, error) {
	mc := mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr = s.cfg.User, s.cfg.Password, "tcp", s.cfg.Addr
	mc.TLS = s.cfg.TLS
	mc.Timeout = s.cfg.ConnectTimeout
	mc.Params = map[string]string{"time_zone": "'+00:00'"}
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, fmt.Errorf("cdc: %s: %w", s.cfg.Addr, err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(2)
	return db, nil
}

// inspectServer detects the flavor and reads the collation table.
func inspectServer(ctx context.Context, db *sql.DB) (*server, error) {
	srv := &server{collations: map[uint64]string{}}
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&srv.version); err != nil {
		return nil, retryableOp("connect", err)
	}
	srv.mariaDB = strings.Contains(strings.ToLower(srv.version), "mariadb")
	rows, err := db.QueryContext(ctx, "SELECT ID, CHARACTER_SET_NAME FROM information_schema.COLLATIONS WHERE ID IS NOT NULL")
	if err != nil {
		return nil, fmt.Errorf("cdc: read collations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id uint64
		var cs string
		if err := rows.Scan(&id, &cs); err != nil {
			return nil, fmt.Errorf("cdc: read collations: %w", err)
		}
		srv.collations[id] = cs
	}
	return srv, rows.Err()
}

func (srv *server) flavor() string {
	if srv.mariaDB {
		return gomysql.MariaDBFlavor
	}
	return gomysql.MySQLFlavor
}

// checkKeys fails with a NoPrimaryKeyError naming every captured table without a key, or,
// with Config.Keyless, asks it about each.
//
// It lists the base tables, keeps the captured ones, then asks information_schema.STATISTICS
// for the primary keys of their databases only. Two flat queries, not one correlated
// NOT EXISTS over every table of the server: that form makes the server materialise
// STATISTICS for each database into internal temporary tables, costs a scan of every
// table on a server with many, and crashed MariaDB 10.11.19 (signal 11 in
// Create_tmp_table::cleanup_on_failure) here while other sessions ran DDL.
func checkKeys(ctx context.Context, db *sql.DB, cfg *Config) error {
	captured, err := capturedBaseTables(ctx, db, cfg)
	if err != nil || len(captured) == 0 {
		return err
	}
	keyed, err := tablesWithPrimaryKey(ctx, db, captured)
	if err != nil {
		return err
	}
	var missing []change.TableID
	for _, id := range captured {
		if keyed[id] {
			continue
		}
		if cfg.Keys != nil {
			if k, ok := cfg.Keys(id.DB, id.Table); ok && len(k) > 0 {
				continue
			}
		}
		missing = append(missing, id)
	}
	if len(missing) == 0 {
		return nil
	}
	if cfg.Keyless == nil {
		return &schema.NoPrimaryKeyError{Tables: missing}
	}
	for _, id := range missing {
		if err := cfg.Keyless(id, false); err != nil {
			return err
		}
	}
	return nil
}

// capturedBaseTables lists the base tables that cfg captures, sorted.
func capturedBaseTables(ctx context.Context, db *sql.DB, cfg *Config) ([]change.TableID, error) {
	const q = `SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES
WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')
ORDER BY 1, 2`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("cdc: list tables: %w", err)
	}
	defer rows.Close()
	var ids []change.TableID
	for rows.Next() {
		var id change.TableID
		if err := rows.Scan(&id.DB, &id.Table); err != nil {
			return nil, fmt.Errorf("cdc: list tables: %w", err)
		}
		if cfg.Tables(id.DB, id.Table) {
			ids = append(ids, id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cdc: list tables: %w", err)
	}
	return ids, nil
}

// tablesWithPrimaryKey returns which of the databases of ids' tables have a PRIMARY index.
func tablesWithPrimaryKey(ctx context.Context, db *sql.DB, ids []change.TableID) (map[change.TableID]bool, error) {
	var dbs []any
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id.DB] {
			seen[id.DB] = true
			dbs = append(dbs, id.DB)
		}
	}
	q := `SELECT DISTINCT TABLE_SCHEMA, TABLE_NAME FROM information_schema.STATISTICS
WHERE INDEX_NAME = 'PRIMARY' AND TABLE_SCHEMA IN (?` + strings.Repeat(", ?", len(dbs)-1) + `)`
	rows, err := db.QueryContext(ctx, q, dbs...)
	if err != nil {
		return nil, fmt.Errorf("cdc: list primary keys: %w", err)
	}
	defer rows.Close()
	keyed := map[change.TableID]bool{}
	for rows.Next() {
		var id change.TableID
		if err := rows.Scan(&id.DB, &id.Table); err != nil {
			return nil, fmt.Errorf("cdc: list primary keys: %w", err)
		}
		keyed[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cdc: list primary keys: %w", err)
	}
	return keyed, nil
}

// CheckKeysNotNull fails with a [*NullableKeyError] for the first captured table (tables
// says which are) whose record key, given by keys (transform primary-keys), names a column
// that may hold NULL. A table's own primary key is NOT NULL by definition.
func CheckKeysNotNull(ctx context.Context, db *sql.DB, tables func(db, table string) bool, keys func(db, table string) ([]string, bool)) error {
	if keys == nil {
		return nil
	}
	const q = `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS
WHERE IS_NULLABLE = 'YES' AND TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')
ORDER BY 1, 2, ORDINAL_POSITION`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("cdc: list nullable columns: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id change.TableID
		var col string
		if err := rows.Scan(&id.DB, &id.Table, &col); err != nil {
			return fmt.Errorf("cdc: list nullable columns: %w", err)
		}
		if tables != nil && !tables(id.DB, id.Table) {
			continue
		}
		names, ok := keys(id.DB, id.Table)
		if ok && slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, col) }) {
			return &schema.NullableKeyError{Table: id, Column: col}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("cdc: list nullable columns: %w", err)
	}
	return nil
}

// loop connects, streams and reconnects with backoff until ctx ends or a fatal error.
func (s *Source) loop(ctx context.Context, srv *server, st *binlog.Stream) error {
	failures := 0
	var streamed bool    // a session has delivered events: the server was there
	var lostAt time.Time // when the current run of failures began
	for reconnect := false; ; reconnect = true {
		var progressed bool
		err := s.recheck(ctx, reconnect, st.Delivered)
		if err == nil {
			progressed, err = s.session(ctx, srv, st)
		}
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, binlog.ErrCaughtUp) {
			return err
		}
		err = classify(err, st.Delivered, s.cfg.ServerID.First)
		if !IsRetryable(err) {
			return err
		}
		if progressed {
			failures, streamed, lostAt = 0, true, time.Time{}
		}
		failures++
		if lostAt.IsZero() {
			lostAt = time.Now()
		}
		// connect.max-retries bounds the attempts, but once the stream has run, a server that
		// restarts (which takes seconds) is waited for during reconnectWindow as well.
		if failures > s.cfg.ConnectRetries && (!streamed || time.Since(lostAt) > reconnectWindow) {
			// Retried here already: the runner is not to restart the stream over again.
			return fault.Terminal(err)
		}
		s.cfg.Logger.Warn("cdc: binlog connection lost, reconnecting", "error", err, "position", st.Delivered.String(),
			"attempt", failures)
		if err := sleep(ctx, backoff(failures)); err != nil {
			return nil
		}
		st.Resume()
	}
}

// recheck runs the [Preflight] checks again before a reconnect, against the position the
// stream resumes from: the server may have been reconfigured (binlog_format), rebuilt or
// replaced while the connection was down. A server that cannot be reached yet is retried.
func (s *Source) recheck(ctx context.Context, reconnect bool, from binlogpos.Position) error {
	if !reconnect {
		return nil // the caller checked before the first read
	}
	cfg := s.cfg
	cfg.Position = from
	problems := Preflight(ctx, cfg)
	if err := ctx.Err(); err != nil {
		return err // stopped: the problems are the cancellation's (loop returns nil)
	}
	return Refuse(s.cfg.Addr, problems) // a server still away is retried
}

// reconnectWindow is how long a stream that has run keeps reconnecting to a server that went
// away, whatever connect.max-retries says.
const reconnectWindow = 2 * time.Minute

func backoff(attempt int) time.Duration {
	d := 250 * time.Millisecond << min(attempt-1, 6)
	return min(d, 10*time.Second)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// session runs one replication connection from st.delivered. progressed reports whether
// any event arrived (a reconnect that gets events resets the failure count).
//
// The events are handled on go-mysql's reading goroutine (SynchronousEventHandler), not
// passed to this one through a channel: a channel hop per event cost about 15% of the CPU
// of small transactions (four or five events each). This goroutine only waits for the
// connection to end.
func (s *Source) session(ctx context.Context, srv *server, st *binlog.Stream) (progressed bool, err error) {
	st.Pending = schema.NewPendingRows()
	h := &eventHandler{ctx: ctx, src: s, st: st}
	cfg := s.syncerConfig(srv)
	cfg.RowsEventDecodeFunc = schema.SkipUncaptured(s.cfg.Tables, st.Pending)
	cfg.SynchronousEventHandler = h
	syncer := replication.NewBinlogSyncer(cfg)
	defer syncer.Close()
	dog := binlog.NewWatchdog(s.readTimeout(), syncer.Close)
	defer dog.Stop()
	h.dog, h.syncer = dog, syncer
	dog.Waiting() // for the connection to start; the handler marks the ends of the waits
	streamer, err := startSync(syncer, st.Delivered)
	if err != nil {
		dog.Got()
		return false, dog.Explain(err)
	}
	_, err = streamer.GetEvent(ctx) // returns only once the connection ends
	syncer.Close()                  // waits for the handler to return
	if h.err != nil {
		return h.progressed, h.err
	}
	return h.progressed, dog.Explain(err)
}

// eventHandler handles the events of one session on go-mysql's reading goroutine. Its
// fields are read by the session once the syncer is closed.
type eventHandler struct {
	ctx        context.Context
	src        *Source
	st         *binlog.Stream
	dog        *binlog.Watchdog
	syncer     *replication.BinlogSyncer
	progressed bool
	err        error // the handler's own error, which ended the session
}

// HandleEvent implements replication.EventHandler.
func (h *eventHandler) HandleEvent(ev *replication.BinlogEvent) error {
	h.dog.Got()
	if !h.progressed && h.src.onConnect != nil {
		h.src.onConnect(h.syncer.LastConnectionID()) // before the connection's first change
	}
	h.progressed = true
	if h.src.onEvent != nil {
		h.src.onEvent(ev)
	}
	if err := h.st.Handle(h.ctx, ev); err != nil {
		h.err = err
		return err
	}
	h.dog.Waiting()
	return nil
}

// readTimeout is how long the connection may stay silent: the server sends a heartbeat
// every Heartbeat when it has nothing else to send.
func (s *Source) readTimeout() time.Duration { return 2*s.cfg.Heartbeat + 10*time.Second }

func startSync(syncer *replication.BinlogSyncer, from binlogpos.Position) (*replication.BinlogStreamer, error) {
	switch {
	case len(from.MariaDB) > 0:
		set, err := gomysql.ParseMariadbGTIDSet(from.MariaDBString())
		if err != nil {
			return nil, err
		}
		return syncer.StartSyncGTID(set)
	case from.MySQL != "":
		set, err := gomysql.ParseMysqlGTIDSet(from.MySQL)
		if err != nil {
			return nil, err
		}
		return syncer.StartSyncGTID(set)
	}
	return syncer.StartSync(gomysql.Position{Name: from.File, Pos: from.Offset})
}

func (s *Source) syncerConfig(srv *server) replication.BinlogSyncerConfig {
	host, port, _ := net.SplitHostPort(s.cfg.Addr)
	p, _ := strconv.ParseUint(port, 10, 16)
	return replication.BinlogSyncerConfig{
		ServerID:                s.cfg.ServerID.First,
		Flavor:                  srv.flavor(),
		Host:                    host,
		Port:                    uint16(p),
		User:                    s.cfg.User,
		Password:                s.cfg.Password,
		TLSConfig:               s.cfg.TLS,
		ParseTime:               true,
		TimestampStringLocation: time.UTC,
		HeartbeatPeriod:         s.cfg.Heartbeat,
		// No ReadTimeout: go-mysql would set a socket deadline for every packet (11% of
		// the CPU of one-row transactions); session's watchdog closes a silent connection.
		DisableRetrySync: true, // go-mysql would resume mid-transaction or from its own GTID set
		DiscardGTIDSet:   true, // positions are tracked by the stream
		EventCacheCount:  256,
		Logger:           libraryLogger(s.cfg.Logger),
		Dialer:           (&net.Dialer{Timeout: s.cfg.ConnectTimeout}).DialContext,
	}
}

// MySQL and MariaDB error codes the stream tells apart.
const (
	errMasterFatalReadingBinlog = 1236 // the binlog (file or GTID) asked for is not there
	errSlaveSameID              = 4052 // MariaDB: another replica with this server id
	errConnectionKilled         = 1927 // MariaDB: KILL
	errServerShutdown           = 1053
	errQueryInterrupted         = 1317
	errAccessDenied             = 1045
	errSpecificAccessDenied     = 1227
	errTooManyConnections       = 1040
)

// classify types a session error: fatal position, server-id and access problems, and
// retryable connection problems.
func classify(err error, at binlogpos.Position, serverID uint32) error {
	if err == nil {
		return &binlog.RetryableError{Op: "read binlog", Err: io.ErrUnexpectedEOF}
	}
	if errors.As(err, new(*PositionLostError)) || errors.As(err, new(*ServerIDConflictError)) ||
		errors.As(err, new(*schema.NoPrimaryKeyError)) || errors.As(err, new(*binlog.SchemaError)) ||
		errors.As(err, new(*PreflightError)) || errors.As(err, new(*binlog.StatementFormatError)) ||
		errors.As(err, new(*binlog.RetryableError)) {
		return err
	}
	var me *gomysql.MyError
	if errors.As(err, &me) {
		switch me.Code {
		case errSlaveSameID:
			return &ServerIDConflictError{ServerID: serverID, Err: err}
		case errMasterFatalReadingBinlog:
			if strings.Contains(me.Message, "server_id") || strings.Contains(me.Message, "server-id") ||
				strings.Contains(me.Message, "server_uuid") {
				return &ServerIDConflictError{ServerID: serverID, Err: err}
			}
			return &PositionLostError{Position: at, Err: err}
		case errConnectionKilled, errServerShutdown, errQueryInterrupted, errTooManyConnections:
			return &binlog.RetryableError{Op: "read binlog", Err: err}
		}
		return fmt.Errorf("cdc: binlog at %s: %w", at, err)
	}
	return &binlog.RetryableError{Op: "read binlog at " + at.String(), Err: err}
}
