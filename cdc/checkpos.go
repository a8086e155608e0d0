package cdc

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/ingestkit/ingest/cdc/binlogpos"
)

// positionFix is what to do about a stored position the server cannot serve.
const positionFix = "restore the server (or point the pipeline at the one the position was taken on), or re-snapshot: " +
	"remove the pipeline's stored state so that it starts with the initial snapshot (or use scan.startup.mode " +
	"latest-offset to skip the gap knowingly)"

// checkPosition checks that the server can serve the stream from p: by GTID when p has one
// (the stream resumes by GTID then), by binlog file and offset otherwise. stored says p is
// the stored position, not the specific-offset start; the messages name it so.
func checkPosition(ctx context.Context, db *sql.DB, p binlogpos.Position, stored bool) []Problem {
	name := "the stored position " + p.String()
	if !stored {
		name = "the start position " + p.String() + " (scan.startup.specific-offset)"
	}
	switch {
	case len(p.MariaDB) > 0:
		return checkMariaDBPosition(ctx, db, p, name)
	case p.MySQL != "":
		return checkMySQLPosition(ctx, db, p, name)
	}
	return checkFilePosition(ctx, db, p, name)
}

// checkFilePosition checks that p's binlog file is on the server and p's offset within it.
func checkFilePosition(ctx context.Context, db *sql.DB, p binlogpos.Position, name string) []Problem {
	files, err := binaryLogs(ctx, db)
	if err != nil {
		return []Problem{{Severity: Error, Check: "position", Message: err.Error()}}
	}
	oldest, newest := files[0], files[len(files)-1]
	onServer := fmt.Sprintf("the server's binlog files are %s to %s (%s: %d bytes)", oldest.name, newest.name, newest.name, newest.size)
	problem := func(what, fix string) []Problem {
		return []Problem{{Severity: Error, Check: "position", Message: fmt.Sprintf("%s %s; %s: %s", name, what, onServer, fix)}}
	}
	for _, f := range files {
		if f.name != p.File {
			continue
		}
		if uint64(p.Offset) > f.size {
			return problem(fmt.Sprintf("is past the end of %s (%d bytes): the binlog was reset or this is another server", f.name, f.size), positionFix)
		}
		return nil
	}
	c, ordered := binlogpos.CompareBinlogFiles(p.File, oldest.name)
	switch {
	case ordered && c < 0:
		return problem("is in binlog file "+p.File+", which is no longer on the server (purged): the changes since then are lost",
			"re-snapshot (remove the pipeline's stored state, or use scan.startup.mode latest-offset to skip the gap knowingly) "+
				"and raise binlog_expire_logs_seconds")
	case ordered:
		return problem("is in binlog file "+p.File+", beyond the server's newest: the binlog was reset or this is another server", positionFix)
	}
	return problem("is in binlog file "+p.File+", which this server never had (another log_bin name or another server)", positionFix)
}

// checkMariaDBPosition checks each GTID of p against the server's binlog: the server must
// have written (or received) it, so that a stored GTID beyond the server's is refused rather
// than waited for, and the transactions after it must not be purged.
func checkMariaDBPosition(ctx context.Context, db *sql.DB, p binlogpos.Position, name string) []Problem {
	state, err := gtidBinlogState(ctx, db)
	if err != nil {
		return []Problem{{Severity: Error, Check: "position", Message: err.Error()}}
	}
	var binlogPos string
	_ = db.QueryRowContext(ctx, "SELECT @@GLOBAL.gtid_binlog_pos").Scan(&binlogPos)
	server := fmt.Sprintf("the server's gtid_binlog_pos is %q, gtid_binlog_state %q", binlogPos, gtidList(state))
	var found []string
	for _, g := range p.MariaDB {
		last, ok := lastOf(state, g.Domain, g.Server)
		switch {
		case !ok:
			found = append(found, fmt.Sprintf("%s is not in the server's binlog (no transaction of server %d in domain %d)", g, g.Server, g.Domain))
		case g.Seq > last.Seq:
			found = append(found, fmt.Sprintf("%s is beyond the server's %s", g, last))
		}
	}
	if len(found) > 0 {
		return []Problem{{Severity: Error, Check: "position", Message: fmt.Sprintf(
			"%s cannot be resumed from: %s; %s: the binlog was reset or this is another server: %s",
			name, strings.Join(found, "; "), server, positionFix)}}
	}
	return checkMariaDBPurged(ctx, db, p, name)
}

// checkMariaDBPurged compares p with the GTID list at the start of the oldest binlog file:
// a domain whose stored GTID is before it lost the transactions in between.
func checkMariaDBPurged(ctx context.Context, db *sql.DB, p binlogpos.Position, name string) []Problem {
	files, err := binaryLogs(ctx, db)
	if err != nil {
		return nil // checked by the variables and grants already; the server checks on connect
	}
	start, ok := gtidListAt(ctx, db, files[0].name)
	if !ok {
		return nil
	}
	for _, g := range p.MariaDB {
		for _, s := range start {
			if s.Domain == g.Domain && s.Seq > g.Seq {
				return []Problem{{Severity: Error, Check: "position", Message: fmt.Sprintf(
					"%s is no longer on the server: its oldest binlog file %s starts after %s; "+
						"the changes since %s are lost: re-snapshot (remove the pipeline's stored state, or use "+
						"scan.startup.mode latest-offset to skip the gap knowingly) and raise binlog_expire_logs_seconds",
					name, files[0].name, gtidList(start), g)}}
			}
		}
	}
	return nil
}

// gtidListAt reads the Gtid_list event at the start of a MariaDB binlog file: the GTID state
// before the file's first transaction.
func gtidListAt(ctx context.Context, db *sql.DB, file string) ([]binlogpos.GTID, bool) {
	rows, err := db.QueryContext(ctx, "SHOW BINLOG EVENTS IN '"+strings.ReplaceAll(file, "'", "''")+"' LIMIT 4")
	if err != nil {
		return nil, false
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if rows.Scan(ptrs...) != nil || len(vals) < 6 {
			return nil, false
		}
		if string(vals[2]) != "Gtid_list" {
			continue
		}
		list := strings.Trim(string(vals[5]), "[] ")
		var set []binlogpos.GTID
		for _, part := range strings.Split(list, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			g, err := binlogpos.ParseGTID(part)
			if err != nil {
				return nil, false
			}
			set = append(set, g)
		}
		return set, true
	}
	return nil, false
}

func lastOf(state []binlogpos.GTID, domain, server uint32) (binlogpos.GTID, bool) {
	for _, g := range state {
		if g.Domain == domain && g.Server == server {
			return g, true
		}
	}
	return binlogpos.GTID{}, false
}

// gtidList writes GTIDs as a comma-separated list.
func gtidList(set []binlogpos.GTID) string {
	parts := make([]string, len(set))
	for i, g := range set {
		parts[i] = g.String()
	}
	return strings.Join(parts, ",")
}

// checkMySQLPosition checks a MySQL GTID set against gtid_executed (a stored set with
// transactions the server never executed is another server's, or a reset one's) and
// gtid_purged (what the server no longer has).
func checkMySQLPosition(ctx context.Context, db *sql.DB, p binlogpos.Position, name string) []Problem {
	pset, err := binlogpos.ParseMySQLGTIDSet(p.MySQL)
	if err != nil {
		return []Problem{{Severity: Error, Check: "position", Message: err.Error()}}
	}
	var executed, purged string
	if db.QueryRowContext(ctx, "SELECT @@GLOBAL.gtid_executed").Scan(&executed) == nil {
		if eset, err := binlogpos.ParseMySQLGTIDSet(executed); err == nil && !eset.Contains(pset) {
			return []Problem{{Severity: Error, Check: "position", Message: fmt.Sprintf(
				"%s has transactions the server never executed (its gtid_executed is %s): "+
					"the binlog was reset or this is another server: %s", name, executed, positionFix)}}
		}
	}
	if db.QueryRowContext(ctx, "SELECT @@GLOBAL.gtid_purged").Scan(&purged) != nil {
		return nil
	}
	gset, err := binlogpos.ParseMySQLGTIDSet(purged)
	if err != nil || pset.Contains(gset) {
		return nil
	}
	return []Problem{{Severity: Error, Check: "position", Message: fmt.Sprintf(
		"%s does not contain gtid_purged %s: transactions it needs are purged (no longer on the server); "+
			"re-snapshot (remove the pipeline's stored state) and raise binlog_expire_logs_seconds", name, purged)}}
}
