package upsert

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ingestkit/ingest/change"
)

// A TRUNCATE TABLE, a DROP TABLE or a RENAME TABLE away (a SchemaChange of kind Truncated or
// Dropped) leaves the table without rows, but a compacted topic keeps the last record of
// every key it ever had. With Config.TruncateTombstones the sink finds the keys the table
// has in each of its topics by reading the topic back, and writes a tombstone for each, so
// that a consumer materialising the topic ends equal to the table:
//
//  1. Everything written before is made visible: with exactly-once the open Kafka
//     transaction is committed (it ends on the previous source transaction), otherwise the
//     buffer is flushed and every record acknowledged.
//  2. Each topic is read with read_committed from its start up to its last stable offset,
//     after waiting (a bounded while) for that offset to reach the end offset: the commit
//     markers of the transaction just committed land after EndTransaction returns. The
//     sink's own transaction holds nothing yet at that point, so the read never waits for
//     it; every topic of the batch is read before any tombstone is written.
//  3. The live keys (last record not a tombstone) that belong to the table get a tombstone,
//     with the table's headers and the DDL's commit time. A record carrying the
//     schemaName/tableName headers belongs to the table they name; one without them
//     belongs to the table only when no other table writes to the topic
//     (Config.SharedTopic): otherwise it cannot be told apart and is left as it is, with a
//     warning. With exactly-once the tombstones are in the transaction that stores the
//     DDL's position.
//
// Every such statement is logged, with what was written, or why nothing was.
//
// A table snapshotted again while it is captured (joining the captured set, or asked for by
// `ingest resnapshot`) is framed by two markers, SchemaChanges of kinds Resnapshotting and
// Resnapshotted. At the first, the sink makes everything written before visible (step 1)
// and notes the end offset of each partition of the table's topics. At the second, it reads
// the topics back as above and writes a tombstone for each live key of the table whose last
// record is before the noted offsets: the snapshot did not write it, so the table no longer
// has it (the runner resumes the stream only after the second marker).

// clearWait bounds the wait for a topic's last stable offset to reach its end offset.
const clearWait = 10 * time.Second

// readBackStall bounds a read back that gets no record at all.
const readBackStall = 30 * time.Second

// clearing is the read-back of the tables a batch truncates or drops, ready to be
// tombstoned when the batch's SchemaChange is written.
type clearing struct {
	tables map[change.TableID]*clearedTable
}

// resnapshotMarks are, per table being snapshotted again and per topic of it, the end
// offsets of the topic's partitions when the table's Resnapshotting marker was written.
type resnapshotMarks map[change.TableID]map[string]map[int32]int64

// clearedTable is what the read-back found of one table.
type clearedTable struct {
	topics []clearedTopic
}

type clearedTopic struct {
	topic   string
	keys    [][]byte // the table's live keys, in offset order of their last record
	records int      // records read
	foreign int      // live keys without table headers in a shared topic: left as they are
	skipped string   // why nothing is written to the topic ("" when keys are)
	took    time.Duration
}

// clears reports whether a change is a statement that empties its table, or the end of a
// re-snapshot, which empties it of the keys the snapshot did not write.
func clears(c *change.Change) bool {
	return ddlKind(c, change.Truncated) || ddlKind(c, change.Dropped) || ddlKind(c, change.Resnapshotted)
}

// ddlKind reports whether c is a SchemaChange of kind k.
func ddlKind(c *change.Change, k change.DDLKind) bool {
	return c.Op == change.SchemaChange && c.DDL != nil && c.DDL.Kind == k
}

// prepareClear does steps 1 and 2 for the batch's statements that empty a table, before
// any of the batch is written. It returns nil when the batch has none, or when the sink
// writes no tombstones for them.
func (s *Sink) prepareClear(ctx context.Context, b *Input) (*clearing, error) {
	var ids, marked []change.TableID
	resnapshotted := map[change.TableID]bool{}
	for i := range b.Changes {
		c := &b.Changes[i]
		switch {
		case c.Schema == nil:
		case clears(c):
			ids = append(ids, c.Schema.Table)
			resnapshotted[c.Schema.Table] = c.DDL.Kind == change.Resnapshotted
		case ddlKind(c, change.Resnapshotting):
			marked = append(marked, c.Schema.Table)
		}
	}
	if len(ids)+len(marked) == 0 || !s.tombstonesOn() {
		return nil, nil
	}
	if err := s.settle(ctx); err != nil {
		return nil, err
	}
	if err := s.markResnapshots(ctx, marked); err != nil {
		return nil, err
	}
	cl := &clearing{tables: map[change.TableID]*clearedTable{}}
	for _, id := range ids {
		if cl.tables[id] != nil {
			continue
		}
		ct := &clearedTable{}
		for _, topic := range s.topicsOf(id) {
			var before map[int32]int64
			if resnapshotted[id] {
				if before = s.marks[id][topic]; before == nil {
					s.log.Warn("upsert: re-snapshot of "+id.String()+" ended without its start mark: no key is tombstoned in "+topic,
						"table", id.String(), "topic", topic)
					before = map[int32]int64{} // nothing is known to be stale
				}
			}
			t, err := s.readBack(ctx, id, topic, before)
			if err != nil {
				return nil, err
			}
			ct.topics = append(ct.topics, t)
		}
		cl.tables[id] = ct
	}
	return cl, nil
}

// markResnapshots notes, for each table about to be snapshotted again, the end offsets of
// its topics' partitions; what the sink wrote before is visible (settle).
func (s *Sink) markResnapshots(ctx context.Context, ids []change.TableID) error {
	for _, id := range ids {
		if s.marks == nil {
			s.marks = resnapshotMarks{}
		}
		s.marks[id] = map[string]map[int32]int64{}
		for _, topic := range s.topicsOf(id) {
			ends, err := listOffsets(ctx, s.admin.ListEndOffsets, topic)
			if err != nil {
				return wrap("re-snapshot: end offsets", topic, id, nil, err)
			}
			s.marks[id][topic] = ends
		}
	}
	return nil
}

// settle makes every record written so far visible to a read_committed reader: with
// exactly-once it commits the open transaction, which ends on a source transaction (a DDL
// statement is a source transaction of its own); otherwise every record is acknowledged.
func (s *Sink) settle(ctx context.Context) error {
	if s.txn != nil {
		switch {
		case s.txn.partial:
			return wrap("truncate", "", tableNone, nil, errors.New("a statement that empties a table in the middle of a source transaction"))
		case s.txn.checkpoint == nil:
			return nil // nothing written since the last commit
		}
		return s.commit(ctx)
	}
	if err := s.flush(ctx); err != nil {
		return err
	}
	if err := s.cl.Flush(ctx); err != nil {
		return wrap("truncate: flush", "", tableNone, nil, err)
	}
	return s.failure()
}

// readBack reads topic and returns the live keys of table in it; with before, only those
// whose last record is before the offset before gives its partition.
func (s *Sink) readBack(ctx context.Context, table change.TableID, topic string, before map[int32]int64) (clearedTopic, error) {
	start := time.Now()
	out := clearedTopic{topic: topic}
	shared := s.cfg.SharedTopic == nil || s.cfg.SharedTopic(table, topic)
	if shared && !s.tableHeaders() {
		out.skipped = "other tables write to the topic too and its records carry no table headers " +
			"(sink.add-tableId-to-header-enabled is false), so the table's keys cannot be told apart"
		return out, nil
	}
	from, to, err := s.stableRange(ctx, topic)
	if err != nil || len(to) == 0 {
		return out, err
	}
	opts := append(s.cfg.Properties.ClientOpts(), s.cfg.ClientOpts...)
	parts := map[int32]kgo.Offset{}
	for p, end := range to {
		if end > from[p] {
			parts[p] = kgo.NewOffset().At(from[p])
		}
	}
	if len(parts) == 0 {
		return out, nil
	}
	cl, err := kgo.NewClient(append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		return out, wrap("truncate: read back", topic, table, nil, err)
	}
	defer cl.Close()
	type live struct {
		mine bool
		at   int64 // order of the last record
		part int32 // the last record's partition and offset
		off  int64
	}
	keys := map[string]live{}
	var order int64
	for len(parts) > 0 {
		pctx, cancel := context.WithTimeout(ctx, readBackStall)
		fs := cl.PollFetches(pctx)
		stalled := pctx.Err() != nil
		cancel()
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if stalled {
			return out, &Error{Op: "truncate: read back", Topic: topic, Table: table, Retryable: true,
				Err: fmt.Errorf("no record for %s while %d partitions were not read to their end", readBackStall, len(parts))}
		}
		var fetchErr error
		fs.EachError(func(_ string, _ int32, err error) { fetchErr = err })
		if fetchErr != nil {
			return out, wrap("truncate: read back", topic, table, nil, fetchErr)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if _, reading := parts[r.Partition]; !reading || r.Offset >= to[r.Partition] {
				return
			}
			if r.Offset >= to[r.Partition]-1 {
				delete(parts, r.Partition)
			}
			if r.Attrs.IsControl() {
				return
			}
			out.records++
			k := string(r.Key)
			if r.Value == nil {
				delete(keys, k)
				return
			}
			db, name, tagged := tableOf(r.Headers)
			mine := tagged && db == table.DB && name == table.Table || !tagged && !shared
			if tagged && !mine {
				delete(keys, k) // the key is another table's now
				return
			}
			order++
			keys[k] = live{mine: mine, at: order, part: r.Partition, off: r.Offset}
		})
	}
	type keyAt struct {
		key []byte
		at  int64
	}
	var mine []keyAt
	for k, l := range keys {
		switch {
		case !l.mine:
			out.foreign++
			continue
		case before != nil && l.off >= before[l.part]:
			continue // written since the mark: the table has it
		}
		mine = append(mine, keyAt{[]byte(k), l.at})
	}
	slices.SortFunc(mine, func(a, b keyAt) int { return cmp.Compare(a.at, b.at) })
	for _, k := range mine {
		out.keys = append(out.keys, k.key)
	}
	out.took = time.Since(start)
	return out, nil
}

// tombstonesOn reports whether statements that empty a table write tombstones: with
// Config.TruncateTombstones, for upsert records.
func (s *Sink) tombstonesOn() bool {
	_, upserts := s.enc.(*Encoder)
	return s.cfg.TruncateTombstones && upserts
}

// topicsOf returns the topics of a table's records.
func (s *Sink) topicsOf(table change.TableID) []string {
	if s.cfg.Targets == nil {
		return s.cfg.Topics(table)
	}
	var topics []string
	for _, t := range s.cfg.Targets(table) {
		if !slices.Contains(topics, t.Topic) {
			topics = append(topics, t.Topic)
		}
	}
	return topics
}

// tableHeaders reports whether the sink's records carry the table headers.
func (s *Sink) tableHeaders() bool {
	e, ok := s.enc.(*Encoder)
	return ok && e.opts.TableHeaders
}

// tableOf returns the table a record's headers name (schemaName, tableName).
func tableOf(hs []kgo.RecordHeader) (db, table string, ok bool) {
	var haveDB, haveTable bool
	for _, h := range hs {
		switch h.Key {
		case "schemaName":
			db, haveDB = string(h.Value), true
		case "tableName":
			table, haveTable = string(h.Value), true
		}
	}
	return db, table, haveDB && haveTable
}

// stableRange returns, per partition of topic, the start offset and the last stable
// offset, once that has reached the end offset (or after clearWait: a transaction of
// another producer is open, and its records are not read). A topic that does not exist
// has no partitions.
func (s *Sink) stableRange(ctx context.Context, topic string) (from, to map[int32]int64, err error) {
	ends, err := listOffsets(ctx, s.admin.ListEndOffsets, topic)
	if err != nil {
		return nil, nil, wrap("truncate: end offsets", topic, tableNone, nil, err)
	}
	if from, err = listOffsets(ctx, s.admin.ListStartOffsets, topic); err != nil {
		return nil, nil, wrap("truncate: start offsets", topic, tableNone, nil, err)
	}
	deadline := time.Now().Add(clearWait)
	for {
		if to, err = listOffsets(ctx, s.admin.ListCommittedOffsets, topic); err != nil {
			return nil, nil, wrap("truncate: stable offsets", topic, tableNone, nil, err)
		}
		behind := false
		for p, end := range ends {
			behind = behind || to[p] < end
		}
		if !behind {
			return from, to, nil
		}
		if time.Now().After(deadline) {
			s.log.Warn("upsert: a transaction of another producer is open on the topic: its records are not read back",
				"topic", topic)
			return from, to, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// listOffsets returns the offsets that list gives for each partition of topic; a topic that
// does not exist has none.
func listOffsets(ctx context.Context, list func(context.Context, ...string) (kadm.ListedOffsets, error), topic string) (map[int32]int64, error) {
	listed, err := list(ctx, topic)
	if err != nil {
		return nil, err
	}
	m := map[int32]int64{}
	var lerr error
	listed.Each(func(o kadm.ListedOffset) {
		switch {
		case errors.Is(o.Err, kerr.UnknownTopicOrPartition):
		case o.Err != nil:
			lerr = o.Err
		default:
			m[o.Partition] = o.Offset
		}
	})
	return m, lerr
}

// writeClear writes the tombstones of a statement that empties a table (or, without
// Config.TruncateTombstones, nothing), and logs what it did.
func (s *Sink) writeClear(ctx context.Context, cl *clearing, c *change.Change, commit time.Time) error {
	table := c.Schema.Table
	what, had := "TRUNCATE TABLE", "one per key the table had there"
	switch c.DDL.Kind {
	case change.Dropped:
		what = "DROP TABLE (or RENAME TABLE away)"
	case change.Resnapshotted:
		what, had = "re-snapshot", "one per key the table had there and no longer has (the snapshot did not write it)"
		defer delete(s.marks, table)
	}
	if !s.tombstonesOn() {
		why := "sink.truncate.tombstones is false; its topics keep the table's last records"
		if _, ok := s.enc.(*Encoder); !ok {
			why = "sink type kafka writes a change log, without tombstones"
		}
		s.log.Info("upsert: "+what+" of "+table.String()+": nothing written ("+why+")",
			"table", table.String(), "topics", s.topicsOf(table), "statement", c.DDL.Statement, "position", c.DDL.Position)
		return nil
	}
	ct := cl.tables[table]
	if ct == nil {
		return nil
	}
	hs := s.enc.(*Encoder).headers(table)
	for _, t := range ct.topics {
		if t.skipped != "" {
			s.log.Warn("upsert: "+what+" of "+table.String()+": nothing written to "+t.topic+": "+t.skipped+
				"; the topic keeps the table's last records. Set sink.add-tableId-to-header-enabled: true (from then on), "+
				"or route the table to a topic of its own",
				"table", table.String(), "topic", t.topic, "statement", c.DDL.Statement)
			continue
		}
		if len(t.keys) > 0 {
			if err := s.topics.ensure(ctx, []string{t.topic}); err != nil {
				return err
			}
		}
		for _, k := range t.keys {
			rec := &kgo.Record{Topic: t.topic, Key: k, Headers: hs, Timestamp: commit}
			if err := s.emit(ctx, outRecord{rec: rec, table: table}); err != nil {
				return err
			}
		}
		s.log.Info(fmt.Sprintf("upsert: %s of %s: %d tombstones written to %s, %s (read back %d records in %s)",
			what, table, len(t.keys), t.topic, had, t.records, t.took.Round(time.Millisecond)),
			"table", table.String(), "topic", t.topic, "statement", c.DDL.Statement, "position", c.DDL.Position)
		if t.foreign > 0 {
			s.log.Warn(fmt.Sprintf("upsert: %s of %s: %d keys of %s carry no table headers and other tables write to the topic: "+
				"they cannot be told apart and are left as they are", what, table, t.foreign, t.topic),
				"table", table.String(), "topic", t.topic)
		}
	}
	return nil
}
