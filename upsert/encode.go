package upsert

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ingestkit/ingest/change"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TimestampStandard is the option json.timestamp-format.standard.
type TimestampStandard uint8

// The timestamp standards of OUTPUT.md.
const (
	// TimestampSQL writes "2024-02-29 13:14:15.12" (the default).
	TimestampSQL TimestampStandard = iota
	// TimestampISO8601 writes "2024-02-29T13:14:15.12"; TIME and DATE are unchanged.
	TimestampISO8601
)

// EncodeOptions are the options that change the bytes the sink writes.
type EncodeOptions struct {
	// Timestamps is json.timestamp-format.standard (default TimestampSQL).
	Timestamps TimestampStandard
	// JSONAsObject is json.encode.json-column-as: object; JSON columns are embedded as
	// JSON values instead of strings holding the document.
	JSONAsObject bool
	// DecimalAsString is json.encode.decimal-as: string; DECIMAL columns are written as
	// strings holding the exact decimal text instead of numbers.
	DecimalAsString bool
	// TimeAsMicros is json.encode.time-as: micros; TIME columns are written as the signed
	// number of microseconds instead of the "[-]HH:mm:ss[.f]" text.
	TimeAsMicros bool
	// TableHeaders is sink.add-tableId-to-header-enabled: every record carries the headers
	// namespace (empty), schemaName and tableName, in that order.
	TableHeaders bool
	// CustomHeaders are the sink.custom-header entries (see [ParseCustomHeaders]), written
	// after the table headers, in order.
	CustomHeaders []Header
}

// Message is one encoded record: everything of a Kafka record but its topic and partition.
type Message struct {
	// Key is the PK JSON, never nil.
	Key []byte
	// Value is the row JSON, or nil for a tombstone.
	Value []byte
	// Headers are shared between the messages of a table and must not be modified.
	Headers []kgo.RecordHeader
	// Timestamp is the source commit time.
	Timestamp time.Time

	// slabs are its holds on the pooled slabs of Key and Value; see [slab].
	slabs slabHolds
}

// Encoder turns changes into messages as OUTPUT.md specifies, byte for byte. It appends into
// large shared slabs instead of allocating per record, and caches the quoted column names
// and the headers of each table's current schema.
//
// An Encoder is not safe for concurrent use. The bytes of the messages it returns stay
// valid and unchanged after later calls: slabs are never reused, only replaced, unless
// the encoder has a pool (the sink's), whose messages must be released (see [slab]).
type Encoder struct {
	opts EncodeOptions
	// slab is where the next key or value is appended; with a pool it is cur's buffer
	// until an append outgrows it.
	slab   []byte
	pool   *slabPool
	cur    *slab
	tables map[change.TableID]*tableCache
	last   *tableCache
}

// tableCache holds the pre-encoded parts of one schema.
type tableCache struct {
	schema  *change.Schema
	version uint64
	// names[i] is `{"col":` for the first column and `,"col":` for the others.
	names [][]byte
	// keyNames[j] is the same for the j-th key column, in key order.
	keyNames [][]byte
	headers  []kgo.RecordHeader
}

const slabSize = 64 << 10

// NewEncoder returns an Encoder with the given options.
func NewEncoder(opts EncodeOptions) *Encoder {
	return &Encoder{opts: opts, tables: make(map[change.TableID]*tableCache)}
}

// Encode appends to dst the messages for one change, committed at commit, and returns the
// extended slice: one upsert for an insert or an update, a tombstone for a delete, a
// tombstone of the old key followed by an upsert of the new one for an update that changes
// the key, and nothing for a schema change.
func (e *Encoder) Encode(dst []Message, c *change.Change, commit time.Time) ([]Message, error) {
	if c.Op == change.SchemaChange {
		return dst, nil
	}
	if c.Schema == nil || len(c.Schema.Key) == 0 {
		return dst, errors.New("upsert: change without a schema or a key")
	}
	tc, err := e.cache(c.Schema)
	if err != nil {
		return dst, err
	}
	switch c.Op {
	case change.Insert:
		return e.upsert(dst, tc, c.After, commit)
	case change.Update:
		return e.update(dst, tc, c, commit)
	case change.Delete:
		return e.tombstone(dst, tc, c.Before, commit)
	}
	return dst, fmt.Errorf("upsert: %s: unknown op %v", c.Schema.Table, c.Op)
}

func (e *Encoder) update(dst []Message, tc *tableCache, c *change.Change, commit time.Time) ([]Message, error) {
	if c.Before == nil {
		return e.upsert(dst, tc, c.After, commit)
	}
	n := len(dst)
	dst, err := e.upsert(dst, tc, c.After, commit)
	if err != nil {
		return dst, err
	}
	oldKey, err := e.key(tc, c.Before)
	if err != nil {
		dst[n].slabs.release()
		return dst[:n], err
	}
	if string(oldKey.b) == string(dst[n].Key) {
		oldKey.slab.release()
		return dst, nil
	}
	// The key changed: the old key's tombstone goes first.
	up := dst[n]
	dst[n] = Message{Key: oldKey.b, Headers: tc.headers, Timestamp: commit, slabs: slabHolds{oldKey.slab}}
	return append(dst, up), nil
}

func (e *Encoder) upsert(dst []Message, tc *tableCache, row change.Row, commit time.Time) ([]Message, error) {
	key, err := e.key(tc, row)
	if err != nil {
		return dst, err
	}
	value, err := e.value(tc, row)
	if err != nil {
		key.slab.release()
		return dst, err
	}
	return append(dst, Message{Key: key.b, Value: value.b, Headers: tc.headers, Timestamp: commit,
		slabs: slabHolds{key.slab, value.slab}}), nil
}

func (e *Encoder) tombstone(dst []Message, tc *tableCache, row change.Row, commit time.Time) ([]Message, error) {
	key, err := e.key(tc, row)
	if err != nil {
		return dst, err
	}
	return append(dst, Message{Key: key.b, Headers: tc.headers, Timestamp: commit, slabs: slabHolds{key.slab}}), nil
}

// key encodes the PK JSON of row.
func (e *Encoder) key(tc *tableCache, row change.Row) (piece, error) {
	if len(row) != len(tc.names) {
		return piece{}, e.rowError(tc, row)
	}
	start := e.begin()
	var err error
	for j, i := range tc.schema.Key {
		e.slab = append(e.slab, tc.keyNames[j]...)
		if e.slab, err = e.appendValue(e.slab, row[i]); err != nil {
			return piece{}, e.columnError(tc, i, err)
		}
	}
	e.slab = append(e.slab, '}')
	return e.end(start), nil
}

// value encodes the row JSON of row.
func (e *Encoder) value(tc *tableCache, row change.Row) (piece, error) {
	if len(row) != len(tc.names) {
		return piece{}, e.rowError(tc, row)
	}
	start := e.begin()
	var err error
	for i, v := range row {
		e.slab = append(e.slab, tc.names[i]...)
		if e.slab, err = e.appendValue(e.slab, v); err != nil {
			return piece{}, e.columnError(tc, i, err)
		}
	}
	if len(row) == 0 {
		e.slab = append(e.slab, '{')
	}
	e.slab = append(e.slab, '}')
	return e.end(start), nil
}

func (e *Encoder) rowError(tc *tableCache, row change.Row) error {
	if row == nil {
		return fmt.Errorf("upsert: %s: change without the row image it needs", tc.schema.Table)
	}
	return fmt.Errorf("upsert: %s: row has %d values, schema has %d columns", tc.schema.Table, len(row), len(tc.names))
}

func (e *Encoder) columnError(tc *tableCache, i int, err error) error {
	return fmt.Errorf("upsert: %s column %s: %w", tc.schema.Table, tc.schema.Columns[i].Name, err)
}

// begin makes sure the slab has room for a typical record and returns where it starts.
// A record that outgrows the slab is moved by append, so the slab is replaced, not reused:
// earlier records keep their bytes.
func (e *Encoder) begin() int {
	if cap(e.slab)-len(e.slab) < 1024 {
		e.nextSlab()
	}
	return len(e.slab)
}

// nextSlab starts a new slab: a pooled one, letting go of the current, or a fresh one.
func (e *Encoder) nextSlab() {
	if e.pool == nil {
		e.slab = make([]byte, 0, slabSize)
		return
	}
	e.cur.release()
	e.cur = e.pool.get()
	e.slab = e.cur.buf
}

// end returns the bytes written since start, with the capacity clipped so that no append
// to the result can touch the slab, and the pooled slab they lie in, held for them.
func (e *Encoder) end(start int) piece {
	p := piece{b: e.slab[start:len(e.slab):len(e.slab)]}
	if e.cur != nil {
		if cap(e.slab) != cap(e.cur.buf) {
			// An append outgrew the pooled slab: the bytes are in an array of their own,
			// left to the garbage collector, and the next record starts a pooled slab.
			e.cur.release()
			e.cur = nil
			e.slab = nil
			return p
		}
		p.slab = e.cur
		p.slab.hold()
	}
	if cap(e.slab)-len(e.slab) < 1024 {
		e.slab = nil // the next record starts a fresh slab
	}
	return p
}

// appendValue appends the JSON of one column value.
func (e *Encoder) appendValue(dst []byte, v change.Value) ([]byte, error) {
	switch v.Kind {
	case change.Null:
		return append(dst, "null"...), nil
	case change.Bool:
		return strconv.AppendBool(dst, v.Num != 0), nil
	case change.Int:
		return strconv.AppendInt(dst, int64(v.Num), 10), nil
	case change.Uint:
		return strconv.AppendUint(dst, v.Num, 10), nil
	case change.Float32:
		return appendFloat(dst, float64(float32(v.Float())), 32), nil
	case change.Float64:
		return appendFloat(dst, v.Float(), 64), nil
	case change.Decimal:
		return e.appendDecimal(dst, v.Bytes)
	case change.String, change.Geometry:
		return appendString(dst, v.Bytes), nil
	case change.Bytes:
		return appendBase64(dst, v.Bytes), nil
	case change.JSON:
		return e.appendJSON(dst, v.Bytes)
	case change.Date, change.DateTime, change.Timestamp, change.Time:
		return e.appendTemporal(dst, v), nil
	}
	return dst, fmt.Errorf("unknown value kind %v", v.Kind)
}

func (e *Encoder) appendDecimal(dst, text []byte) ([]byte, error) {
	if !validDecimal(text) {
		return dst, fmt.Errorf("invalid decimal text %q", truncate(text))
	}
	if e.opts.DecimalAsString {
		dst = append(dst, '"')
		dst = append(dst, text...)
		return append(dst, '"'), nil
	}
	return append(dst, text...), nil
}

// validDecimal reports whether text is -?(0|[1-9][0-9]*)(\.[0-9]+)?, which is both how
// MySQL prints a DECIMAL and a valid JSON number.
func validDecimal(text []byte) bool {
	i := 0
	if i < len(text) && text[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(text) && text[i] >= '0' && text[i] <= '9' {
			i++
			n++
		}
		return n
	}
	first := i
	n := digits()
	if n == 0 || (n > 1 && text[first] == '0') {
		return false
	}
	if i < len(text) && text[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	return i == len(text)
}

func (e *Encoder) appendJSON(dst, doc []byte) ([]byte, error) {
	if !e.opts.JSONAsObject {
		return appendString(dst, doc), nil
	}
	if !json.Valid(doc) {
		return dst, fmt.Errorf("invalid JSON document %q", truncate(doc))
	}
	return append(dst, doc...), nil
}

func truncate(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

func (e *Encoder) appendTemporal(dst []byte, v change.Value) []byte {
	if v.Kind == change.Time && e.opts.TimeAsMicros {
		return strconv.AppendInt(dst, v.Micros(), 10)
	}
	return appendTemporal(dst, v, e.opts.Timestamps)
}

// appendTemporal appends a DATE, DATETIME, TIMESTAMP or TIME value as a JSON string in the
// given standard (docs/output.md).
func appendTemporal(dst []byte, v change.Value, std TimestampStandard) []byte {
	sep := byte(' ')
	if std == TimestampISO8601 {
		sep = 'T'
	}
	dst = append(dst, '"')
	switch v.Kind {
	case change.Date:
		y, mo, d := v.Date()
		dst = appendDate(dst, y, mo, d)
	case change.DateTime:
		y, mo, d := v.Date()
		h, mi, s, us := v.Clock()
		dst = appendDate(dst, y, mo, d)
		dst = append(dst, sep)
		dst = appendClock(dst, uint64(h), mi, s, us)
	case change.Timestamp:
		t := time.UnixMicro(v.Micros()).UTC()
		y, mo, d := t.Date()
		h, mi, s := t.Clock()
		dst = appendDate(dst, y, int(mo), d)
		dst = append(dst, sep)
		dst = appendClock(dst, uint64(h), mi, s, t.Nanosecond()/1000)
		dst = append(dst, 'Z')
	case change.Time:
		dst = appendTimeOfDay(dst, v.Micros())
	}
	return append(dst, '"')
}

// cache returns the pre-encoded parts of schema, building them when the table is new or
// its schema changed (another pointer or version). One entry is kept per table.
func (e *Encoder) cache(s *change.Schema) (*tableCache, error) {
	if tc := e.last; tc != nil && tc.schema == s && tc.version == s.Version {
		return tc, nil
	}
	tc := e.tables[s.Table]
	if tc == nil || tc.schema != s || tc.version != s.Version {
		var err error
		if tc, err = e.build(s); err != nil {
			return nil, err
		}
		e.tables[s.Table] = tc
	}
	e.last = tc
	return tc, nil
}

func (e *Encoder) build(s *change.Schema) (*tableCache, error) {
	tc := &tableCache{schema: s, version: s.Version, names: make([][]byte, len(s.Columns))}
	for i, c := range s.Columns {
		tc.names[i] = appendName(nil, i == 0, c.Name)
	}
	for j, i := range s.Key {
		if i < 0 || i >= len(s.Columns) {
			return nil, fmt.Errorf("upsert: %s: key column index %d out of range", s.Table, i)
		}
		tc.keyNames = append(tc.keyNames, appendName(nil, j == 0, s.Columns[i].Name))
	}
	tc.headers = e.headers(s.Table)
	return tc, nil
}

func appendName(dst []byte, first bool, name string) []byte {
	if first {
		dst = append(dst, '{')
	} else {
		dst = append(dst, ',')
	}
	dst = appendString(dst, []byte(name))
	return append(dst, ':')
}

// headers returns the headers every record of table carries.
func (e *Encoder) headers(table change.TableID) []kgo.RecordHeader {
	var hs []kgo.RecordHeader
	if e.opts.TableHeaders {
		hs = append(hs,
			kgo.RecordHeader{Key: "namespace", Value: []byte{}}, // empty, not null
			kgo.RecordHeader{Key: "schemaName", Value: []byte(table.DB)},
			kgo.RecordHeader{Key: "tableName", Value: []byte(table.Table)},
		)
	}
	for _, h := range e.opts.CustomHeaders {
		hs = append(hs, kgo.RecordHeader{Key: h.Key, Value: []byte(h.Value)})
	}
	return hs[:len(hs):len(hs)]
}
