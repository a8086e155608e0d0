package schema

import (
	"errors"
	"fmt"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/ingestkit/ingest/change"
)

// DecodeImages returns the values of every row image of a rows event in one block (its rows
// are clipped slices of it), len(t.Columns) per image. Pending rows (data) are decoded by
// plan when it handles the event, else by go-mysql; go-mysql's values are converted with
// FromBinlog.
func DecodeImages(h *replication.EventHeader, e *replication.RowsEvent, t *Table, plan *RowPlan, data []byte,
	pending bool, step int) ([]change.Value, error) {
	if pending && plan.matches(h.EventType, e) {
		vals, err := plan.decode(data, step == 2)
		if !errors.Is(err, ErrFallback) {
			return vals, err
		}
	}
	if pending {
		if err := e.DecodeData(0, data); err != nil {
			return nil, fmt.Errorf("decode rows: %w", err)
		}
	}
	if err := FullImages(e); err != nil {
		return nil, err
	}
	n := len(t.Columns)
	vals := make([]change.Value, len(e.Rows)/step*step*n)
	for i := range len(e.Rows) / step * step {
		if _, err := decodeRow(t, e.Rows[i], vals[i*n:(i+1)*n:(i+1)*n]); err != nil {
			return nil, err
		}
	}
	return vals, nil
}

// decodeRow converts one row image into row, which has a value per column of t. The image
// must hold every column (binlog_row_image=FULL).
func decodeRow(t *Table, image []any, row change.Row) (change.Row, error) {
	if len(image) != len(t.Columns) {
		return nil, fmt.Errorf("row has %d columns, the table %d", len(image), len(t.Columns))
	}
	for i := range image {
		v, err := t.Columns[i].FromBinlog(image[i])
		if err != nil {
			return nil, err
		}
		row[i] = v
	}
	return row, nil
}

// FullImages returns an error when a rows event decoded by go-mysql leaves columns out of a
// row image (binlog_row_image MINIMAL or NOBLOB): go-mysql leaves them nil, which would read
// as NULL.
func FullImages(e *replication.RowsEvent) error {
	for _, skipped := range e.SkippedColumns {
		if len(skipped) > 0 {
			return fmt.Errorf("the row image lacks %d of the table's %d columns (binlog_row_image is MINIMAL or NOBLOB): "+
				"set binlog_row_image = FULL globally and in the server configuration, then re-snapshot the tables changed meanwhile",
				len(skipped), e.ColumnCount)
		}
	}
	return nil
}

// SkipUncaptured returns a rows-event decoder that decodes only the event headers: the rows
// of the tables that tables captures are left undecoded in pending for the stream (see
// rowimage.go), those of other tables are dropped (Rows stays nil). It runs on go-mysql's
// reader goroutine, one per connection.
func SkipUncaptured(tables func(db, table string) bool, pending *PendingRows) func(*replication.RowsEvent, []byte) error {
	captured := map[uint64]bool{}
	return func(e *replication.RowsEvent, data []byte) error {
		pos, err := e.DecodeHeader(data)
		if err != nil {
			return err
		}
		ok, seen := captured[e.TableID]
		if !seen {
			ok = tables(string(e.Table.Schema), string(e.Table.Table))
			captured[e.TableID] = ok
		}
		if ok {
			pending.put(e, data[pos:])
		}
		return nil
	}
}
