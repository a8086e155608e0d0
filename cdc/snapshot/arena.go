package snapshot

import (
	"fmt"
	"sync"

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

// packetWriter is the io.Writer go-mysql reads a row packet into: it appends the packet to
// the arena's current block, and when the block is full moves the part written so far to a
// new one, so that a packet is always contiguous.
type packetWriter struct {
	a     *arena
	start int // where the packet begins in a.bytes
}

// minPacketRoom is the room a block must have left to start a packet in it.
const minPacketRoom = 1 << 10

// begin starts a packet.
func (w *packetWriter) begin() {
	if cap(w.a.bytes)-len(w.a.bytes) < minPacketRoom {
		w.a.newBytes(minPacketRoom)
	}
	w.start = len(w.a.bytes)
}

// Write implements io.Writer.
func (w *packetWriter) Write(p []byte) (int, error) {
	a := w.a
	if cap(a.bytes)-len(a.bytes) < len(p) {
		part := a.bytes[w.start:]
		size := len(part) + len(p)
		if size > arenaBytes {
			size *= 2 // a row larger than a block moves a few times only
		}
		a.newBytes(size)
		a.bytes = append(a.bytes, part...)
		w.start = 0
	}
	a.bytes = append(a.bytes, p...)
	return len(p), nil
}

// packet returns the packet written since begin.
func (w *packetWriter) packet() []byte {
	return w.a.bytes[w.start:len(w.a.bytes):len(w.a.bytes)]
}

// discard drops the packet written since begin.
func (w *packetWriter) discard() { w.a.bytes = w.a.bytes[:w.start] }

// row returns n zero values for one row, with its capacity clipped to n.
func (a *arena) row(n int) change.Row {
	if cap(a.values)-len(a.values) < n {
		a.newValues(n)
	}
	start := len(a.values)
	a.values = a.values[:start+n]
	return change.Row(a.values[start : start+n : start+n])
}

// decode converts a row's values (nil for NULL) in the binary protocol's forms with the
// column decoders.
func (a *arena) decode(t *table, cols [][]byte, forms []wireForm) (change.Row, error) {
	row := a.row(len(cols))
	for i, b := range cols {
		if b == nil {
			continue
		}
		var v change.Value
		var err error
		if forms[i].binary() {
			v, err = t.desc.Columns[i].FromBinary(b)
		} else {
			v, err = t.desc.Columns[i].FromOwnedText(b) // the packet is the arena's
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", t.desc.Schema.Columns[i].Name, err)
		}
		row[i] = v
	}
	return row, nil
}
