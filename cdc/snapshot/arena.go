package snapshot

import (
	"fmt"
	"sync"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ingestkit/ingest/change"
)

// arena holds the bytes and values of the rows of one piece in a few large blocks instead of
// two allocations per row. Blocks are only appended to and replaced when full. When the
// consumer has written the piece (the Release of its last batch), release hands the blocks
// of the standard sizes to the pools, for the pieces read next: a snapshot then allocates
// row memory for the pieces in flight only, not for every row of the table.
type arena struct {
	bytes  []byte
	values []change.Value
	// The standard-size blocks this arena took, to give back.
	byteBlocks  []*[]byte
	valueBlocks []*[]change.Value
}

const (
	arenaBytes  = 64 << 10 // bytes per block (a larger row gets a block of its own size)
	arenaValues = 4 << 10  // values per block (a row wider than that gets its own)
)

var (
	bytePool  = sync.Pool{New: func() any { b := make([]byte, 0, arenaBytes); return &b }}
	valuePool = sync.Pool{New: func() any { v := make([]change.Value, 0, arenaValues); return &v }}
)

// newBytes makes the current bytes block one with room for size more bytes.
func (a *arena) newBytes(size int) {
	if size > arenaBytes {
		a.bytes = make([]byte, 0, size)
		return
	}
	b := bytePool.Get().(*[]byte)
	a.byteBlocks = append(a.byteBlocks, b)
	a.bytes = (*b)[:0]
}

// newValues makes the current values block one with room for n more values.
func (a *arena) newValues(n int) {
	if n > arenaValues {
		a.values = make([]change.Value, 0, n)
		return
	}
	v := valuePool.Get().(*[]change.Value)
	a.valueBlocks = append(a.valueBlocks, v)
	a.values = (*v)[:0]
}

// release gives the arena's blocks back to the pools. Nothing may use the rows afterwards.
func (a *arena) release() {
	for _, b := range a.byteBlocks {
		bytePool.Put(b)
	}
	for _, v := range a.valueBlocks {
		clear((*v)[:cap(*v)]) // drop the references to byte blocks the values held
		valuePool.Put(v)
	}
	*a = arena{}
}

// copyRaw copies the text columns of a row, which go-mysql reuses for the next row, into the
// arena, and sets cols[i] to the copy of fields[i] (nil for the other values).
func (a *arena) copyRaw(fields []mysql.FieldValue, cols [][]byte) {
	size := 0
	for i := range fields {
		if fields[i].Type == mysql.FieldValueTypeString {
			size += len(fields[i].AsString())
		}
	}
	if cap(a.bytes)-len(a.bytes) < size {
		a.newBytes(size)
	}
	for i := range fields {
		cols[i] = nil
		if fields[i].Type == mysql.FieldValueTypeString {
			start := len(a.bytes)
			a.bytes = append(a.bytes, fields[i].AsString()...)
			cols[i] = a.bytes[start:len(a.bytes):len(a.bytes)]
			if cols[i] == nil {
				cols[i] = []byte{} // empty, not NULL
			}
		}
	}
}

// row returns n zero values for one row, with its capacity clipped to n.
func (a *arena) row(n int) change.Row {
	if cap(a.values)-len(a.values) < n {
		a.newValues(n)
	}
	start := len(a.values)
	a.values = a.values[:start+n]
	return change.Row(a.values[start : start+n : start+n])
}

// decode converts a row's values with the column decoders, taking the text ones from their
// copies in cols.
func (a *arena) decode(t *table, fields []mysql.FieldValue, cols [][]byte) (change.Row, error) {
	row := a.row(len(fields))
	for i := range fields {
		var err error
		col := t.desc.Columns[i]
		switch f := &fields[i]; f.Type {
		case mysql.FieldValueTypeNull:
		case mysql.FieldValueTypeSigned:
			row[i], err = col.FromInt64(f.AsInt64())
		case mysql.FieldValueTypeUnsigned:
			row[i], err = col.FromUint64(f.AsUint64())
		case mysql.FieldValueTypeFloat:
			row[i], err = col.FromFloat64(f.AsFloat64())
		default:
			row[i], err = col.FromText(cols[i])
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", t.desc.Schema.Columns[i].Name, err)
		}
	}
	return row, nil
}
