package upsert

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ingestkit/ingest/change"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ValueFormat is value.format of type kafka.
type ValueFormat uint8

// The change-event formats of Flink CDC's Kafka sink.
const (
	// DebeziumJSON: {"before":…,"after":…,"op":"c|u|d","source":{"db":…,"table":…}}.
	DebeziumJSON ValueFormat = iota
	// CanalJSON: {"old":[…]|null,"data":[…],"type":"INSERT|UPDATE|DELETE","database":…,
	// "table":…,"pkNames":[…]}.
	CanalJSON
)

// KeyFormat is key.format of type kafka.
type KeyFormat uint8

// The key formats: the table id and the primary key, as JSON or CSV.
const (
	KeyJSON KeyFormat = iota // {"TableId":"db.t","id":1}
	KeyCSV                   // "db.t",1 (Jackson's CSV quoting: see appendCSVString)
)

// JSONFormat are the options of one of Flink's JSON formats (json.*, debezium-json.*,
// canal-json.*).
type JSONFormat struct {
	// Timestamps is <format>.timestamp-format.standard.
	Timestamps TimestampStandard
	// DecimalPlain is <format>.encode.decimal-as-plain-number: DECIMAL without exponent
	// notation.
	DecimalPlain bool
	// IgnoreNulls is <format>.encode.ignore-null-fields: fields whose value is null are left
	// out, "before":null and "old":null included.
	IgnoreNulls bool
	// TimeMicros is json.encode.time-as: micros; TIME columns are written as the signed
	// number of microseconds, the fraction and values outside a day kept.
	TimeMicros bool
}

// EventOptions configure an [EventEncoder].
type EventOptions struct {
	Value ValueFormat
	Key   KeyFormat
	// KeyJSON are the json.* options (key.format json); ValueJSON the options of the value
	// format.
	KeyJSON, ValueJSON JSONFormat
	// TableHeaders and CustomHeaders are as in [EncodeOptions]; the table headers name the
	// target's table id (the routed one), as Flink CDC's do.
	TableHeaders  bool
	CustomHeaders []Header
	// IncludeSchema is debezium-json.include-schema.enabled: each debezium-json value is
	// {"schema":<the Kafka Connect schema of before and after>,"payload":<the event>}.
	IncludeSchema bool
	// Comments is the source's include-comments.enabled: the schema part gives each
	// column's comment as its doc.
	Comments bool
	// TinyInt1AsNumber is the source's treat-tinyint1-as-boolean.enabled: false, under which
	// TINYINT(1) columns hold numbers (int16 in the schema part).
	TinyInt1AsNumber bool
}

// EventEncoder writes the change events of Flink CDC 3.6's Kafka pipeline sink (type
// kafka), byte for byte: one record per change, the key {"TableId":…, primary key} and the
// value a debezium-json or canal-json envelope. Snapshot rows are inserts; an update is one
// event with both images; an update that changes the primary key is a delete of the old
// row followed by an insert of the new one (what Flink CDC's MySQL source emits); a delete
// is an event, not a tombstone. Column values are rendered as Flink's JSON format renders
// Flink CDC's types (docs/output.md lists where that differs from the upsert rows).
//
// An EventEncoder is not safe for concurrent use; the messages it returns own their bytes.
type EventEncoder struct {
	opts    EventOptions
	tables  map[change.TableID]*eventCache
	headers map[SinkTable][]kgo.RecordHeader
}

// eventCache holds what is known of one schema.
type eventCache struct {
	schema  *change.Schema
	version uint64
	names   [][]byte // `"col":` for each column
	cols    []columnKind
	pkNames []byte // the canal-json pkNames array
	// envelope is `{"schema":<schema part>,"payload":` (debezium-json with include-schema).
	envelope []byte
}

// columnKind is what of a column's SQL type changes its rendering.
type columnKind uint8

const (
	plainColumn    columnKind = iota
	bigintUnsigned            // DECIMAL(20,0) in Flink CDC: written as a decimal
	wideDecimal               // DECIMAL(p>38): STRING in Flink CDC
	multiBit                  // BIT(n>1): Debezium's little-endian bytes
)

// NewEventEncoder returns an EventEncoder with the given options.
func NewEventEncoder(opts EventOptions) *EventEncoder {
	return &EventEncoder{opts: opts, tables: make(map[change.TableID]*eventCache), headers: make(map[SinkTable][]kgo.RecordHeader)}
}

// PerTarget implements [Format]: true, the events name the target's table id.
func (e *EventEncoder) PerTarget() bool { return true }

// EncodeTo implements [Format]. A nil target names the source table.
func (e *EventEncoder) EncodeTo(dst []Message, c *change.Change, commit time.Time, to *Target) ([]Message, error) {
	if c.Op == change.SchemaChange {
		return dst, nil // Flink CDC's sink writes no record for a schema change
	}
	if c.Schema == nil {
		return dst, errors.New("upsert: change without a schema")
	}
	tc, err := e.cache(c.Schema)
	if err != nil {
		return dst, err
	}
	id := SourceTable(c.Schema.Table)
	if to != nil {
		id = to.Table
	}
	switch c.Op {
	case change.Insert:
		return e.event(dst, tc, id, change.Insert, nil, c.After, commit)
	case change.Delete:
		return e.event(dst, tc, id, change.Delete, c.Before, nil, commit)
	case change.Update:
		if c.Before == nil {
			return dst, fmt.Errorf("upsert: %s: update without the row's before image, which change events carry; "+
				"set binlog_row_image=FULL on the server", c.Schema.Table)
		}
		if !sameKey(c.Schema.Key, c.Before, c.After) {
			n := len(dst)
			dst, err = e.event(dst, tc, id, change.Delete, c.Before, nil, commit)
			if err != nil {
				return dst[:n], err
			}
			return e.event(dst, tc, id, change.Insert, nil, c.After, commit)
		}
		return e.event(dst, tc, id, change.Update, c.Before, c.After, commit)
	}
	return dst, fmt.Errorf("upsert: %s: unknown op %v", c.Schema.Table, c.Op)
}

// sameKey reports whether two rows have the same primary key values.
func sameKey(key []int, a, b change.Row) bool {
	for _, i := range key {
		if i >= len(a) || i >= len(b) {
			return false
		}
		x, y := a[i], b[i]
		if x.Kind != y.Kind || x.Num != y.Num || string(x.Bytes) != string(y.Bytes) {
			return false
		}
	}
	return true
}

// event encodes one change event; the key comes from after, or before for a delete.
func (e *EventEncoder) event(dst []Message, tc *eventCache, id SinkTable, op change.Op, before, after change.Row, commit time.Time) ([]Message, error) {
	for _, r := range []change.Row{before, after} {
		if r != nil && len(r) != len(tc.names) {
			return dst, fmt.Errorf("upsert: %s: row has %d values, schema has %d columns", tc.schema.Table, len(r), len(tc.names))
		}
	}
	keyRow := after
	if op == change.Delete {
		keyRow = before
	}
	if keyRow == nil {
		return dst, fmt.Errorf("upsert: %s: change without the row image it needs", tc.schema.Table)
	}
	key, err := e.key(tc, id, keyRow)
	if err != nil {
		return dst, err
	}
	var value []byte
	if e.opts.Value == CanalJSON {
		value, err = e.canal(tc, id, op, before, after)
	} else {
		value, err = e.debezium(tc, id, op, before, after)
	}
	if err != nil {
		return dst, err
	}
	return append(dst, Message{Key: key, Value: value, Headers: e.headersFor(id), Timestamp: commit}), nil
}

// key encodes {"TableId":"<id>",<primary key columns>} (json) or "<id>",<values> (csv).
func (e *EventEncoder) key(tc *eventCache, id SinkTable, row change.Row) ([]byte, error) {
	name := id.String()
	var err error
	if e.opts.Key == KeyCSV {
		b := appendCSVString(make([]byte, 0, 64), name)
		for _, i := range tc.schema.Key {
			b = append(b, ',')
			if b, err = appendCSVValue(b, row[i], tc.cols[i]); err != nil {
				return nil, columnError(tc.schema, i, err)
			}
		}
		return b, nil
	}
	b := append(make([]byte, 0, 64), `{"TableId":`...)
	b = appendString(b, []byte(name))
	for _, i := range tc.schema.Key {
		if row[i].Kind == change.Null && e.opts.KeyJSON.IgnoreNulls {
			continue
		}
		b = append(b, ',')
		b = append(b, tc.names[i]...)
		if b, err = appendEventValue(b, row[i], tc.cols[i], e.opts.KeyJSON); err != nil {
			return nil, columnError(tc.schema, i, err)
		}
	}
	return append(b, '}'), nil
}

var debeziumOps = map[change.Op]string{change.Insert: "c", change.Update: "u", change.Delete: "d"}

// debezium encodes {"before":…,"after":…,"op":…,"source":{"db":…,"table":…}}.
func (e *EventEncoder) debezium(tc *eventCache, id SinkTable, op change.Op, before, after change.Row) ([]byte, error) {
	f := e.opts.ValueJSON
	w := objectWriter{b: make([]byte, 0, 256+len(tc.envelope)), ignoreNulls: f.IgnoreNulls}
	w.b = append(w.b, tc.envelope...)
	w.open()
	var err error
	for _, img := range []struct {
		name string
		row  change.Row
	}{{"before", before}, {"after", after}} {
		if img.row == nil {
			w.null(img.name)
			continue
		}
		w.field(img.name)
		if w.b, err = appendEventRow(w.b, tc, img.row, f); err != nil {
			return nil, err
		}
	}
	w.str("op", debeziumOps[op])
	w.field("source")
	src := objectWriter{b: w.b, ignoreNulls: f.IgnoreNulls}
	src.open()
	src.optStr("db", id.Schema)
	src.str("table", id.Table)
	w.b = src.close()
	if tc.envelope != nil {
		return append(w.close(), '}'), nil
	}
	return w.close(), nil
}

var canalTypes = map[change.Op]string{change.Insert: "INSERT", change.Update: "UPDATE", change.Delete: "DELETE"}

// canal encodes {"old":…,"data":[…],"type":…,"database":…,"table":…,"pkNames":[…]}: old
// is the whole before image of an update (null otherwise), data the after image, or the
// deleted row for a delete.
func (e *EventEncoder) canal(tc *eventCache, id SinkTable, op change.Op, before, after change.Row) ([]byte, error) {
	f := e.opts.ValueJSON
	w := objectWriter{b: make([]byte, 0, 256), ignoreNulls: f.IgnoreNulls}
	w.open()
	var err error
	old, data := before, after
	if op != change.Update {
		old = nil
	}
	if op == change.Delete {
		data = before
	}
	if old == nil {
		w.null("old")
	} else {
		w.field("old")
		w.b = append(w.b, '[')
		if w.b, err = appendEventRow(w.b, tc, old, f); err != nil {
			return nil, err
		}
		w.b = append(w.b, ']')
	}
	w.field("data")
	w.b = append(w.b, '[')
	if w.b, err = appendEventRow(w.b, tc, data, f); err != nil {
		return nil, err
	}
	w.b = append(w.b, ']')
	w.str("type", canalTypes[op])
	w.optStr("database", id.Schema)
	w.str("table", id.Table)
	w.field("pkNames")
	w.b = append(w.b, tc.pkNames...)
	return w.close(), nil
}

// objectWriter writes the fields of a JSON object, leaving out null ones when asked.
type objectWriter struct {
	b           []byte
	n           int // fields written
	ignoreNulls bool
}

func (w *objectWriter) open() { w.b = append(w.b, '{') }

func (w *objectWriter) close() []byte { return append(w.b, '}') }

// field writes the separator and the name of a field whose value the caller appends.
func (w *objectWriter) field(name string) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.b = appendString(w.b, []byte(name))
	w.b = append(w.b, ':')
}

func (w *objectWriter) null(name string) {
	if !w.ignoreNulls {
		w.field(name)
		w.b = append(w.b, "null"...)
	}
}

func (w *objectWriter) str(name, v string) {
	w.field(name)
	w.b = appendString(w.b, []byte(v))
}

// optStr writes a string that is null when empty (a part of the table id that is not set).
func (w *objectWriter) optStr(name, v string) {
	if v == "" {
		w.null(name)
		return
	}
	w.str(name, v)
}

// appendEventRow appends one row image as a JSON object of every column in schema order.
func appendEventRow(dst []byte, tc *eventCache, row change.Row, f JSONFormat) ([]byte, error) {
	dst = append(dst, '{')
	first := true
	var err error
	for i, v := range row {
		if v.Kind == change.Null && f.IgnoreNulls {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, tc.names[i]...)
		if dst, err = appendEventValue(dst, v, tc.cols[i], f); err != nil {
			return nil, columnError(tc.schema, i, err)
		}
	}
	return append(dst, '}'), nil
}

func columnError(s *change.Schema, i int, err error) error {
	return fmt.Errorf("upsert: %s column %s: %w", s.Table, s.Columns[i].Name, err)
}

// appendEventValue appends one column value as Flink's JSON format writes the Flink CDC
// type MySQL's column maps to.
func appendEventValue(dst []byte, v change.Value, col columnKind, f JSONFormat) ([]byte, error) {
	switch v.Kind {
	case change.Null:
		return append(dst, "null"...), nil
	case change.Bool:
		return strconv.AppendBool(dst, v.Num != 0), nil
	case change.Int:
		return strconv.AppendInt(dst, int64(v.Num), 10), nil
	case change.Uint:
		if col == bigintUnsigned {
			return appendJavaDecimal(dst, strconv.AppendUint(nil, v.Num, 10), f.DecimalPlain), nil
		}
		return strconv.AppendUint(dst, v.Num, 10), nil
	case change.Float32:
		return appendJavaFloat(dst, float64(float32(v.Float())), 32), nil
	case change.Float64:
		return appendJavaFloat(dst, v.Float(), 64), nil
	case change.Decimal:
		if !validDecimal(v.Bytes) {
			return dst, fmt.Errorf("invalid decimal text %q", truncate(v.Bytes))
		}
		if col == wideDecimal {
			return appendString(dst, v.Bytes), nil
		}
		return appendJavaDecimal(dst, v.Bytes, f.DecimalPlain), nil
	case change.String, change.JSON:
		return appendString(dst, v.Bytes), nil
	case change.Geometry:
		return appendString(dst, flinkGeometry(v.Bytes)), nil
	case change.Bytes:
		if col == multiBit {
			return appendBase64(dst, reversed(v.Bytes)), nil
		}
		return appendBase64(dst, v.Bytes), nil
	case change.Time:
		if f.TimeMicros {
			return strconv.AppendInt(dst, v.Micros(), 10), nil
		}
		return appendFlinkTime(dst, v.Micros()), nil
	case change.Date, change.DateTime, change.Timestamp:
		return appendTemporal(dst, v, f.Timestamps), nil
	}
	return dst, fmt.Errorf("unknown value kind %v", v.Kind)
}

// appendFlinkTime appends a TIME as Flink's JSON format writes it: "HH:mm:ss", the
// fraction dropped. A value outside 00:00:00–23:59:59 (negative, or 24 hours and more),
// which Flink CDC cannot represent, is written in full as docs/output.md says.
func appendFlinkTime(dst []byte, micros int64) []byte {
	const day = 24 * 3600 * 1_000_000
	if micros < 0 || micros >= day {
		dst = append(dst, '"')
		dst = appendTimeOfDay(dst, micros)
		return append(dst, '"')
	}
	dst = append(dst, '"')
	dst = appendTimeOfDay(dst, micros-micros%1_000_000)
	return append(dst, '"')
}

func reversed(b []byte) []byte {
	r := make([]byte, len(b))
	for i, c := range b {
		r[len(b)-1-i] = c
	}
	return r
}

// flinkGeometry reorders the geometry text {"type":T,"coordinates":C,"srid":n} (or
// "geometries") into the key order Flink CDC's MySQL source writes, which is the iteration
// order of the Java HashMap it fills: {"coordinates":C,"type":T,"srid":n}.
func flinkGeometry(text []byte) []byte {
	s := string(text)
	const typePrefix = `{"type":`
	srid := strings.LastIndex(s, `,"srid":`)
	if !strings.HasPrefix(s, typePrefix) || srid < 0 {
		return text
	}
	rest := s[len(typePrefix):srid] // "T","coordinates":C
	comma := strings.Index(rest, `",`)
	if comma < 0 {
		return text
	}
	typ, body := rest[:comma+1], rest[comma+2:]
	return []byte("{" + body + `,"type":` + typ + s[srid:])
}

// cache returns what is known of schema, built when the table is new or its schema changed.
func (e *EventEncoder) cache(s *change.Schema) (*eventCache, error) {
	if tc := e.tables[s.Table]; tc != nil && tc.schema == s && tc.version == s.Version {
		return tc, nil
	}
	tc := &eventCache{schema: s, version: s.Version, names: make([][]byte, len(s.Columns)), cols: make([]columnKind, len(s.Columns))}
	for i, c := range s.Columns {
		tc.names[i] = append(appendString(nil, []byte(c.Name)), ':')
		tc.cols[i] = kindOf(c.SQLType)
	}
	tc.pkNames = append(tc.pkNames, '[')
	for j, i := range s.Key {
		if i < 0 || i >= len(s.Columns) {
			return nil, fmt.Errorf("upsert: %s: key column index %d out of range", s.Table, i)
		}
		if j > 0 {
			tc.pkNames = append(tc.pkNames, ',')
		}
		tc.pkNames = appendString(tc.pkNames, []byte(s.Columns[i].Name))
	}
	tc.pkNames = append(tc.pkNames, ']')
	if e.opts.IncludeSchema && e.opts.Value == DebeziumJSON {
		tc.envelope = append(tc.envelope, `{"schema":`...)
		tc.envelope = appendConnectSchema(tc.envelope, s, e.opts.Comments, e.opts.TinyInt1AsNumber)
		tc.envelope = append(tc.envelope, `,"payload":`...)
	}
	e.tables[s.Table] = tc
	return tc, nil
}

// kindOf classifies a column by its SQL type (information_schema COLUMN_TYPE).
func kindOf(sqlType string) columnKind {
	t := strings.ToLower(sqlType)
	switch {
	case strings.HasPrefix(t, "bigint") && strings.Contains(t, "unsigned"), strings.HasPrefix(t, "serial"):
		return bigintUnsigned
	case strings.HasPrefix(t, "decimal("), strings.HasPrefix(t, "numeric("):
		p, _, _ := strings.Cut(t[strings.IndexByte(t, '(')+1:], ",")
		if n, err := strconv.Atoi(strings.TrimRight(p, ")")); err == nil && n > 38 {
			return wideDecimal
		}
	case strings.HasPrefix(t, "bit("):
		if n, err := strconv.Atoi(strings.TrimSuffix(t[4:], ")")); err == nil && n > 1 {
			return multiBit
		}
	}
	return plainColumn
}

// headersFor returns the headers of the records of a target table: namespace, schemaName
// and tableName of the (routed) table id, "" for a part that is not set, then the custom
// headers.
func (e *EventEncoder) headersFor(id SinkTable) []kgo.RecordHeader {
	if hs, ok := e.headers[id]; ok {
		return hs
	}
	var hs []kgo.RecordHeader
	if e.opts.TableHeaders {
		hs = append(hs,
			kgo.RecordHeader{Key: "namespace", Value: append([]byte{}, id.Namespace...)}, // empty, not null
			kgo.RecordHeader{Key: "schemaName", Value: append([]byte{}, id.Schema...)},
			kgo.RecordHeader{Key: "tableName", Value: []byte(id.Table)},
		)
	}
	for _, h := range e.opts.CustomHeaders {
		hs = append(hs, kgo.RecordHeader{Key: h.Key, Value: []byte(h.Value)})
	}
	hs = hs[:len(hs):len(hs)]
	e.headers[id] = hs
	return hs
}
