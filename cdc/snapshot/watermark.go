package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
)

// watermarks reads binlog positions (file and offset) around a chunk's SELECT.
type watermarks struct {
	mariaDB bool
}

// low returns a position such that every transaction before it is visible to a SELECT that
// starts afterwards. On MariaDB it is the binlog position of a consistent snapshot
// (START TRANSACTION WITH CONSISTENT SNAPSHOT, Binlog_snapshot_file/position), taken in a
// transaction that is committed at once. SHOW MASTER STATUS alone can name a point past a
// transaction that is in the binlog but not yet committed in the engine; MySQL has no
// equivalent without BACKUP_ADMIN, so there it is used anyway, as Flink CDC does.
func (w *watermarks) low(ctx context.Context, conn *sql.Conn) (binlogpos.Position, error) {
	if !w.mariaDB {
		return masterStatus(ctx, conn)
	}
	if _, err := conn.ExecContext(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
		return binlogpos.Position{}, err
	}
	pos, err := snapshotStatus(ctx, conn)
	if _, cerr := conn.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err == nil {
		err = cerr
	}
	return pos, err
}

// high returns the end of the binlog: every transaction visible to a SELECT that has ended
// is before it (a transaction is written to the binlog before it commits in the engine).
func (w *watermarks) high(ctx context.Context, conn *sql.Conn) (binlogpos.Position, error) {
	return masterStatus(ctx, conn)
}

func snapshotStatus(ctx context.Context, conn *sql.Conn) (binlogpos.Position, error) {
	rows, err := conn.QueryContext(ctx, "SHOW STATUS LIKE 'binlog_snapshot_%'")
	if err != nil {
		return binlogpos.Position{}, err
	}
	defer rows.Close()
	var pos binlogpos.Position
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return binlogpos.Position{}, err
		}
		switch strings.ToLower(name) {
		case "binlog_snapshot_file":
			pos.File = value
		case "binlog_snapshot_position":
			off, err := strconv.ParseUint(value, 10, 32)
			if err != nil {
				return binlogpos.Position{}, fmt.Errorf("binlog_snapshot_position %q: %w", value, err)
			}
			pos.Offset = uint32(off)
		}
	}
	if err := rows.Err(); err != nil {
		return binlogpos.Position{}, err
	}
	if pos.File == "" {
		return binlogpos.Position{}, errors.New("the server reports no binlog snapshot position; is the binary log enabled (log_bin)?")
	}
	return pos, nil
}

// masterStatus returns SHOW MASTER STATUS's file and position (SHOW BINARY LOG STATUS where
// the server knows no other).
func masterStatus(ctx context.Context, conn *sql.Conn) (binlogpos.Position, error) {
	rows, err := conn.QueryContext(ctx, "SHOW MASTER STATUS")
	if err != nil && strings.Contains(err.Error(), "1064") {
		rows, err = conn.QueryContext(ctx, "SHOW BINARY LOG STATUS")
	}
	if err != nil {
		return binlogpos.Position{}, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return binlogpos.Position{}, err
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return binlogpos.Position{}, err
		}
		return binlogpos.Position{}, errors.New("SHOW MASTER STATUS returned nothing; is the binary log enabled (log_bin)?")
	}
	vals := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := rows.Scan(dest...); err != nil || len(vals) < 2 {
		return binlogpos.Position{}, fmt.Errorf("SHOW MASTER STATUS: %w", err)
	}
	off, err := strconv.ParseUint(vals[1].String, 10, 32)
	if err != nil {
		return binlogpos.Position{}, fmt.Errorf("SHOW MASTER STATUS position %q: %w", vals[1].String, err)
	}
	return binlogpos.Position{File: vals[0].String, Offset: uint32(off)}, nil
}

// binlogWindow reads the binlog between two watermarks with a short-lived replica
// connection per window, under one of the configured server ids.
//
// TODO(cdc): this is a minimal binlog reader of its own (file/offset start, row events of
// one table, no DDL tracking). It belongs with cdc's stream once cdc exposes a bounded
// reader ("events of these tables from position A to position B") built on its schema cache.
type binlogWindow struct {
	syncer replication.BinlogSyncerConfig // without ServerID
	ids    chan uint32
	reads  atomic.Int64 // windows read
}

func newBinlogWindow(cfg *Config, mariaDB bool) (*binlogWindow, error) {
	host, portText, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("addr %q: port: %w", cfg.Addr, err)
	}
	flavor := mysql.MySQLFlavor
	if mariaDB {
		flavor = mysql.MariaDBFlavor
	}
	w := &binlogWindow{
		syncer: replication.BinlogSyncerConfig{
			Flavor: flavor, Host: host, Port: uint16(port), User: cfg.User, Password: cfg.Password, TLSConfig: cfg.TLS,
			ParseTime: true, TimestampStringLocation: time.UTC, DisableRetrySync: true,
			// go-mysql logs its whole config, password included, at Info: never let it through.
			Logger: slog.New(slog.DiscardHandler),
		},
		ids: make(chan uint32, cfg.ServerIDs.Last-cfg.ServerIDs.First+1),
	}
	for id := cfg.ServerIDs.First; id <= cfg.ServerIDs.Last && id != 0; id++ {
		w.ids <- id
	}
	return w, nil
}

// merge applies to rows the binlog events on s's table between low and high whose chunk key
// lies in s, so that rows then hold the chunk's state at high. When from is before low (a
// resumed run, see Progress.Since), the events between from and low are read too, only to
// find the keys of s deleted or moved out since from; merge returns the last image of each
// such key that rows do not hold at high, for the chunk to emit as tombstones.
func (w *binlogWindow) merge(ctx context.Context, s span, rows *chunkRows, from, low, high binlogpos.Position) ([]change.Row, error) {
	c, ok := high.Compare(low)
	if !ok {
		return nil, fmt.Errorf("%s: watermarks %s and %s cannot be ordered", s, low, high)
	}
	if c < 0 {
		return nil, fmt.Errorf("%s: high watermark %s is before low watermark %s", s, high, low)
	}
	m := &mergeState{span: s, rows: rows, low: low}
	if f, ok := from.Compare(low); from.IsZero() || !ok || f >= 0 {
		from, m.gone = low, nil
	} else {
		m.gone = map[string]change.Row{}
	}
	if c, _ := from.Compare(high); c == 0 {
		return nil, nil
	}
	err := w.read(ctx, from, high, func(ev *replication.RowsEvent, at binlogpos.Position) error {
		if string(ev.Table.Schema) != s.t.id.DB || string(ev.Table.Table) != s.t.id.Table {
			return nil
		}
		return m.apply(ctx, ev, at.After(low))
	})
	if err != nil {
		return nil, fmt.Errorf("%s: merge binlog %s to %s: %w", s, from, high, err)
	}
	return m.tombstones(), nil
}

// mergeState is one chunk's merge: its rows and, in a resumed run, the keys that left it.
type mergeState struct {
	span span
	rows *chunkRows
	low  binlogpos.Position
	gone map[string]change.Row // nil unless tracking; last image of each key deleted or moved out
}

// tombstones returns the images of the keys that left the chunk and are not in it at high.
func (m *mergeState) tombstones() []change.Row {
	var out []change.Row
	for k, row := range m.gone {
		if !m.rows.has(k) {
			out = append(out, row)
		}
	}
	return out
}

// read calls fn for every rows event from low until the position reaches high, with the
// position at the end of the event. MariaDB 11.4 (with binlog_legacy_event_pos=OFF, its default)
// writes 0 as the end of the events inside a transaction; such an event gets the end of the
// last event before it that has one (the transaction's GTID event), which is after low
// exactly when the transaction is.
func (w *binlogWindow) read(ctx context.Context, low, high binlogpos.Position, fn func(*replication.RowsEvent, binlogpos.Position) error) error {
	var id uint32
	select {
	case id = <-w.ids:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { w.ids <- id }()
	cfg := w.syncer
	cfg.ServerID = id
	syncer := replication.NewBinlogSyncer(cfg)
	defer syncer.Close()
	stream, err := syncer.StartSync(mysql.Position{Name: low.File, Pos: low.Offset})
	if err != nil {
		return fmt.Errorf("start binlog at %s (server id %d): %w", low, id, err)
	}
	w.reads.Add(1)
	file, at := low.File, low.Offset
	for {
		ev, err := stream.GetEvent(ctx)
		if err != nil {
			return fmt.Errorf("binlog after %s:%d (server id %d): %w", file, at, id, err)
		}
		switch e := ev.Event.(type) {
		case *replication.RotateEvent:
			file = string(e.NextLogName)
			continue
		case *replication.RowsEvent:
			end := ev.Header.LogPos
			if end == 0 {
				end = at
			}
			if err := fn(e, binlogpos.Position{File: file, Offset: end}); err != nil {
				return err
			}
		}
		if ev.Header.LogPos == 0 || ev.Header.EventType == replication.HEARTBEAT_EVENT {
			continue
		}
		at = ev.Header.LogPos
		if c, _ := (binlogpos.Position{File: file, Offset: at}).Compare(high); c >= 0 {
			return nil
		}
	}
}

// apply applies one rows event to the chunk (when merge is set: the event is after low) and
// records the keys that leave it. An insert or the after image of an update whose key is in
// the span is upserted; a delete, or the before image of an update, whose key is in the span
// is removed (the before image first, so a key-changing update moves the row).
func (m *mergeState) apply(ctx context.Context, ev *replication.RowsEvent, merge bool) error {
	if err := schema.FullImages(ev); err != nil {
		return fmt.Errorf("table %s: %w", m.span.t.id, err)
	}
	if err := m.span.t.prefetchBinlog(ctx, ev.Rows); err != nil {
		return err
	}
	op := ev.Type()
	step := 1
	if op == replication.EnumRowsEventTypeUpdate {
		step = 2
	}
	for i := 0; i+step <= len(ev.Rows); i += step {
		var err error
		switch op {
		case replication.EnumRowsEventTypeInsert:
			err = m.upsert(ctx, ev.Rows[i], merge)
		case replication.EnumRowsEventTypeDelete:
			err = m.remove(ctx, ev.Rows[i], merge)
		case replication.EnumRowsEventTypeUpdate:
			if err = m.remove(ctx, ev.Rows[i], merge); err == nil {
				err = m.upsert(ctx, ev.Rows[i+1], merge)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *mergeState) upsert(ctx context.Context, raw []any, merge bool) error {
	if !merge {
		return nil
	}
	in, err := inSpan(ctx, m.span, raw)
	if err != nil || !in {
		return err
	}
	row, err := decodeBinlog(m.span.t, raw)
	if err != nil {
		return err
	}
	m.rows.upsert(row)
	return nil
}

func (m *mergeState) remove(ctx context.Context, raw []any, merge bool) error {
	if !merge {
		if m.gone == nil {
			return nil
		}
		return m.goneBeforeLow(ctx, raw)
	}
	in, err := inSpan(ctx, m.span, raw)
	if err != nil || !in {
		return err
	}
	row, err := decodeBinlog(m.span.t, raw)
	if err != nil {
		return err
	}
	m.rows.remove(row)
	if m.gone != nil {
		m.gone[recordKey(m.rows.schema, row)] = row
	}
	return nil
}

// goneBeforeLow records a key that left the span in an event before the low watermark, read
// only for the tombstones of a resumed run. A tombstone needs the key alone, and the event
// may have been written before a DDL (ADD or DROP COLUMN, or a column dropped and added
// again with another type), so only the key columns are decoded, at their current
// positions: that holds when the columns changed after them, as with the usual ADD and DROP
// COLUMN. A key that does not decode stops the chunk as a shape change.
func (m *mergeState) goneBeforeLow(ctx context.Context, raw []any) error {
	t := m.span.t
	row := make(change.Row, len(t.desc.Columns))
	indexes := slices.Clone(t.desc.Schema.Key)
	for _, kc := range t.key {
		indexes = append(indexes, kc.index)
	}
	for _, i := range indexes {
		if i >= len(raw) {
			return &shapeError{Table: t.id, Err: fmt.Errorf("a binlog row of %d columns before a DDL lacks key column %s",
				len(raw), t.desc.Schema.Columns[i].Name)}
		}
		v, err := t.desc.Columns[i].FromBinlog(raw[i])
		if err != nil {
			return &shapeError{Table: t.id, Err: fmt.Errorf("a binlog row of %d columns before a DDL: key column %s: %w",
				len(raw), t.desc.Schema.Columns[i].Name, err)}
		}
		row[i] = v
	}
	key, err := t.keyOf(ctx, row)
	if err != nil {
		return err
	}
	if m.span.contains(key) {
		m.gone[recordKey(m.rows.schema, row)] = row
	}
	return nil
}

// inSpan decodes only the chunk key of a binlog row and tests it against the span.
func inSpan(ctx context.Context, s span, raw []any) (bool, error) {
	if len(raw) != len(s.t.desc.Columns) {
		return false, &shapeError{Table: s.t.id, Err: fmt.Errorf("the binlog has %d columns, the snapshot %d",
			len(raw), len(s.t.desc.Columns))}
	}
	key := make([]change.Value, len(s.t.key))
	for i, kc := range s.t.key {
		v, err := s.t.desc.Columns[kc.index].FromBinlog(raw[kc.index])
		if err != nil {
			return false, &shapeError{Table: s.t.id, Err: fmt.Errorf("key column %s: %w", kc.name, err)}
		}
		key[i] = v
	}
	if err := s.t.sortable(ctx, key); err != nil {
		return false, err
	}
	return s.contains(key), nil
}

func decodeBinlog(t *table, raw []any) (change.Row, error) {
	row := make(change.Row, len(raw))
	for i, v := range raw {
		val, err := t.desc.Columns[i].FromBinlog(v)
		if err != nil {
			return nil, &shapeError{Table: t.id, Err: fmt.Errorf("column %s: %w", t.desc.Schema.Columns[i].Name, err)}
		}
		row[i] = val
	}
	return row, nil
}
