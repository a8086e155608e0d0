package cdc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ingestkit/ingest/cdc/binlogpos"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// startPosition resolves where the stream starts: the stored position, or the startup
// mode's. gtidKnown says the position's GTID form is complete (it may be resumed from).
func (s *Source) startPosition(ctx context.Context, db *sql.DB, srv *server) (binlogpos.Position, bool, error) {
	if !s.cfg.Position.IsZero() {
		return s.cfg.Position, s.cfg.Position.HasGTID(), nil
	}
	switch s.cfg.Startup {
	case StartEarliest:
		files, err := binaryLogs(ctx, db)
		if err != nil {
			return binlogpos.Position{}, false, err
		}
		return binlogpos.Position{File: files[0].name, Offset: 4}, false, nil
	case StartSpecific:
		return s.cfg.StartPosition, s.cfg.StartPosition.HasGTID(), nil
	case StartTimestamp:
		file, err := s.fileForTime(ctx, db, srv, s.cfg.StartTime)
		if err != nil {
			return binlogpos.Position{}, false, err
		}
		return binlogpos.Position{File: file, Offset: 4}, false, nil
	}
	return latestPosition(ctx, db, srv)
}

// latestPosition reads the server's current position: @@gtid_binlog_pos on MariaDB (one
// read, so file and GTIDs cannot disagree), SHOW MASTER STATUS otherwise.
func latestPosition(ctx context.Context, db *sql.DB, srv *server) (binlogpos.Position, bool, error) {
	if srv.mariaDB {
		var gtids string
		if err := db.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&gtids); err != nil {
			return binlogpos.Position{}, false, fmt.Errorf("cdc: read @@gtid_binlog_pos: %w", err)
		}
		set, err := binlogpos.ParseMariaDBGTIDs(gtids)
		if err != nil {
			return binlogpos.Position{}, false, fmt.Errorf("cdc: @@gtid_binlog_pos: %w", err)
		}
		if len(set) > 0 {
			return binlogpos.Position{MariaDB: set}, true, nil
		}
	}
	st, err := masterStatus(ctx, db)
	if err != nil {
		return binlogpos.Position{}, false, err
	}
	return st, srv.mariaDB || st.MySQL != "", nil
}

// masterStatus runs SHOW MASTER STATUS (SHOW BINARY LOG STATUS on MySQL 8.4+).
func masterStatus(ctx context.Context, db *sql.DB) (binlogpos.Position, error) {
	rows, err := db.QueryContext(ctx, "SHOW MASTER STATUS")
	if err != nil {
		var retry error
		if rows, retry = db.QueryContext(ctx, "SHOW BINARY LOG STATUS"); retry != nil {
			return binlogpos.Position{}, fmt.Errorf("cdc: SHOW MASTER STATUS: %w (grant BINLOG MONITOR or REPLICATION CLIENT)", err)
		}
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return binlogpos.Position{}, err
	}
	if !rows.Next() {
		return binlogpos.Position{}, errors.New("cdc: SHOW MASTER STATUS returned no row: the binary log is off (set log_bin)")
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return binlogpos.Position{}, err
	}
	var p binlogpos.Position
	p.File = vals[0].String
	var off uint64
	if _, err := fmt.Sscan(vals[1].String, &off); err != nil {
		return binlogpos.Position{}, fmt.Errorf("cdc: SHOW MASTER STATUS position %q: %w", vals[1].String, err)
	}
	p.Offset = uint32(off)
	for i, c := range cols {
		if c == "Executed_Gtid_Set" && vals[i].String != "" {
			if p.MySQL, err = binlogpos.NormalizeMySQLGTIDSet(vals[i].String); err != nil {
				return binlogpos.Position{}, err
			}
		}
	}
	return p, rows.Err()
}

type binlogFile struct {
	name string
	size uint64
}

// binaryLogs lists SHOW BINARY LOGS, oldest first.
func binaryLogs(ctx context.Context, db *sql.DB) ([]binlogFile, error) {
	rows, err := db.QueryContext(ctx, "SHOW BINARY LOGS")
	if err != nil {
		return nil, fmt.Errorf("cdc: SHOW BINARY LOGS: %w", err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var files []binlogFile
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		f := binlogFile{name: string(vals[0])}
		_, _ = fmt.Sscan(string(vals[1]), &f.size)
		files = append(files, f)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errors.New("cdc: SHOW BINARY LOGS is empty: the binary log is off (set log_bin)")
	}
	return files, nil
}

// fileForTime finds the newest binlog file whose first event is at or before t, reading
// each file's first event header from the newest back; the stream then skips the
// transactions committed before t.
func (s *Source) fileForTime(ctx context.Context, db *sql.DB, srv *server, t time.Time) (string, error) {
	files, err := binaryLogs(ctx, db)
	if err != nil {
		return "", err
	}
	for i := len(files) - 1; i > 0; i-- {
		first, err := s.firstEventTime(ctx, srv, files[i].name)
		if err != nil {
			return "", fmt.Errorf("cdc: find the binlog file of %s: %w", t.UTC().Format(time.RFC3339), err)
		}
		if !first.After(t) {
			return files[i].name, nil
		}
	}
	return files[0].name, nil
}

// firstEventTime reads the header time of the first real event of a binlog file.
func (s *Source) firstEventTime(ctx context.Context, srv *server, file string) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	defer cancel()
	cfg := s.syncerConfig(srv)
	cfg.RawModeEnabled = true
	cfg.ReadTimeout = s.cfg.ConnectTimeout // a few events: a deadline per packet costs nothing
	syncer := replication.NewBinlogSyncer(cfg)
	defer syncer.Close()
	streamer, err := syncer.StartSync(gomysql.Position{Name: file, Pos: 4})
	if err != nil {
		return time.Time{}, err
	}
	for {
		ev, err := streamer.GetEvent(ctx)
		if err != nil {
			return time.Time{}, fmt.Errorf("read %s: %w", file, err)
		}
		if ev.Header.Timestamp != 0 && ev.Header.LogPos != 0 {
			return time.Unix(int64(ev.Header.Timestamp), 0), nil
		}
	}
}
