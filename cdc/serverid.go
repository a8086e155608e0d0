package cdc

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ingestkit/ingest/cdc/binlogpos"
)

// ServerIdentity tells one server from another behind the same address: a stored position is
// only meaningful on the server that wrote it. A pipeline records it with its state on the
// first run and compares it on every start and reconnect ([Config.Server]).
type ServerIdentity struct {
	// ServerID is @@server_id.
	ServerID uint32
	// UUID is @@server_uuid (MySQL; MariaDB versions without it leave it empty). It changes
	// when the data directory is made anew.
	UUID string
	// Domains are the MariaDB GTID domains of @@gtid_binlog_state, ascending.
	Domains []uint32
}

// String returns the text form, fields separated by ";" in a fixed order, e.g.
// "server_id=1;gtid_domains=0,7" or "server_id=1;server_uuid=3e11fa47-…". [ParseServerIdentity]
// reads it back.
func (id ServerIdentity) String() string {
	parts := []string{"server_id=" + strconv.FormatUint(uint64(id.ServerID), 10)}
	if id.UUID != "" {
		parts = append(parts, "server_uuid="+id.UUID)
	}
	if len(id.Domains) > 0 {
		ds := make([]string, len(id.Domains))
		for i, d := range id.Domains {
			ds[i] = strconv.FormatUint(uint64(d), 10)
		}
		parts = append(parts, "gtid_domains="+strings.Join(ds, ","))
	}
	return strings.Join(parts, ";")
}

// ParseServerIdentity parses the text form of [ServerIdentity.String].
func ParseServerIdentity(s string) (ServerIdentity, error) {
	var id ServerIdentity
	for _, field := range strings.Split(s, ";") {
		key, val, _ := strings.Cut(field, "=")
		switch key {
		case "server_id":
			n, err := binlogpos.ParseDecimal(val, 32)
			if err != nil {
				return ServerIdentity{}, fmt.Errorf("server identity %q: server_id: %w", s, err)
			}
			id.ServerID = uint32(n)
		case "server_uuid":
			id.UUID = val
		case "gtid_domains":
			for _, d := range strings.Split(val, ",") {
				n, err := binlogpos.ParseDecimal(d, 32)
				if err != nil {
					return ServerIdentity{}, fmt.Errorf("server identity %q: gtid_domains: %w", s, err)
				}
				id.Domains = append(id.Domains, uint32(n))
			}
		default:
			return ServerIdentity{}, fmt.Errorf("server identity %q: unknown field %q", s, key)
		}
	}
	return id, nil
}

// ReadServerIdentity connects with cfg's settings and reads the server's identity.
func ReadServerIdentity(ctx context.Context, cfg Config) (ServerIdentity, error) {
	s, err := New(cfg)
	if err != nil {
		return ServerIdentity{}, err
	}
	db, err := s.openDB()
	if err != nil {
		return ServerIdentity{}, err
	}
	defer db.Close()
	return readServerIdentity(ctx, db)
}

func readServerIdentity(ctx context.Context, db *sql.DB) (ServerIdentity, error) {
	var id ServerIdentity
	if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL.server_id").Scan(&id.ServerID); err != nil {
		return id, fmt.Errorf("cdc: read @@server_id: %w", err)
	}
	var uuid sql.NullString
	if db.QueryRowContext(ctx, "SELECT @@GLOBAL.server_uuid").Scan(&uuid) == nil { // MariaDB 10.11 has none
		id.UUID = strings.ToLower(uuid.String)
	}
	state, err := gtidBinlogState(ctx, db)
	if err != nil {
		return id, err
	}
	for _, g := range state {
		if !slices.Contains(id.Domains, g.Domain) {
			id.Domains = append(id.Domains, g.Domain)
		}
	}
	slices.Sort(id.Domains)
	return id, nil
}

// gtidBinlogState reads MariaDB's @@gtid_binlog_state: the last GTID of every (domain,
// server id) pair in the binlog, purged files included. A server without it (MySQL) has an
// empty state.
func gtidBinlogState(ctx context.Context, db *sql.DB) ([]binlogpos.GTID, error) {
	var text sql.NullString
	if db.QueryRowContext(ctx, "SELECT @@GLOBAL.gtid_binlog_state").Scan(&text) != nil {
		return nil, nil // MySQL
	}
	var state []binlogpos.GTID
	for _, part := range strings.Split(text.String, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		g, err := binlogpos.ParseGTID(part)
		if err != nil {
			return nil, fmt.Errorf("cdc: @@gtid_binlog_state: %w", err)
		}
		state = append(state, g)
	}
	return state, nil
}

// checkServerIdentity compares the identity recorded with the state with the server's.
func checkServerIdentity(stored string, now ServerIdentity) []Problem {
	was, err := ParseServerIdentity(stored)
	if err != nil {
		return []Problem{{Severity: Error, Check: "server", Message: err.Error()}}
	}
	var diffs []string
	if was.ServerID != now.ServerID {
		diffs = append(diffs, fmt.Sprintf("server_id was %d, is %d", was.ServerID, now.ServerID))
	}
	if was.UUID != "" && now.UUID != "" && was.UUID != now.UUID {
		diffs = append(diffs, fmt.Sprintf("server_uuid was %s, is %s", was.UUID, now.UUID))
	}
	for _, d := range was.Domains {
		if !slices.Contains(now.Domains, d) {
			diffs = append(diffs, fmt.Sprintf("GTID domain %d is not in the server's gtid_binlog_state", d))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return []Problem{{Severity: Error, Check: "server", Message: fmt.Sprintf(
		"the server is not the one the stored state belongs to (%s; stored %s, server %s): "+
			"point the pipeline at that server or restore it, or re-snapshot by removing the pipeline's stored state; "+
			"if it is the same data under a new server_id, remove the \"server\" field of the state's identity.json to accept it",
		strings.Join(diffs, "; "), stored, now)}}
}
