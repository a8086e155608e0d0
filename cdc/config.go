package cdc

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/ingestkit/ingest/cdc/binlog"
	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/change"
)

// StartupMode says where a stream without a stored position starts (scan.startup.mode).
type StartupMode uint8

// The startup modes. The zero value is [StartLatest].
const (
	StartLatest    StartupMode = iota // latest-offset: the server's current position
	StartEarliest                     // earliest-offset: the first binlog file still on the server
	StartSpecific                     // specific-offset: Config.StartPosition (file+offset or GTID set)
	StartTimestamp                    // timestamp: the first transaction committed at or after Config.StartTime
)

var startupNames = [...]string{"latest-offset", "earliest-offset", "specific-offset", "timestamp"}

// String returns the mode's name as scan.startup.mode spells it.
func (m StartupMode) String() string {
	if int(m) < len(startupNames) {
		return startupNames[m]
	}
	return "startup-mode(" + strconv.Itoa(int(m)) + ")"
}

// ParseStartupMode parses a scan.startup.mode value other than "initial" and "snapshot",
// which belong to the snapshot.
func ParseStartupMode(s string) (StartupMode, error) {
	for i, name := range startupNames {
		if s == name {
			return StartupMode(i), nil
		}
	}
	return 0, fmt.Errorf("unknown startup mode %q; valid modes are latest-offset, earliest-offset, specific-offset and timestamp", s)
}

// ServerIDRange is the replica server ids a source may use (source option server-id,
// "5400" or "5400-5408"). The binlog stream uses First; snapshot readers take the others.
// Every id must be unique among the replicas of the server, the server's own id included.
type ServerIDRange struct {
	First, Last uint32
}

// Config configures a [Source]. The zero value of every optional field is the documented
// default; Addr, User, ServerID and Tables are required.
type Config struct {
	// Addr is the server's host:port.
	Addr string
	// User and Password authenticate. Password is the revealed secret.
	User, Password string
	// TLS, when set, makes every connection use TLS with this configuration.
	TLS *tls.Config

	// ServerID is the replica id range of the source (required, non-zero).
	ServerID ServerIDRange

	// Position, when non-zero, is the stored position to resume from; the startup mode
	// is then ignored.
	Position binlogpos.Position
	// Server is the identity ([ServerIdentity.String]) of the server Position belongs to,
	// recorded with the stored state. When set, [Preflight] (and so Run, on every reconnect)
	// refuses a server with another identity. Empty: not checked.
	Server string
	// SchemaHistory is the schema history stored with Position ([Source.SchemaHistory]),
	// so that the events after Position decode with the columns of their time even when DDL
	// ran since. Without it (or without Position) the tables' shapes at the start position
	// are read from information_schema as it is now. New fails on a history it cannot read.
	SchemaHistory []byte
	// Startup is the startup mode used when Position is zero.
	Startup StartupMode
	// StartPosition is the position of StartSpecific: file and offset, or a GTID set.
	StartPosition binlogpos.Position
	// StartTime is the instant of StartTimestamp (second precision, as in the binlog).
	StartTime time.Time

	// Heartbeat is heartbeat.interval: the server's heartbeat period on the replication
	// connection, and the most often an empty batch moves the position on while only
	// tables that are not captured change. Default 30s.
	Heartbeat time.Duration
	// ConnectTimeout bounds one connection attempt. Default 30s.
	ConnectTimeout time.Duration
	// ConnectRetries is how many consecutive failed attempts to (re)connect are made before
	// Run gives up with the last [RetryableError], marked terminal (connect.max-retries).
	// Default 3.
	ConnectRetries int
	// MaxBatch is the most changes in one batch; a bigger transaction is delivered in
	// several batches, only the last with End set. Default 1024.
	MaxBatch int

	// TinyInt1AsNumber keeps TINYINT(1) as a number: the inverse of
	// treat-tinyint1-as-boolean.enabled, whose default (true: TINYINT(1) is a Bool) is
	// the zero value here.
	TinyInt1AsNumber bool

	// Tables reports whether a table is captured (route.Filter.Match). Required. It is
	// called from go-mysql's reader goroutine as well, so it must be safe for concurrent use.
	Tables func(db, table string) bool
	// Created, when set, is told of each table that a CREATE TABLE statement of the binlog
	// creates (see createdTables in created.go), with the position after the statement,
	// before the stream asks Tables whether the table is captured: a caller that captures
	// the tables created after the start (scan.binlog.newly-added-table.enabled) makes
	// Tables accept it from then on. It is called on go-mysql's reader goroutine, and again
	// for the same statement when a reconnect replays it.
	Created func(id change.TableID, at binlogpos.Position)
	// Renamed, when set, is told of each name that a RENAME TABLE or ALTER TABLE … RENAME
	// statement of the binlog gives a table and that held no table before it (a swap onto
	// a live name is not told), with the position after the statement: the table has rows
	// the binlog read does not hold. Called as Created is.
	Renamed func(id change.TableID, at binlogpos.Position)
	// Keyless, when set, decides what becomes of a captured table without a key (no primary
	// key, none from Keys) where Run would otherwise stop with a [*NoPrimaryKeyError]: at the
	// start, for each such table (rows false), and when the stream meets the first rows of
	// one (rows true). A table created in the stream without a key is not decided at its
	// CREATE TABLE: a later DDL (ALTER TABLE … ADD PRIMARY KEY) may still give it one, and it
	// is then told as created with that key; it is decided at its first rows. Keyless
	// returns an error to stop Run with it, or nil to go on: at the start nothing changes
	// (the table is asked about again at its rows); at its rows the stream skips them and
	// the caller must make Tables report false for the table from then on. Nil Keyless: a
	// NoPrimaryKeyError. It is called on go-mysql's reader goroutine too.
	Keyless func(id change.TableID, rows bool) error
	// Uncaptured, when set, is told of each table whose rows the stream meets and that
	// Tables does not capture, once per table and connection (for the caller's warnings).
	Uncaptured func(id change.TableID)
	// Keys returns the key columns the pipeline gives a table (transform primary-keys), in
	// key order, and whether it gives one. Nil: primary keys only.
	Keys func(db, table string) ([]string, bool)

	// StopAt, when non-zero, makes Run return nil once the stream has passed it: the End
	// batch (a heartbeat when nothing captured changed) of the first transaction at or after
	// StopAt is sent, then Run returns. A start already at or past StopAt returns at once.
	// This serves --until-caught-up, with StopAt = [CurrentPosition] read at start.
	StopAt binlogpos.Position

	// Logger receives go-mysql's and the source's logs. Nil discards them.
	Logger *slog.Logger
}

// withDefaults returns a copy of c with defaults applied, or the first invalid field.
func (c Config) withDefaults() (Config, error) {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("addr %q: want host:port", c.Addr))
	}
	if c.User == "" {
		errs = append(errs, errors.New("user is required"))
	}
	if c.ServerID.First == 0 || (c.ServerID.Last != 0 && c.ServerID.Last < c.ServerID.First) {
		errs = append(errs, fmt.Errorf("server-id %d-%d: want a non-zero id or an ascending range", c.ServerID.First, c.ServerID.Last))
	}
	if c.Tables == nil {
		errs = append(errs, errors.New("a table filter is required"))
	}
	if c.Position.IsZero() && c.Startup == StartSpecific && c.StartPosition.IsZero() {
		errs = append(errs, errors.New("startup mode specific-offset needs a file and offset or a gtid set"))
	}
	if c.Position.IsZero() && c.Startup == StartTimestamp && c.StartTime.IsZero() {
		errs = append(errs, errors.New("startup mode timestamp needs a start time"))
	}
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("cdc: config: %w", err)
	}
	if c.ServerID.Last == 0 {
		c.ServerID.Last = c.ServerID.First
	}
	c.Heartbeat = defaultDuration(c.Heartbeat, 30*time.Second)
	c.ConnectTimeout = defaultDuration(c.ConnectTimeout, 30*time.Second)
	if c.ConnectRetries <= 0 {
		c.ConnectRetries = 3
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = 1024
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

func defaultDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// streamOptions returns what the stream needs of c.
func (c *Config) streamOptions() binlog.Options {
	return binlog.Options{Tables: c.Tables, Created: c.Created, Renamed: c.Renamed, Keyless: c.Keyless, Uncaptured: c.Uncaptured,
		MaxBatch: c.MaxBatch, Heartbeat: c.Heartbeat, StopAt: c.StopAt, Logger: c.Logger}
}
