package upsert

import (
	"sync"
	"sync/atomic"
)

// Checkpoint is what the sink reports, and in exactly-once mode stores, once a source
// transaction is safely in Kafka.
type Checkpoint struct {
	// Position is the source position after the transaction (change.Batch.Position).
	Position []byte
	// State is the caller's state given with that batch ([Input].State).
	State State
}

// tracker follows the acknowledgement of produced records (at-least-once and none) and
// finds the last checkpoint whose records, and all records before them, are acknowledged.
//
// Records are produced into the open unit; sealing it with a checkpoint closes it. Units
// complete in any order (partitions ack independently) but are reported in order: a
// checkpoint is released only when its unit and every earlier one are complete. A unit
// with a failed record is never released, nor anything after it.
type tracker struct {
	mu     sync.Mutex
	units  []*unit // sealed units not yet released, oldest first
	open   *unit
	notify chan struct{} // pinged (without blocking) when a unit may have completed
	// waiting is a checkpoint whose records are still in the sink's buffer; it seals the
	// open unit once they are produced.
	waiting *Checkpoint
}

// unit is the records produced between two seals. The sink goroutine counts them in
// produced and the promises count acknowledgements in acked, on separate cache lines: one
// counter updated by both goroutines bounced its cache line between the cores at every
// record. produced is read by the promises only once sealed is set.
type unit struct {
	produced   int64 // by the sink goroutine; fixed once sealed
	checkpoint *Checkpoint
	t          *tracker
	sealed     atomic.Bool
	_          [64]byte // keep acked off the sink goroutine's cache line
	acked      atomic.Int64
	failed     atomic.Bool
}

func newTracker() *tracker {
	t := &tracker{notify: make(chan struct{}, 1)}
	t.open = &unit{t: t}
	return t
}

// add counts one more record in the open unit and returns the unit, whose promise the
// record must be produced with. Only the sink goroutine calls it.
func (t *tracker) add() *unit {
	t.open.produced++
	return t.open
}

// seal closes the open unit with cp (which may be nil) and opens a new one.
func (t *tracker) seal(cp *Checkpoint) {
	t.open.checkpoint = cp
	t.open.sealed.Store(true) // publishes produced to the promises
	t.mu.Lock()
	t.units = append(t.units, t.open)
	t.mu.Unlock()
	t.open = &unit{t: t}
	t.ping()
}

// pendingCheckpoint remembers cp until the buffered records before it are produced.
func (t *tracker) pendingCheckpoint(cp *Checkpoint) { t.waiting = cp }

// sealPending seals the open unit with the waiting checkpoint, if there is one.
func (t *tracker) sealPending() {
	if t.waiting != nil {
		t.seal(t.waiting)
		t.waiting = nil
	}
}

func (t *tracker) ping() {
	select {
	case t.notify <- struct{}{}:
	default:
	}
}

// done records the result of one record of the unit. It is called by the producer's
// promise goroutine and never blocks. A unit completed before its seal is noticed by the
// seal's own ping.
func (u *unit) done(err error) {
	if err != nil {
		u.failed.Store(true)
	}
	if n := u.acked.Add(1); err != nil || u.sealed.Load() && n == u.produced {
		u.t.ping()
	}
}

// complete reports whether every record produced in the unit so far is acknowledged.
func (u *unit) complete() bool { return u.acked.Load() == u.produced }

// release removes the completed units at the front and returns the newest checkpoint
// among them, or nil.
func (t *tracker) release() *Checkpoint {
	t.mu.Lock()
	defer t.mu.Unlock()
	var cp *Checkpoint
	n := 0
	for _, u := range t.units {
		if !u.complete() || u.failed.Load() {
			break
		}
		if u.checkpoint != nil {
			cp = u.checkpoint
		}
		n++
	}
	t.units = t.units[n:]
	return cp
}

// outstanding reports whether any sealed or open unit still waits for records.
func (t *tracker) outstanding() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.units) > 0 || !t.open.complete()
}
