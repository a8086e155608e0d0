package upsert

import (
	"time"

	"github.com/ingestkit/ingest/change"
	"github.com/twmb/franz-go/pkg/kgo"
)

// outRecord is a record on its way to Kafka with the table it came from, for errors, and
// its meta (nil in tests: the record then gets a promise of its own).
type outRecord struct {
	rec   *kgo.Record
	meta  *recordMeta
	table change.TableID
}

// buffer keeps the latest record of each (topic, key) until it is flushed
// (sink.buffer-flush.*): a row updated many times within the interval is written once,
// and a delete stays a tombstone. Records of different keys keep the order in which
// their keys first arrived; there is only one record per key, so per-key order holds.
type buffer struct {
	maxRows  int
	interval time.Duration
	index    map[bufKey]int
	recs     []outRecord
	first    time.Time // when the oldest buffered record arrived
	replaced int64     // records dropped because a later one of their key replaced them
}

type bufKey struct {
	topic, key string
}

func newBuffer(maxRows int, interval time.Duration) *buffer {
	return &buffer{maxRows: maxRows, interval: interval, index: make(map[bufKey]int)}
}

// add buffers r, replacing the earlier record of its key, and reports whether the buffer
// reached its row limit.
func (b *buffer) add(r outRecord, now time.Time) (full bool) {
	k := bufKey{r.rec.Topic, string(r.rec.Key)}
	if i, ok := b.index[k]; ok {
		if old := b.recs[i]; old.meta != nil {
			old.meta.slabs.release() // never produced
		}
		b.recs[i] = r
		b.replaced++
	} else {
		if len(b.recs) == 0 {
			b.first = now
		}
		b.index[k] = len(b.recs)
		b.recs = append(b.recs, r)
	}
	return b.maxRows > 0 && len(b.recs) >= b.maxRows
}

// due reports whether the oldest record has waited the flush interval.
func (b *buffer) due(now time.Time) bool {
	return len(b.recs) > 0 && b.interval > 0 && now.Sub(b.first) >= b.interval
}

// take returns the buffered records in order and empties the buffer.
func (b *buffer) take() []outRecord {
	recs := b.recs
	b.recs = make([]outRecord, 0, cap(recs))
	clear(b.index)
	return recs
}

func (b *buffer) len() int { return len(b.recs) }
