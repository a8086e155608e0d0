package snapshot

import (
	"cmp"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ingestkit/ingest/cdc"
	"github.com/ingestkit/ingest/change"
)

// Config configures a [Snapshot]. The zero value of every optional field is the documented
// default; Addr, User, ServerIDs and Tables or Match are required.
type Config struct {
	// Addr is the server's host:port.
	Addr string
	// User and Password authenticate; the user needs SELECT, REPLICATION SLAVE and
	// BINLOG MONITOR (REPLICATION CLIENT), and neither RELOAD nor LOCK TABLES.
	User, Password string
	// TLS, when set, makes every connection (the SELECTs and the binlog windows) use TLS
	// with this configuration, as the binlog stream's do (cdc.Config.TLS).
	TLS *tls.Config

	// Tables lists the tables to snapshot. When empty, the base tables Match accepts are
	// discovered from information_schema.
	Tables []change.TableID
	// Match selects tables for discovery (route.Filter.Match) when Tables is empty.
	Match func(db, table string) bool

	// Describe describes a table (schema and column decoders) from information_schema.
	// Default [DescribeCDC].
	Describe DescribeFunc
	// TinyInt1AsNumber and Keys are passed to Describe: treat-tinyint1-as-boolean.enabled
	// false, and the record keys of transform primary-keys.
	TinyInt1AsNumber bool
	Keys             func(db, table string) ([]string, bool)
	// ChunkKey returns the chunk key columns of a table
	// (scan.incremental.snapshot.chunk.key-column); nil or empty: the record key.
	ChunkKey func(id change.TableID) []string

	// ChunkSize is the number of rows of a chunk (scan.incremental.snapshot.chunk.size).
	// Default 8096.
	ChunkSize int
	// FetchSize is the most changes in one emitted batch (scan.snapshot.fetch.size).
	// Default 1024.
	FetchSize int
	// Parallelism is the number of chunk readers, each with its own connection. Default 1.
	Parallelism int
	// ServerIDs are the replica ids the readers use to read the binlog between a chunk's
	// watermarks (at most one reader per id at a time). Every id must be unique among the
	// server's replicas and differ from the binlog stream's own id. Required.
	ServerIDs cdc.ServerIDRange

	// Resume is the progress stored by an earlier run: its finished chunks are not read again.
	Resume *Progress
	// OnProgress, when set, is called after each chunk is emitted, from one goroutine.
	OnProgress func(TableProgress)
	// Logger receives the snapshot's logs. Nil discards them.
	Logger *slog.Logger
	// ConnectTimeout bounds one connection attempt. Default 30s.
	ConnectTimeout time.Duration
}

// TableProgress is the progress of one table, for metrics and logs.
type TableProgress struct {
	Table change.TableID
	// Rows is the number of rows emitted so far by this run; Chunks counts the chunks
	// finished, including those of the resumed progress.
	Rows, Chunks int64
	// Estimate is information_schema.TABLES.TABLE_ROWS when the snapshot started.
	Estimate int64
}

const (
	defaultChunkSize = 8096
	defaultFetchSize = 1024
)

// withDefaults returns a copy of c with defaults applied, or every invalid field.
func (c Config) withDefaults() (Config, error) {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("addr %q: want host:port", c.Addr))
	}
	if c.User == "" {
		errs = append(errs, errors.New("user is required"))
	}
	if len(c.Tables) == 0 && c.Match == nil {
		errs = append(errs, errors.New("tables or a table filter is required"))
	}
	if c.ServerIDs.First == 0 || (c.ServerIDs.Last != 0 && c.ServerIDs.Last < c.ServerIDs.First) {
		errs = append(errs, fmt.Errorf("server-id %d-%d: want a non-zero id or an ascending range", c.ServerIDs.First, c.ServerIDs.Last))
	}
	if c.ChunkSize < 0 || c.ChunkSize == 1 || c.FetchSize < 0 || c.Parallelism < 0 {
		errs = append(errs, fmt.Errorf("chunk size %d, fetch size %d, parallelism %d: want chunk size > 1 and positive values",
			c.ChunkSize, c.FetchSize, c.Parallelism))
	}
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("snapshot: config: %w", err)
	}
	if c.ServerIDs.Last == 0 {
		c.ServerIDs.Last = c.ServerIDs.First
	}
	c.ChunkSize = cmp.Or(c.ChunkSize, defaultChunkSize)
	c.FetchSize = cmp.Or(c.FetchSize, defaultFetchSize)
	c.Parallelism = cmp.Or(c.Parallelism, 1)
	c.ConnectTimeout = cmp.Or(c.ConnectTimeout, 30*time.Second)
	if c.Describe == nil {
		c.Describe = DescribeCDC
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// openDB opens a pool whose sessions read TIMESTAMP in UTC and text in each column's own
// character set, as cdc's FromText expects, over the text protocol (interpolated
// parameters), with room for the readers, the planner and the watermark queries.
func (c *Config) openDB() (*sql.DB, error) {
	mc := mysql.NewConfig()
	mc.Net, mc.Addr, mc.User, mc.Passwd = "tcp", c.Addr, c.User, c.Password
	mc.InterpolateParams = true
	mc.TLS = c.TLS
	mc.Timeout = c.ConnectTimeout
	mc.Params = map[string]string{"time_zone": "'+00:00'", "character_set_results": "NULL"}
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, fmt.Errorf("snapshot: connect %s: %w", c.Addr, err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(c.poolSize())
	db.SetMaxIdleConns(c.poolSize())
	return db, nil
}

// poolSize is the connections of a pool openDB opens: one per reader and two more.
func (c Config) poolSize() int { return c.Parallelism + 2 }
