package upsert

import "sync/atomic"

// slab is a block of encoded bytes that consecutive messages share. A pooled slab is
// counted: the [Encoder] holds it while it writes into it, every message key or value in
// it holds it, and every record produced from such a message holds it until the broker
// acknowledged the record. The last release gives it back to the pool, to be written
// again. A hold that is never released (a record replaced in the buffer, a failed record,
// a message dropped by an error) only keeps the slab out of the pool: it is then left to
// the garbage collector, as unpooled slabs are. Releasing too often is the one mistake
// that corrupts records, so it panics.
type slab struct {
	buf  []byte
	refs atomic.Int32
	pool *slabPool
}

// hold adds a reference to s (nil: an unpooled slab, nothing to count).
func (s *slab) hold() {
	if s != nil {
		s.refs.Add(1)
	}
}

// release drops a reference to s and returns it to its pool after the last one.
func (s *slab) release() {
	if s == nil {
		return
	}
	switch n := s.refs.Add(-1); {
	case n == 0:
		s.pool.put(s)
	case n < 0:
		panic("upsert: slab released more often than it was held")
	}
}

// slabPool keeps up to maxFreeSlabs slabs whose records Kafka acknowledged; more are left
// to the garbage collector. Slabs are put back on the client's promise goroutine and
// taken by the encoder's.
type slabPool struct {
	free chan *slab
	// poison overwrites a released slab, so that a record still using it shows up as
	// garbage in Kafka instead of a subtly wrong value (tests).
	poison bool
	// made counts the slabs allocated, pooled ones not included (encoder's goroutine).
	made int
}

// get returns an empty slab held once (by the encoder).
func (p *slabPool) get() *slab {
	var s *slab
	select {
	case s = <-p.free:
	default:
		s = &slab{buf: make([]byte, 0, slabSize), pool: p}
		p.made++
	}
	s.buf = s.buf[:0]
	s.refs.Store(1)
	return s
}

func (p *slabPool) put(s *slab) {
	if p.poison {
		b := s.buf[:cap(s.buf)]
		for i := range b {
			b[i] = 0xff
		}
	}
	select {
	case p.free <- s:
	default:
	}
}

// maxFreeSlabs bounds the memory a pool keeps idle (8 MiB).
const maxFreeSlabs = 128

func newSlabPool(poison bool) *slabPool {
	return &slabPool{free: make(chan *slab, maxFreeSlabs), poison: poison}
}

// slabHolds are the holds of a message or a record on the slabs of its key and value
// (nil: unpooled).
type slabHolds [2]*slab

// hold adds a hold on each slab.
func (h slabHolds) hold() {
	h[0].hold()
	h[1].hold()
}

// release drops the holds.
func (h slabHolds) release() {
	h[0].release()
	h[1].release()
}

// piece is an encoded key or value and the slab it lies in (nil if unpooled).
type piece struct {
	b    []byte
	slab *slab
}

// poisonSlabs makes the sinks created while it is set poison released slabs (tests).
var poisonSlabs bool
