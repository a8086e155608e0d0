package chaos

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// VersionColumn is the column every workload table carries: 1 when a row is inserted, one more
// on every change of the row (a primary-key change included). Per key, the versions seen in a
// topic tell duplicates (a version seen again, or an older one after a newer one) and lost
// changes (a version never seen) apart from the legitimate effects of the snapshot, which
// only shows the state of a row when its chunk is read.
const VersionColumn = "version"

// tombstone stands for a tombstone in a key's version history.
const tombstone = -1

// Checker consumes a pipeline's output topics from their start and keeps, for every key, the
// versions of its records in order and its last value. [Checker.Sync] reads on from where the
// previous call stopped, up to the end the topics have when it is called. The checker shares
// nothing with ingest: it parses the records and renders the tables itself.
type Checker struct {
	cl            *kgo.Client
	adm           *kadm.Client
	readCommitted bool
	topics        []string

	next     map[string]map[int32]int64 // per topic and partition: the next offset to read
	keys     map[string]map[string]*history
	records  int64
	bad      Examples // records that break the contract on their own
	baseline map[string]*baseline
}

// history is what a topic holds for one key.
type history struct {
	partition int32
	split     bool      // records of the key were seen in more than one partition
	versions  []int64   // per record: the row's version, or tombstone
	mark      int       // records read before the baseline
	last      []Field   // the fields of the last value; nil after a tombstone
	lastRaw   []byte    // the last value as written
	lastAt    time.Time // the last record's timestamp
}

// baseline is the state of a table when the snapshot was complete and stored: from then on,
// every change must reach the topic.
type baseline struct {
	versions map[string]int64 // key JSON → version
	maxID    int64            // ids above it were created after the baseline
}

// NewChecker returns a checker of topics on the broker at addr; readCommitted reads only
// committed records (exactly-once).
func NewChecker(addr string, topics []string, readCommitted bool) (*Checker, error) {
	iso := kgo.ReadUncommitted()
	if readCommitted {
		iso = kgo.ReadCommitted()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(iso),
		kgo.KeepControlRecords(), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("checker: kafka client: %w", err)
	}
	c := &Checker{cl: cl, adm: kadm.NewClient(cl), readCommitted: readCommitted, topics: topics,
		next: map[string]map[int32]int64{}, keys: map[string]map[string]*history{}, baseline: map[string]*baseline{}}
	for _, t := range topics {
		c.next[t] = map[int32]int64{}
		c.keys[t] = map[string]*history{}
	}
	return c, nil
}

// Close releases the client.
func (c *Checker) Close() { c.cl.Close() }

// Records returns the number of data records read so far (control records not counted).
func (c *Checker) Records() int64 { return c.records }

// Sync reads every topic up to its end now: the high watermark, or with read_committed the
// last stable offset (records of a transaction still open are not readable yet).
func (c *Checker) Sync(ctx context.Context) error {
	ends, err := c.ends(ctx)
	if err != nil {
		return err
	}
	var lastErr error
	for !c.reached(ends) {
		fs := c.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("checker: read up to %v, at %v (last fetch error: %v): %w", ends, c.next, lastErr, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { lastErr = fmt.Errorf("%s/%d: %w", topic, p, err) })
		fs.EachRecord(c.add)
	}
	return nil
}

// ends returns the offset each partition must be read to.
func (c *Checker) ends(ctx context.Context) (map[string]map[int32]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	list := c.adm.ListEndOffsets
	if c.readCommitted {
		list = c.adm.ListCommittedOffsets
	}
	listed, err := list(ctx, c.topics...)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("checker: end offsets: %w", err)
	}
	ends := map[string]map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) {
		if ends[o.Topic] == nil {
			ends[o.Topic] = map[int32]int64{}
		}
		ends[o.Topic][o.Partition] = o.Offset
	})
	return ends, nil
}

func (c *Checker) reached(ends map[string]map[int32]int64) bool {
	for topic, ps := range ends {
		for p, end := range ps {
			if c.next[topic][p] < end {
				return false
			}
		}
	}
	return true
}

// add takes one record in.
func (c *Checker) add(r *kgo.Record) {
	c.next[r.Topic][r.Partition] = r.Offset + 1
	if r.Attrs.IsControl() {
		return
	}
	c.records++
	where := fmt.Sprintf("%s/%d@%d", r.Topic, r.Partition, r.Offset)
	h := c.keys[r.Topic][string(r.Key)]
	if h == nil {
		h = &history{partition: r.Partition}
		c.keys[r.Topic][string(r.Key)] = h
	}
	if h.partition != r.Partition {
		h.split = true
	}
	h.lastAt = r.Timestamp
	if r.Value == nil {
		h.versions = append(h.versions, tombstone)
		h.last, h.lastRaw = nil, nil
		return
	}
	fields, version, err := parseRecord(r.Key, r.Value)
	if err != nil {
		c.badRecord(fmt.Sprintf("%s key %s: %v: %s", where, r.Key, err, r.Value))
		return
	}
	h.versions = append(h.versions, version)
	h.last, h.lastRaw = fields, r.Value
}

func (c *Checker) badRecord(s string) { c.bad.add(s) }

// parseRecord parses a record's value, checks that it holds the key's fields with the same
// bytes, and returns its fields and version.
func parseRecord(key, value []byte) ([]Field, int64, error) {
	kf, err := parseObject(key)
	if err != nil {
		return nil, 0, fmt.Errorf("key: %w", err)
	}
	fields, err := parseObject(value)
	if err != nil {
		return nil, 0, fmt.Errorf("value: %w", err)
	}
	for _, k := range kf {
		f, ok := fieldOf(fields, k.Name)
		if !ok || !bytes.Equal(f.Value, k.Value) {
			return nil, 0, fmt.Errorf("value does not carry the key's %s %s", k.Name, k.Value)
		}
	}
	vf, ok := fieldOf(fields, VersionColumn)
	if !ok {
		return nil, 0, fmt.Errorf("no %s field", VersionColumn)
	}
	version, err := strconv.ParseInt(string(vf.Value), 10, 64)
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w", VersionColumn, vf.Value, err)
	}
	return fields, version, nil
}

// parseObject parses a JSON object into its fields, in order, each value as its exact bytes.
func parseObject(b []byte) ([]Field, error) {
	if !json.Valid(b) {
		return nil, errors.New("not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var fields []Field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if _, dup := fieldOf(fields, name); dup {
			return nil, fmt.Errorf("field %s twice", name)
		}
		fields = append(fields, Field{Name: name, Value: raw})
	}
	return fields, nil
}

// Baseline records the version of every row of the tables, and the largest id, now, and
// reads the topics up to their end. Call it once the snapshot is complete and its end stored
// (no later run reads a chunk again): from then on every change must reach the topics, and
// [Checker.Compare] reports those that did not as lost; it also counts apart the duplicates
// among the records read after the baseline. The tables must have an integer primary key
// named id.
func (c *Checker) Baseline(ctx context.Context, conn *sql.DB, db string, tables []string) error {
	if err := c.baseVersions(ctx, conn, db, tables); err != nil {
		return err
	}
	if err := c.Sync(ctx); err != nil {
		return err
	}
	for _, keys := range c.keys {
		for _, h := range keys {
			h.mark = len(h.versions)
		}
	}
	return nil
}

func (c *Checker) baseVersions(ctx context.Context, conn *sql.DB, db string, tables []string) error {
	for _, table := range tables {
		b := &baseline{versions: map[string]int64{}}
		q := fmt.Sprintf("SELECT id, %s FROM %s.%s", VersionColumn, quoteIdent(db), quoteIdent(table))
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			return fmt.Errorf("checker: baseline: %w", err)
		}
		for rows.Next() {
			var id, v int64
			if err := rows.Scan(&id, &v); err != nil {
				rows.Close()
				return fmt.Errorf("checker: baseline: %w", err)
			}
			b.versions[idKey(id)] = v
			b.maxID = max(b.maxID, id)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("checker: baseline: %w", err)
		}
		c.baseline[db+"."+table] = b
	}
	return nil
}

func idKey(id int64) string { return `{"id":` + strconv.FormatInt(id, 10) + `}` }

// keyID returns the id of a key {"id":N}.
func keyID(key string) (int64, bool) {
	s, ok := strings.CutPrefix(key, `{"id":`)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(strings.TrimSuffix(s, "}"), 10, 64)
	return id, err == nil
}

// CompareOptions tune [Checker.Compare].
type CompareOptions struct {
	// Optional reports the columns that may be missing from a record or from the table:
	// those that DDL adds and drops (a record carries the columns of the moment it was
	// captured).
	Optional func(column string) bool
}

// Compare reads the tables (topic <db>.<table> each) and compares them with what the checker
// has read: each live key's last value must equal its row rendered by the wire contract, and
// every row must have its key. It also analyses each key's versions.
func (c *Checker) Compare(ctx context.Context, conn *sql.DB, db string, tables []string, opts CompareOptions) (*Report, error) {
	rep := &Report{Records: c.records, Bad: c.bad}
	for _, table := range tables {
		t, err := ReadTable(ctx, conn, db, table)
		if err != nil {
			return nil, err
		}
		c.compareTable(rep, db+"."+table, t, opts)
	}
	return rep, nil
}

func (c *Checker) compareTable(rep *Report, topic string, t *Table, opts CompareOptions) {
	keys := c.keys[topic]
	rep.Rows += len(t.Rows)
	for k, row := range t.Rows {
		h := keys[k]
		switch {
		case h == nil || h.last == nil:
			rep.Missing.add(fmt.Sprintf("%s key %s: in the table (%s), not in the topic (history %v)", topic, k, row.Value(), versionsOf(h)))
		default:
			if d := diffRow(row, h, opts.Optional); d != "" {
				rep.Different.add(fmt.Sprintf("%s key %s: %s", topic, k, d))
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		h := keys[k]
		rep.Keys++
		if _, ok := t.Rows[k]; !ok && h.last != nil {
			rep.Extra.add(fmt.Sprintf("%s key %s: in the topic (%s), not in the table (history %v)", topic, k, h.lastRaw, h.versions))
		}
		if h.split {
			rep.Split.add(fmt.Sprintf("%s key %s: records in more than one partition", topic, k))
		}
		c.analyse(rep, topic, k, h, t)
	}
}

func versionsOf(h *history) []int64 {
	if h == nil {
		return nil
	}
	return h.versions
}

// diffRow compares a row with a key's last value; it returns "" when they agree. Columns that
// opts.Optional accepts may be absent on either side; every other column must be present
// on both, in the table's order, with the same bytes.
func diffRow(row Row, h *history, optional func(string) bool) string {
	want := row.Value()
	if bytes.Equal(want, h.lastRaw) {
		return ""
	}
	if optional == nil {
		optional = func(string) bool { return false }
	}
	var common []string
	for _, f := range row.Fields {
		got, ok := fieldOf(h.last, f.Name)
		switch {
		case !ok && !optional(f.Name):
			return fmt.Sprintf("column %s missing from the record: table %s, topic %s", f.Name, want, h.lastRaw)
		case ok && !bytes.Equal(got.Value, f.Value):
			return fmt.Sprintf("column %s: table %s, topic %s (table row %s, record %s)", f.Name, f.Value, got.Value, want, h.lastRaw)
		case ok:
			common = append(common, f.Name)
		}
	}
	var order []string
	for _, f := range h.last {
		if _, ok := fieldOf(row.Fields, f.Name); ok {
			order = append(order, f.Name)
		} else if !optional(f.Name) {
			return fmt.Sprintf("column %s in the record, not in the table: table %s, topic %s", f.Name, want, h.lastRaw)
		}
	}
	if !slices.Equal(order, common) {
		return fmt.Sprintf("columns in another order: table %s, topic %s", want, h.lastRaw)
	}
	return ""
}

// analyse checks one key's version history: duplicates (a version not above every earlier
// one, a tombstone after a tombstone, a value after a tombstone: ids are never used again),
// and changes lost after the baseline.
func (c *Checker) analyse(rep *Report, topic, key string, h *history, t *Table) {
	var maxSeen int64
	dead := false
	for i, v := range h.versions {
		switch {
		case v == tombstone && dead:
			rep.duplicate(topic, key, h, i, "tombstone after tombstone")
		case v == tombstone:
			dead = true
		case dead:
			rep.duplicate(topic, key, h, i, "value after its tombstone")
			dead = false
		case v <= maxSeen:
			rep.duplicate(topic, key, h, i, "version not above the earlier ones")
		}
		maxSeen = max(maxSeen, v)
	}
	if len(h.versions) > 0 && h.versions[0] == tombstone {
		rep.OrphanTombstones++
	}
	c.lost(rep, topic, key, h, t)
}

// lost reports the versions after the baseline that the key's records do not show.
func (c *Checker) lost(rep *Report, topic, key string, h *history, t *Table) {
	b := c.baseline[topic]
	if b == nil {
		return
	}
	seen := map[int64]bool{}
	var lo, hi int64 = -1, 0
	for _, v := range h.versions {
		if v == tombstone {
			continue
		}
		seen[v] = true
		if lo < 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	if row, ok := t.Rows[key]; ok {
		if f, ok := fieldOf(row.Fields, VersionColumn); ok {
			final, _ := strconv.ParseInt(string(f.Value), 10, 64)
			hi = max(hi, final)
		}
	}
	from := int64(0)
	if v, ok := b.versions[key]; ok {
		from = v + 1 // present at the baseline: every later version must show
	} else if id, ok := keyID(key); ok && id > b.maxID && lo > 0 {
		from = lo // created after the baseline: every version from its first record must show
	} else {
		return // gone before the baseline: its history may hold snapshot jumps
	}
	rep.KeysChecked++
	var missing []int64
	for v := from; v <= hi; v++ {
		if !seen[v] {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		rep.LostChanges += len(missing)
		rep.Lost.add(fmt.Sprintf("%s key %s: versions %v never written (baseline from %d, history %v)", topic, key, missing, from, h.versions))
	}
}

// Examples counts problems of one kind and keeps the first few.
type Examples struct {
	N    int
	List []string
}

// maxExamples bounds the examples kept per kind.
const maxExamples = 10

func (e *Examples) add(s string) {
	e.N++
	if len(e.List) < maxExamples {
		e.List = append(e.List, s)
	}
}

// Report is the outcome of a comparison.
type Report struct {
	// Rows and Keys count the tables' rows and the topics' keys; Records the records read.
	Rows, Keys int
	Records    int64
	// Missing, Extra and Different are keys whose final state is wrong.
	Missing, Extra, Different Examples
	// Split are keys whose records are in more than one partition.
	Split Examples
	// Duplicates are records that repeat or go back in their key's history;
	// DuplicatesAfterBaseline those of them read after the baseline.
	Duplicates, DuplicatesAfterBaseline Examples
	// Lost are keys with versions after the baseline that never reached the topic;
	// LostChanges counts the versions, KeysChecked the keys whose history was checked.
	Lost                     Examples
	LostChanges, KeysChecked int
	// OrphanTombstones counts keys whose first record is a tombstone (harmless: the key
	// was not visible to a consumer before).
	OrphanTombstones int
	// Bad are records that break the contract on their own (unparsable, key not in value).
	Bad Examples
}

func (r *Report) duplicate(topic, key string, h *history, i int, what string) {
	s := fmt.Sprintf("%s key %s: record %d: %s (history %v, baseline after record %d)", topic, key, i, what, h.versions, h.mark)
	r.Duplicates.add(s)
	if i >= h.mark {
		r.DuplicatesAfterBaseline.add(s)
	}
}

// Duplicates says which duplicates are problems.
type Duplicates int

const (
	// AllowDuplicates: at-least-once after crashes.
	AllowDuplicates Duplicates = iota
	// NoDuplicatesAfterBaseline: at-least-once with only clean stops after the baseline.
	NoDuplicatesAfterBaseline
	// NoDuplicates: exactly-once.
	NoDuplicates
)

// Err returns the problems of the report as an error, or nil; dups says which duplicates are
// problems.
func (r *Report) Err(dups Duplicates) error {
	var problems []string
	section := func(name string, e Examples) {
		if e.N > 0 {
			problems = append(problems, fmt.Sprintf("%d %s, e.g.:\n  %s", e.N, name, strings.Join(e.List, "\n  ")))
		}
	}
	section("keys missing from the topic", r.Missing)
	section("keys in the topic, not in the table", r.Extra)
	section("keys with a different value", r.Different)
	section("keys in more than one partition", r.Split)
	section("keys with lost changes", r.Lost)
	section("records breaking the contract", r.Bad)
	switch dups {
	case NoDuplicates:
		section("duplicates", r.Duplicates)
	case NoDuplicatesAfterBaseline:
		section("duplicates after the baseline", r.DuplicatesAfterBaseline)
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("checker: %s\n%s", r, strings.Join(problems, "\n"))
}

// Equal reports whether the final state matched (nothing missing, extra or different).
func (r *Report) Equal() bool { return r.Missing.N == 0 && r.Extra.N == 0 && r.Different.N == 0 }

// String summarises the report.
func (r *Report) String() string {
	return fmt.Sprintf("%d rows, %d keys, %d records; missing %d, extra %d, different %d; duplicates %d (%d after the baseline); lost changes %d (%d keys checked); orphan tombstones %d",
		r.Rows, r.Keys, r.Records, r.Missing.N, r.Extra.N, r.Different.N, r.Duplicates.N, r.DuplicatesAfterBaseline.N, r.LostChanges,
		r.KeysChecked, r.OrphanTombstones)
}
