package upsert

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/change"
)

func TestMain(m *testing.M) {
	poisonSlabs = true // a record written after its slab was reused shows up as 0xff bytes
	os.Exit(m.Run())
}

// heldMessage is a message not yet released and copies of its bytes at encode time.
type heldMessage struct {
	m          Message
	key, value []byte
}

// TestSlabPool encodes a random mix of changes (notes of every size, key changes and
// same-key updates) with a pooled, poisoning encoder, releasing messages in random order
// as acknowledgements would. No message still held may change, and the slabs must come
// back: far fewer are made than were filled.
func TestSlabPool(t *testing.T) {
	for _, holdMax := range []int{1, 50, 300} {
		rnd := rand.New(rand.NewPCG(uint64(holdMax), 7))
		e := NewEncoder(EncodeOptions{})
		e.pool = newSlabPool(true)
		var live []heldMessage
		var encoded int // bytes in pooled slabs
		for i := range 30000 {
			msgs, err := e.Encode(nil, randomChange(rnd, int64(i)), commitTime)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				if m.slabs[0] != nil {
					encoded += len(m.Key)
				}
				if m.slabs[1] != nil {
					encoded += len(m.Value)
				}
				live = append(live, heldMessage{m, bytes.Clone(m.Key), bytes.Clone(m.Value)})
			}
			for len(live) > holdMax || len(live) > 0 && rnd.IntN(4) == 0 {
				j := rnd.IntN(len(live))
				checkHeld(t, live[j])
				live[j].m.slabs.release()
				live[j] = live[len(live)-1]
				live = live[:len(live)-1]
			}
		}
		for _, h := range live {
			checkHeld(t, h)
		}
		filled := encoded / slabSize
		if e.pool.made > filled/2 {
			t.Errorf("holding up to %d messages: %d slabs made for %d slabs of data: released slabs are not reused",
				holdMax, e.pool.made, filled)
		}
	}
}

func checkHeld(t *testing.T, h heldMessage) {
	t.Helper()
	if !bytes.Equal(h.m.Key, h.key) || !bytes.Equal(h.m.Value, h.value) {
		t.Fatalf("a held message changed: key %q, was %q", h.m.Key, h.key)
	}
}

// randomChange is an insert, an update (of the same key or another) or a delete of
// orders, with a note of 0 bytes to twice a slab.
func randomChange(rnd *rand.Rand, i int64) *change.Change {
	size := rnd.IntN(300)
	switch rnd.IntN(50) {
	case 0:
		size = rnd.IntN(3 * 1024)
	case 1:
		if rnd.IntN(20) == 0 {
			size = slabSize + rnd.IntN(slabSize)
		}
	}
	note := strings.Repeat("n", size)
	switch rnd.IntN(4) {
	case 0:
		return &change.Change{Schema: orders, Op: change.Insert, After: orderRow(i, 1, note)}
	case 1:
		return &change.Change{Schema: orders, Op: change.Update, Before: orderRow(i, 1, "old"), After: orderRow(i, 1, note)}
	case 2:
		return &change.Change{Schema: orders, Op: change.Update, Before: orderRow(i, 1, "old"), After: orderRow(i+1, 2, note)}
	}
	return &change.Change{Schema: orders, Op: change.Delete, Before: orderRow(i, 1, note)}
}

func TestSlabReleasedTooOften(t *testing.T) {
	s := newSlabPool(false).get()
	s.release()
	defer func() {
		if recover() == nil {
			t.Error("a slab released more often than held did not panic")
		}
	}()
	s.release()
}
