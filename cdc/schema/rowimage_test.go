package schema

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/ingestkit/ingest/change"
)

// The tests of this file build binlog events by hand, parse them with go-mysql's parser
// and the source's rows-event decoder (which leaves the row images undecoded), and compare
// the values of the row-image decoder with those of go-mysql's decoder and FromBinlog for
// the same bytes.

// Collation ids of the test columns.
const (
	collUTF8MB4 = 45
	collLatin1  = 8
	collGBK     = 28
	collBinary  = binaryCollation
)

// testColumn is a column of a test table: its binlog type and metadata and the facts that
// make its Column.
type testColumn struct {
	tp        byte
	meta      uint16
	unsigned  bool
	collation uint64      // 0: not a text column
	labels    []string    // ENUM and SET members
	info      *InfoColumn // information_schema's view (TINYINT(1), MariaDB JSON), or nil
	name      string      // "c" when empty
}

// column builds the Column as tableFromMap would.
func (tc testColumn) column() (Column, error) {
	name := tc.name
	if name == "" {
		name = "c"
	}
	opts := Options{TinyInt1AsBool: true, Collations: knownCollations}
	return columnFromMap(tc.tp, tc.meta, binlogFacts{Name: name, Unsigned: tc.unsigned, Collation: tc.collation,
		collationKnown: tc.collation != 0, Labels: tc.labels}, tc.info, opts)
}

// testTable is a table whose events go through go-mysql's parser.
type testTable struct {
	parser  *replication.BinlogParser
	pending *PendingRows
	tm      *replication.TableMapEvent
	table   *Table
}

// newTestTable parses a format description and a TABLE_MAP event for cols.
func newTestTable(tb testing.TB, cols []testColumn) *testTable {
	tb.Helper()
	tt, err := buildTestTable(cols)
	if err != nil {
		tb.Fatal(err)
	}
	return tt
}

// buildTestTable is newTestTable returning the error.
func buildTestTable(cols []testColumn) (*testTable, error) {
	tt := &testTable{parser: replication.NewBinlogParser(), pending: NewPendingRows()}
	tt.parser.SetFlavor(mysql.MariaDBFlavor)
	tt.parser.SetParseTime(true)
	tt.parser.SetTimestampStringLocation(time.UTC)
	tt.parser.SetRowsEventDecodeFunc(SkipUncaptured(func(string, string) bool { return true }, tt.pending))
	if _, err := tt.parser.Parse(formatDescriptionEvent()); err != nil {
		return nil, fmt.Errorf("format description: %w", err)
	}
	ev, err := tt.parser.Parse(tableMapEvent(cols))
	if err != nil {
		return nil, fmt.Errorf("table map: %w", err)
	}
	tt.tm = ev.Event.(*replication.TableMapEvent)
	columns := make([]Column, len(cols))
	sch := &change.Schema{Table: change.TableID{DB: "db", Table: "t"}, Columns: make([]change.Column, len(cols))}
	for i, tc := range cols {
		if columns[i], err = tc.column(); err != nil {
			return nil, err
		}
		sch.Columns[i] = change.Column{Name: columns[i].Name}
	}
	tt.table = &Table{Schema: sch, Columns: columns}
	return tt, nil
}

// event parses a rows event of the table holding images, and returns it with its
// undecoded images. bitmaps are the column bitmaps (nil: every column).
func (tt *testTable) event(tb testing.TB, tp replication.EventType, images []byte, bitmaps ...[]byte) (*replication.RowsEvent, []byte) {
	tb.Helper()
	e, data, err := tt.parse(tp, images, bitmaps...)
	if err != nil {
		tb.Fatal(err)
	}
	return e, data
}

// parse is event returning the error.
func (tt *testTable) parse(tp replication.EventType, images []byte, bitmaps ...[]byte) (*replication.RowsEvent, []byte, error) {
	ev, err := tt.parser.Parse(rowsEvent(tp, len(tt.tm.ColumnType), images, bitmaps))
	if err != nil {
		return nil, nil, err
	}
	e := ev.Event.(*replication.RowsEvent)
	data, ok := tt.pending.Take(e)
	if !ok {
		return nil, nil, errors.New("the rows were not left undecoded")
	}
	return e, data, nil
}

// fast decodes with the row-image decoder; it fails the test when the plan does not take
// the event.
func (tt *testTable) fast(tb testing.TB, tp replication.EventType, e *replication.RowsEvent, data []byte) ([]change.Value, error) {
	tb.Helper()
	plan := NewRowPlan(tt.tm, tt.table)
	if !plan.matches(tp, e) {
		tb.Fatalf("the row-image decoder does not take the event (plan %v)", plan != nil)
	}
	return plan.decode(data, e.Type() == replication.EnumRowsEventTypeUpdate)
}

// slow decodes with go-mysql and FromBinlog, the reference.
func (tt *testTable) slow(e *replication.RowsEvent, data []byte) ([]change.Value, error) {
	if err := e.DecodeData(0, data); err != nil {
		return nil, err
	}
	n := len(tt.table.Columns)
	vals := make([]change.Value, len(e.Rows)*n)
	for i, image := range e.Rows {
		if _, err := decodeRow(tt.table, image, vals[i*n:(i+1)*n]); err != nil {
			return nil, err
		}
	}
	return vals, nil
}

// sameValue reports whether two values are the same, nil Bytes told from empty ones.
func sameValue(a, b change.Value) bool {
	return a.Kind == b.Kind && a.Num == b.Num && bytes.Equal(a.Bytes, b.Bytes) && (a.Bytes == nil) == (b.Bytes == nil)
}

// describeValues renders values with describeValue, marking the nil Bytes of the kinds that
// hold bytes.
func describeValues(vals []change.Value) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = DescribeValue(v)
		switch v.Kind {
		case change.Decimal, change.String, change.Bytes, change.JSON, change.Geometry:
			if v.Bytes == nil {
				out[i] += "(nil)"
			}
		}
	}
	return out
}

// compare fails the test when the two decoders disagree.
func compare(tb testing.TB, fast []change.Value, fastErr error, slow []change.Value, slowErr error) {
	tb.Helper()
	if (fastErr != nil) != (slowErr != nil) {
		tb.Fatalf("row-image decoder: %v, go-mysql: %v\nfast: %v\nslow: %v", fastErr, slowErr,
			describeValues(fast), describeValues(slow))
	}
	if fastErr != nil {
		return
	}
	if len(fast) != len(slow) || !slices.EqualFunc(fast, slow, sameValue) {
		tb.Fatalf("values differ:\nfast: %v\nslow: %v", describeValues(fast), describeValues(slow))
	}
}

// formatDescriptionEvent is a MariaDB 10.11 FORMAT_DESCRIPTION event without checksums.
func formatDescriptionEvent() []byte {
	body := binary.LittleEndian.AppendUint16(nil, 4)
	version := make([]byte, 50)
	copy(version, "10.11.6-MariaDB-log")
	body = append(body, version...)
	body = binary.LittleEndian.AppendUint32(body, 0)
	body = append(body, replication.EventHeaderSize)
	body = append(body, bytes.Repeat([]byte{8}, 200)...) // post-header lengths: 6-byte table ids
	body = append(body, replication.BINLOG_CHECKSUM_ALG_OFF, 0, 0, 0, 0)
	return event(replication.FORMAT_DESCRIPTION_EVENT, body)
}

// event frames a body with an event header, in a slice with no spare capacity (so that a
// decoder reading past the end fails).
func event(tp replication.EventType, body []byte) []byte {
	h := make([]byte, 0, replication.EventHeaderSize+len(body))
	h = binary.LittleEndian.AppendUint32(h, 1_700_000_000)
	h = append(h, byte(tp))
	h = binary.LittleEndian.AppendUint32(h, 1)
	h = binary.LittleEndian.AppendUint32(h, uint32(replication.EventHeaderSize+len(body)))
	h = binary.LittleEndian.AppendUint32(h, 0)
	h = binary.LittleEndian.AppendUint16(h, 0)
	return append(h, body...)
}

// testTableID is the binlog table id of the test tables.
const testTableID = 42

// tableMapEvent builds the TABLE_MAP event of db.t with the columns' types and metadata,
// without optional metadata (binlog_row_metadata=MINIMAL).
func tableMapEvent(cols []testColumn) []byte {
	b := appendTableID(nil)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = append(b, 2, 'd', 'b', 0, 1, 't', 0)
	b = appendLenEnc(b, uint64(len(cols)))
	var meta []byte
	for _, c := range cols {
		b = append(b, c.tp)
		meta = appendMeta(meta, c.tp, c.meta)
	}
	b = appendLenEnc(b, uint64(len(meta)))
	b = append(b, meta...)
	return event(replication.TABLE_MAP_EVENT, append(b, allSet(len(cols))...)) // all nullable
}

// appendMeta writes a column's metadata as the server does (and go-mysql reads it).
func appendMeta(b []byte, tp byte, meta uint16) []byte {
	switch tp {
	case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_NEWDECIMAL:
		return append(b, byte(meta>>8), byte(meta))
	case mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_BIT:
		return binary.LittleEndian.AppendUint16(b, meta)
	case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_DOUBLE, mysql.MYSQL_TYPE_FLOAT, mysql.MYSQL_TYPE_GEOMETRY,
		mysql.MYSQL_TYPE_JSON, mysql.MYSQL_TYPE_TIME2, mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP2:
		return append(b, byte(meta))
	}
	return b
}

// rowsEvent builds a rows event (version 2 unless tp is a version 1 type) of n columns.
func rowsEvent(tp replication.EventType, n int, images []byte, bitmaps [][]byte) []byte {
	b := appendTableID(nil)
	b = binary.LittleEndian.AppendUint16(b, 0) // not the end of the statement: the parser keeps the table map
	switch tp {
	case replication.WRITE_ROWS_EVENTv2, replication.UPDATE_ROWS_EVENTv2, replication.DELETE_ROWS_EVENTv2,
		replication.PARTIAL_UPDATE_ROWS_EVENT:
		b = binary.LittleEndian.AppendUint16(b, 2) // no extra data
	}
	b = appendLenEnc(b, uint64(n))
	for len(bitmaps) < 2 {
		bitmaps = append(bitmaps, allSet(n))
	}
	b = append(b, bitmaps[0]...)
	switch tp {
	case replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2, replication.PARTIAL_UPDATE_ROWS_EVENT,
		replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1:
		b = append(b, bitmaps[1]...)
	}
	return event(tp, append(b, images...))
}

// appendTableID appends testTableID in 6 bytes.
func appendTableID(b []byte) []byte {
	return append(b, testTableID, 0, 0, 0, 0, 0)
}

// appendLenEnc appends a length-encoded integer below 65536.
func appendLenEnc(b []byte, n uint64) []byte {
	if n < 251 {
		return append(b, byte(n))
	}
	return binary.LittleEndian.AppendUint16(append(b, 0xfc), uint16(n))
}

// allSet is a bitmap of n set bits.
func allSet(n int) []byte {
	b := make([]byte, (n+7)/8)
	for i := range n {
		b[i/8] |= 1 << (i % 8)
	}
	return b
}

// image builds a row image from encoded values, nil for NULL.
func image(vals ...[]byte) []byte {
	nulls := make([]byte, (len(vals)+7)/8)
	var b []byte
	for i, v := range vals {
		if v == nil {
			nulls[i/8] |= 1 << (i % 8)
			continue
		}
		b = append(b, v...)
	}
	return append(nulls, b...)
}

// Encoders of the binlog forms, as the server writes them.

// le encodes n little-endian in size bytes.
func le(n uint64, size int) []byte {
	b := make([]byte, size)
	for i := range size {
		b[i] = byte(n >> (8 * i))
	}
	return b
}

// be encodes n big-endian in size bytes.
func be(n uint64, size int) []byte {
	b := make([]byte, size)
	for i := range size {
		b[size-1-i] = byte(n >> (8 * i))
	}
	return b
}

func encFloat(f float32) []byte  { return le(uint64(math.Float32bits(f)), 4) }
func encDouble(f float64) []byte { return le(math.Float64bits(f), 8) }

// encDecimal packs decimal text as DECIMAL(prec, scale).
func encDecimal(text string, prec, scale int) []byte {
	neg := strings.HasPrefix(text, "-")
	text = strings.TrimPrefix(text, "-")
	intPart, frac, _ := strings.Cut(text, ".")
	intg := prec - scale
	intPart = strings.TrimLeft(intPart, "0")
	intPart = strings.Repeat("0", intg-len(intPart)) + intPart
	frac += strings.Repeat("0", scale-len(frac))
	var groups []string // digit groups in order, each stored in decimalDigitBytes or 4 bytes
	if lead := intg % 9; lead > 0 {
		groups = append(groups, intPart[:lead])
	}
	for i := intg % 9; i < intg; i += 9 {
		groups = append(groups, intPart[i:i+9])
	}
	for i := 0; i+9 <= scale; i += 9 {
		groups = append(groups, frac[i:i+9])
	}
	if rest := scale % 9; rest > 0 {
		groups = append(groups, frac[scale-rest:])
	}
	var b []byte
	for _, g := range groups {
		v, _ := strconv.ParseUint(g, 10, 64)
		size := 4
		if len(g) < 9 {
			size = decimalDigitBytes[len(g)]
		}
		b = append(b, be(v, size)...)
	}
	if neg {
		for i := range b {
			b[i] = ^b[i]
		}
	}
	b[0] ^= 0x80
	return b
}

func encDate(y, m, d int) []byte { return le(uint64(y<<9|m<<5|d), 3) }

func encFrac(us int64, fsp int) []byte {
	switch fsp {
	case 1, 2:
		return []byte{byte(us / 10_000)}
	case 3, 4:
		return be(uint64(us/100), 2)
	case 5, 6:
		return be(uint64(us), 3)
	}
	return nil
}

func encDateTime2(y, mo, d, h, mi, s int, us int64, fsp int) []byte {
	packed := uint64(((y*13+mo)<<5|d)<<17|h<<12|mi<<6|s) + datetimeOffset
	return append(be(packed, 5), encFrac(us, fsp)...)
}

func encTimestamp2(sec uint32, us int64, fsp int) []byte {
	return append(be(uint64(sec), 4), encFrac(us, fsp)...)
}

// encTime2 packs a TIME as my_time_packed_to_binary does.
func encTime2(neg bool, h, m, s int, us int64, fsp int) []byte {
	nr := int64(h<<12|m<<6|s)<<24 + us
	if neg {
		nr = -nr
	}
	switch fsp {
	case 1, 2:
		return append(be(uint64(nr>>24+TimeOffset), 3), byte(int8(nr%(1<<24)/10_000)))
	case 3, 4:
		return append(be(uint64(nr>>24+TimeOffset), 3), be(uint64(uint16(int16(nr%(1<<24)/100))), 2)...)
	case 5, 6:
		return be(uint64(nr+TimeFracOffset), 6)
	}
	return be(uint64(nr>>24+TimeOffset), 3)
}

func encString(s string, prefix int) []byte { return append(le(uint64(len(s)), prefix), s...) }

// charMeta is the metadata of CHAR(n bytes) (or BINARY): the real type with the high bits
// of the length folded in.
func charMeta(tp byte, length int) uint16 {
	return uint16(tp^byte((length&0x300)>>4))<<8 | uint16(length&0xff)
}

// ptr returns a pointer to an infoColumn, for testColumn.info.
func ptr(ic InfoColumn) *InfoColumn { return &ic }

// valueCase is a column and rows of it with the values both decoders must give.
type valueCase struct {
	name string
	col  testColumn
	vals [][]byte // encoded, nil: NULL
	want []string // describeValue of each
}

func valueCases() []valueCase {
	tiny := testColumn{tp: mysql.MYSQL_TYPE_TINY}
	dec := func(prec, scale int) testColumn {
		return testColumn{tp: mysql.MYSQL_TYPE_NEWDECIMAL, meta: uint16(prec<<8 | scale)}
	}
	decCase := func(prec, scale int, vals ...string) valueCase {
		c := valueCase{name: fmt.Sprintf("decimal(%d,%d)", prec, scale), col: dec(prec, scale)}
		for _, v := range vals {
			c.vals = append(c.vals, encDecimal(v, prec, scale))
			c.want = append(c.want, fmt.Sprintf("decimal:%q", v))
		}
		return c
	}
	dt := func(fsp int) testColumn { return testColumn{tp: mysql.MYSQL_TYPE_DATETIME2, meta: uint16(fsp)} }
	ts := func(fsp int) testColumn { return testColumn{tp: mysql.MYSQL_TYPE_TIMESTAMP2, meta: uint16(fsp)} }
	tm := func(fsp int) testColumn { return testColumn{tp: mysql.MYSQL_TYPE_TIME2, meta: uint16(fsp)} }
	varchar := func(maxBytes int, coll uint64) testColumn {
		return testColumn{tp: mysql.MYSQL_TYPE_VARCHAR, meta: uint16(maxBytes), collation: coll}
	}
	blob := func(meta uint16, coll uint64) testColumn {
		return testColumn{tp: mysql.MYSQL_TYPE_BLOB, meta: meta, collation: coll}
	}
	enum := func(packLen int, labels ...string) testColumn {
		return testColumn{tp: mysql.MYSQL_TYPE_STRING, meta: uint16(mysql.MYSQL_TYPE_ENUM)<<8 | uint16(packLen),
			collation: collUTF8MB4, labels: labels}
	}
	set := func(packLen int, labels ...string) testColumn {
		return testColumn{tp: mysql.MYSQL_TYPE_STRING, meta: uint16(mysql.MYSQL_TYPE_SET)<<8 | uint16(packLen),
			collation: collUTF8MB4, labels: labels}
	}
	many := make([]string, 64)
	for i := range many {
		many[i] = fmt.Sprintf("m%d", i)
	}
	long := strings.Repeat("é", 150) // 300 bytes
	return []valueCase{
		{"tinyint", tiny, [][]byte{{0x80}, {0x7f}, {0}, nil}, []string{"int:-128", "int:127", "int:0", "null:"}},
		{"tinyint unsigned", testColumn{tp: mysql.MYSQL_TYPE_TINY, unsigned: true}, [][]byte{{0xff}, {0}},
			[]string{"uint:255", "uint:0"}},
		{"tinyint(1) bool", testColumn{tp: mysql.MYSQL_TYPE_TINY, info: ptr(InfoColumn{DataType: "tinyint", ColumnType: "tinyint(1)"})},
			[][]byte{{1}, {0}, {0xf9}}, []string{"bool:true", "bool:false", "bool:true"}},
		{"smallint", testColumn{tp: mysql.MYSQL_TYPE_SHORT}, [][]byte{le(0x8000, 2), le(0x7fff, 2)},
			[]string{"int:-32768", "int:32767"}},
		{"smallint unsigned", testColumn{tp: mysql.MYSQL_TYPE_SHORT, unsigned: true}, [][]byte{le(0xffff, 2)},
			[]string{"uint:65535"}},
		{"mediumint", testColumn{tp: mysql.MYSQL_TYPE_INT24}, [][]byte{le(0x800000, 3), le(0x7fffff, 3), le(0xffffff, 3)},
			[]string{"int:-8388608", "int:8388607", "int:-1"}},
		{"mediumint unsigned", testColumn{tp: mysql.MYSQL_TYPE_INT24, unsigned: true},
			[][]byte{le(0xffffff, 3), le(0x800000, 3)}, []string{"uint:16777215", "uint:8388608"}},
		{"int", testColumn{tp: mysql.MYSQL_TYPE_LONG}, [][]byte{le(0x80000000, 4), le(0x7fffffff, 4)},
			[]string{"int:-2147483648", "int:2147483647"}},
		{"int unsigned", testColumn{tp: mysql.MYSQL_TYPE_LONG, unsigned: true}, [][]byte{le(math.MaxUint32, 4)},
			[]string{"uint:4294967295"}},
		{"bigint", testColumn{tp: mysql.MYSQL_TYPE_LONGLONG}, [][]byte{le(1<<63, 8), le(math.MaxInt64, 8)},
			[]string{"int:-9223372036854775808", "int:9223372036854775807"}},
		{"bigint unsigned", testColumn{tp: mysql.MYSQL_TYPE_LONGLONG, unsigned: true}, [][]byte{le(math.MaxUint64, 8)},
			[]string{"uint:18446744073709551615"}},
		{"year", testColumn{tp: mysql.MYSQL_TYPE_YEAR}, [][]byte{{0}, {124}, {255}}, []string{"int:0", "int:2024", "int:2155"}},
		{"float", testColumn{tp: mysql.MYSQL_TYPE_FLOAT, meta: 4},
			[][]byte{encFloat(3.14159), encFloat(float32(math.Copysign(0, -1))), encFloat(float32(math.Inf(-1)))},
			[]string{"float32:3.14159", "float32:-0", "float32:-Inf"}},
		{"double", testColumn{tp: mysql.MYSQL_TYPE_DOUBLE, meta: 8}, [][]byte{encDouble(2.718281828459045), encDouble(-1e300)},
			[]string{"float64:2.718281828459045", "float64:-1e+300"}},
		decCase(20, 6, "-12345678901234.123456", "0.000001", "-0.500000", "99999999999999.999999", "0.000000"),
		decCase(10, 0, "42", "-7", "0", "9999999999", "-1000000000"),
		decCase(5, 2, "4.50", "-999.99", "0.01"),
		decCase(9, 9, "0.123456789", "-0.000000001"),
		decCase(65, 30, "-"+strings.Repeat("9", 35)+"."+strings.Repeat("9", 30), "1."+strings.Repeat("0", 29)+"1"),
		decCase(18, 9, "123456789.987654321", "-1.000000000"),
		decCase(64, 3, strings.Repeat("9", 61)+".999", "-1.000"),
		decCase(65, 0, strings.Repeat("9", 65), "-"+strings.Repeat("9", 65), "1"+strings.Repeat("0", 64)),
		{"date", testColumn{tp: mysql.MYSQL_TYPE_DATE},
			[][]byte{encDate(2024, 2, 29), encDate(0, 0, 0), encDate(2024, 0, 15), encDate(9999, 12, 31), encDate(1000, 1, 1)},
			[]string{"date:2024-02-29", "null:", "null:", "date:9999-12-31", "date:1000-01-01"}},
		{"datetime", dt(0), [][]byte{encDateTime2(2024, 2, 29, 13, 14, 15, 0, 0), encDateTime2(0, 0, 0, 0, 0, 0, 0, 0),
			encDateTime2(1000, 1, 1, 0, 0, 0, 0, 0), encDateTime2(2024, 0, 15, 10, 0, 0, 0, 0), encDateTime2(1969, 12, 31, 23, 59, 59, 0, 0)},
			[]string{"datetime:2024-02-29 13:14:15.000000", "null:", "datetime:1000-01-01 00:00:00.000000", "null:",
				"datetime:1969-12-31 23:59:59.000000"}},
		{"datetime(1)", dt(1), [][]byte{encDateTime2(2024, 2, 29, 13, 14, 15, 500000, 1)},
			[]string{"datetime:2024-02-29 13:14:15.500000"}},
		{"datetime(2)", dt(2), [][]byte{encDateTime2(2024, 2, 29, 13, 14, 15, 990000, 2)},
			[]string{"datetime:2024-02-29 13:14:15.990000"}},
		{"datetime(3)", dt(3), [][]byte{encDateTime2(1970, 1, 1, 0, 0, 0, 1000, 3)},
			[]string{"datetime:1970-01-01 00:00:00.001000"}},
		{"datetime(4)", dt(4), [][]byte{encDateTime2(2000, 12, 31, 23, 59, 59, 999900, 4)},
			[]string{"datetime:2000-12-31 23:59:59.999900"}},
		{"datetime(5)", dt(5), [][]byte{encDateTime2(2000, 1, 1, 1, 1, 1, 123450, 5)},
			[]string{"datetime:2000-01-01 01:01:01.123450"}},
		{"datetime(6)", dt(6), [][]byte{encDateTime2(9999, 12, 31, 23, 59, 59, 999999, 6), encDateTime2(1000, 1, 1, 0, 0, 0, 1, 6),
			encDateTime2(0, 0, 0, 0, 0, 0, 0, 6)},
			[]string{"datetime:9999-12-31 23:59:59.999999", "datetime:1000-01-01 00:00:00.000001", "null:"}},
		{"timestamp", ts(0), [][]byte{encTimestamp2(1704164645, 0, 0), encTimestamp2(0, 0, 0), encTimestamp2(math.MaxInt32, 0, 0)},
			[]string{"timestamp:2024-01-02 03:04:05.000000Z", "null:", "timestamp:2038-01-19 03:14:07.000000Z"}},
		{"timestamp(2)", ts(2), [][]byte{encTimestamp2(1, 10000, 2)}, []string{"timestamp:1970-01-01 00:00:01.010000Z"}},
		{"timestamp(3)", ts(3), [][]byte{encTimestamp2(1704164645, 678000, 3), encTimestamp2(0, 0, 3)},
			[]string{"timestamp:2024-01-02 03:04:05.678000Z", "null:"}},
		{"timestamp(6)", ts(6), [][]byte{encTimestamp2(1704164645, 999999, 6)}, []string{"timestamp:2024-01-02 03:04:05.999999Z"}},
		{"time", tm(0), [][]byte{encTime2(true, 838, 59, 59, 0, 0), encTime2(false, 838, 59, 59, 0, 0), encTime2(false, 0, 0, 0, 0, 0),
			encTime2(false, 100, 0, 0, 0, 0), encTime2(true, 0, 0, 1, 0, 0)},
			[]string{"time:-838:59:59.000000", "time:838:59:59.000000", "time:00:00:00.000000", "time:100:00:00.000000",
				"time:-00:00:01.000000"}},
		{"time(1)", tm(1), [][]byte{encTime2(false, 100, 0, 0, 500000, 1), encTime2(true, 1, 2, 3, 400000, 1)},
			[]string{"time:100:00:00.500000", "time:-01:02:03.400000"}},
		{"time(2)", tm(2), [][]byte{encTime2(true, 0, 0, 0, 10000, 2), encTime2(true, 0, 0, 1, 250000, 2), encTime2(true, 0, 0, 1, 0, 2)},
			[]string{"time:-00:00:00.010000", "time:-00:00:01.250000", "time:-00:00:01.000000"}},
		{"time(3)", tm(3), [][]byte{encTime2(false, 100, 0, 0, 500000, 3), encTime2(true, 25, 0, 0, 1000, 3)},
			[]string{"time:100:00:00.500000", "time:-25:00:00.001000"}},
		{"time(4)", tm(4), [][]byte{encTime2(true, 838, 59, 59, 999900, 4)}, []string{"time:-838:59:59.999900"}},
		{"time(5)", tm(5), [][]byte{encTime2(true, 12, 34, 56, 123450, 5)}, []string{"time:-12:34:56.123450"}},
		{"time(6)", tm(6), [][]byte{encTime2(true, 838, 59, 59, 999999, 6), encTime2(false, 0, 0, 0, 1, 6), encTime2(true, 0, 0, 0, 1, 6)},
			[]string{"time:-838:59:59.999999", "time:00:00:00.000001", "time:-00:00:00.000001"}},
		{"varchar", varchar(400, collUTF8MB4), [][]byte{encString("héllo 🚀 世界", 2), encString("", 2), nil},
			[]string{`string:"héllo 🚀 世界"`, `string:""`, "null:"}},
		{"varchar short", varchar(40, collUTF8MB4), [][]byte{encString("abc", 1), encString("", 1)},
			[]string{`string:"abc"`, `string:""`}},
		{"varchar of 255 bytes", varchar(255, collUTF8MB4), [][]byte{encString("ab", 1)}, []string{`string:"ab"`}},
		{"varchar of 256 bytes", varchar(256, collUTF8MB4), [][]byte{encString("ab", 2)}, []string{`string:"ab"`}},
		{"varchar latin1", varchar(20, collLatin1), [][]byte{encString("caf\xe9 \x80", 1)}, []string{`string:"café €"`}},
		{"varchar gbk", varchar(20, collGBK), [][]byte{encString("\xd6\xd0\xce\xc4", 1)}, []string{`string:"中文"`}},
		{"varbinary", varchar(10, collBinary), [][]byte{encString("\x00\xff", 1), encString("", 1)},
			[]string{"bytes:00ff", "bytes:"}},
		{"char", testColumn{tp: mysql.MYSQL_TYPE_STRING, meta: charMeta(mysql.MYSQL_TYPE_STRING, 40), collation: collUTF8MB4},
			[][]byte{encString("abc", 1), encString("", 1)}, []string{`string:"abc"`, `string:""`}},
		{"char over 255 bytes", testColumn{tp: mysql.MYSQL_TYPE_STRING, meta: charMeta(mysql.MYSQL_TYPE_STRING, 400), collation: collUTF8MB4},
			[][]byte{encString(long, 2), encString("x", 2)}, []string{fmt.Sprintf("string:%q", long), `string:"x"`}},
		{"binary padded", testColumn{tp: mysql.MYSQL_TYPE_STRING, meta: charMeta(mysql.MYSQL_TYPE_STRING, 4), collation: collBinary},
			[][]byte{encString("\xde\xad\xbe", 1), encString("\xde\xad\xbe\xef", 1), encString("", 1)},
			[]string{"bytes:deadbe00", "bytes:deadbeef", "bytes:00000000"}},
		{"binary(300)", testColumn{tp: mysql.MYSQL_TYPE_STRING, meta: charMeta(mysql.MYSQL_TYPE_STRING, 300), collation: collBinary},
			[][]byte{encString("\x01", 2)}, []string{"bytes:01" + strings.Repeat("00", 299)}},
		{"text", blob(2, collUTF8MB4), [][]byte{encString("some text", 2), encString("", 2)}, []string{`string:"some text"`, `string:""`}},
		{"mediumtext latin1", blob(3, collLatin1), [][]byte{encString("\xe9", 3)}, []string{`string:"é"`}},
		{"tinyblob", blob(1, collBinary), [][]byte{encString("\x00", 1)}, []string{"bytes:00"}},
		{"longblob", blob(4, collBinary), [][]byte{encString("\x00\xff\x10", 4), encString("", 4)}, []string{"bytes:00ff10", "bytes:"}},
		{"json mariadb", testColumn{tp: mysql.MYSQL_TYPE_BLOB, meta: 4, collation: collUTF8MB4,
			info: ptr(InfoColumn{DataType: "longtext", ColumnType: "longtext", Charset: "utf8mb4", JSON: true})},
			[][]byte{encString(`{"k": [1, 2.5, "x"], "s": "a  b \" c"}`, 4), encString(`[1,2]`, 4), encString("", 4)},
			[]string{`json:"{\"k\":[1,2.5,\"x\"],\"s\":\"a  b \\\" c\"}"`, `json:"[1,2]"`, "null:"}},
		{"geometry", testColumn{tp: mysql.MYSQL_TYPE_GEOMETRY, meta: 4}, [][]byte{encString(string(wkbPoint(4326, 1.5, -2)), 4)},
			[]string{`geometry:"{\"type\":\"Point\",\"coordinates\":[1.5,-2],\"srid\":4326}"`}},
		{"bit(1)", testColumn{tp: mysql.MYSQL_TYPE_BIT, meta: 1}, [][]byte{{1}, {0}}, []string{"bool:true", "bool:false"}},
		{"bit(5)", testColumn{tp: mysql.MYSQL_TYPE_BIT, meta: 5}, [][]byte{{0x15}, {0}}, []string{"bytes:15", "bytes:00"}},
		{"bit(12)", testColumn{tp: mysql.MYSQL_TYPE_BIT, meta: 1<<8 | 4}, [][]byte{{0x0a, 0xbc}}, []string{"bytes:0abc"}},
		{"bit(64)", testColumn{tp: mysql.MYSQL_TYPE_BIT, meta: 8 << 8}, [][]byte{be(math.MaxUint64, 8), be(1, 8)},
			[]string{"bytes:ffffffffffffffff", "bytes:0000000000000001"}},
		{"enum", enum(1, "small", "medium", "large"), [][]byte{{3}, {0}, {1}},
			[]string{`string:"large"`, `string:""`, `string:"small"`}},
		{"enum 2 bytes", enum(2, many...), [][]byte{le(64, 2), le(0, 2)}, []string{`string:"m63"`, `string:""`}},
		{"set", set(1, "a", "b", "c", "d"), [][]byte{{13}, {0}, {15}}, []string{`string:"a,c,d"`, `string:""`, `string:"a,b,c,d"`}},
		{"set 64", set(8, many...), [][]byte{le(math.MaxUint64, 8), le(1<<63, 8)},
			[]string{fmt.Sprintf("string:%q", strings.Join(many, ",")), `string:"m63"`}},
	}
}

// TestRowImageValues decodes every type with edge values with both decoders.
func TestRowImageValues(t *testing.T) {
	for _, vc := range valueCases() {
		t.Run(vc.name, func(t *testing.T) {
			tt := newTestTable(t, []testColumn{vc.col})
			var images []byte
			for _, v := range vc.vals {
				images = append(images, image(v)...)
			}
			e, data := tt.event(t, replication.WRITE_ROWS_EVENTv2, images)
			fast, fastErr := tt.fast(t, replication.WRITE_ROWS_EVENTv2, e, data)
			slow, slowErr := tt.slow(e, data)
			compare(t, fast, fastErr, slow, slowErr)
			if fastErr != nil {
				t.Fatal(fastErr)
			}
			if got := describeValues(fast); !slices.Equal(got, vc.want) {
				t.Fatalf("got  %q\nwant %q", got, vc.want)
			}
		})
	}
}

// TestRowImageErrors checks values both decoders reject.
func TestRowImageErrors(t *testing.T) {
	tests := []struct {
		name string
		col  testColumn
		val  []byte
	}{
		{"enum beyond labels", testColumn{tp: mysql.MYSQL_TYPE_STRING, meta: uint16(mysql.MYSQL_TYPE_ENUM)<<8 | 1,
			collation: collUTF8MB4, labels: []string{"a"}}, []byte{2}},
		{"set beyond members", testColumn{tp: mysql.MYSQL_TYPE_STRING, meta: uint16(mysql.MYSQL_TYPE_SET)<<8 | 1,
			collation: collUTF8MB4, labels: []string{"a", "b"}}, []byte{4}},
		// DECIMAL(4,1): 3 integer digits in 2 bytes, 1 decimal in 1 byte, which holds 99.
		{"decimal with more decimals", testColumn{tp: mysql.MYSQL_TYPE_NEWDECIMAL, meta: 4<<8 | 1}, []byte{0x80, 5, 99}},
		{"geometry without srid", testColumn{tp: mysql.MYSQL_TYPE_GEOMETRY, meta: 1}, encString("\x00", 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tt := newTestTable(t, []testColumn{tc.col})
			e, data := tt.event(t, replication.WRITE_ROWS_EVENTv2, image(tc.val))
			fast, fastErr := tt.fast(t, replication.WRITE_ROWS_EVENTv2, e, data)
			slow, slowErr := tt.slow(e, data)
			compare(t, fast, fastErr, slow, slowErr)
			if fastErr == nil || errors.Is(fastErr, ErrFallback) {
				t.Fatalf("got %v, %v, want an error", describeValues(fast), fastErr)
			}
			t.Log(fastErr)
		})
	}
}

// allTypesColumns is a table with a column of every type the row-image decoder handles.
func allTypesColumns() ([]testColumn, [][]byte) {
	var cols []testColumn
	var vals [][]byte
	for _, vc := range valueCases() {
		vc.col.name = vc.name
		cols = append(cols, vc.col)
		vals = append(vals, vc.vals[0])
	}
	return cols, vals
}

// TestRowImageEvents decodes inserts, updates and deletes of every type, in version 1 and 2
// events, with NULLs in every position.
func TestRowImageEvents(t *testing.T) {
	cols, vals := allTypesColumns()
	withNull := func(i int) []byte {
		v := slices.Clone(vals)
		v[i%len(v)] = nil
		v[(i*7+3)%len(v)] = nil
		return image(v...)
	}
	var images []byte
	for i := range 2 * len(cols) {
		images = append(images, withNull(i)...)
	}
	for _, tp := range []replication.EventType{replication.WRITE_ROWS_EVENTv1, replication.WRITE_ROWS_EVENTv2,
		replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2,
		replication.DELETE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv2} {
		t.Run(tp.String(), func(t *testing.T) {
			tt := newTestTable(t, cols)
			e, data := tt.event(t, tp, images)
			fast, fastErr := tt.fast(t, tp, e, data)
			slow, slowErr := tt.slow(e, data)
			compare(t, fast, fastErr, slow, slowErr)
			if fastErr != nil {
				t.Fatal(fastErr)
			}
			if want := 2 * len(cols) * len(cols); len(fast) != want {
				t.Fatalf("%d values, want %d", len(fast), want)
			}
		})
	}
}

// TestRowImageTruncated cuts one-image events short at every byte: the decoder reports an
// error and does not panic.
func TestRowImageTruncated(t *testing.T) {
	cols, vals := allTypesColumns()
	row := image(vals...)
	for _, tp := range []replication.EventType{replication.WRITE_ROWS_EVENTv2, replication.UPDATE_ROWS_EVENTv2} {
		full := row
		if tp == replication.UPDATE_ROWS_EVENTv2 {
			full = append(slices.Clone(row), row...)
		}
		tt := newTestTable(t, cols)
		for cut := 1; cut < len(full); cut++ {
			e, data := tt.event(t, tp, slices.Clip(full[:cut]))
			vals, err := tt.fast(t, tp, e, data)
			if err == nil || errors.Is(err, ErrFallback) {
				t.Fatalf("%s cut at %d of %d bytes: got %d values, %v; want an error", tp, cut, len(full), len(vals), err)
			}
			if _, err := tt.slow(e, data); err == nil {
				t.Errorf("%s cut at %d of %d bytes: go-mysql decodes it", tp, cut, len(full))
			}
		}
	}
}

// TestRowImageFallback checks the events and values the row-image decoder leaves to
// go-mysql, and that DecodeImages then gives go-mysql's values.
func TestRowImageFallback(t *testing.T) {
	intCol := testColumn{tp: mysql.MYSQL_TYPE_LONG}
	dt := testColumn{tp: mysql.MYSQL_TYPE_DATETIME2}
	tests := []struct {
		name    string
		cols    []testColumn
		tp      replication.EventType
		images  []byte
		bitmaps [][]byte // nil: every column
		noPlan  bool     // the table map has no plan
		want    []string // nil: an error
	}{
		{name: "old timestamp", cols: []testColumn{intCol, {tp: mysql.MYSQL_TYPE_TIMESTAMP}}, noPlan: true,
			tp: replication.WRITE_ROWS_EVENTv2, images: image(le(1, 4), le(1704164645, 4)),
			want: []string{"int:1", "timestamp:2024-01-02 03:04:05.000000Z"}},
		{name: "old datetime", cols: []testColumn{{tp: mysql.MYSQL_TYPE_DATETIME}}, noPlan: true,
			tp: replication.WRITE_ROWS_EVENTv2, images: image(le(20240229131415, 8)),
			want: []string{"datetime:2024-02-29 13:14:15.000000"}},
		{name: "old time", cols: []testColumn{{tp: mysql.MYSQL_TYPE_TIME}}, noPlan: true,
			tp: replication.WRITE_ROWS_EVENTv2, images: image(le(1000000, 3)), want: []string{"time:100:00:00.000000"}},
		{name: "mysql json", cols: []testColumn{intCol, {tp: mysql.MYSQL_TYPE_JSON, meta: 4}}, noPlan: true,
			tp: replication.WRITE_ROWS_EVENTv2, images: image(le(1, 4), encString("\x04\x01", 4)), // JSON true
			want: []string{"int:1", `json:"true"`}},
		// go-mysql leaves a column missing from the image nil, which would read as NULL: an
		// error instead (binlog_row_image MINIMAL or NOBLOB).
		{name: "minimal image", cols: []testColumn{intCol, intCol}, bitmaps: [][]byte{{1}},
			tp: replication.WRITE_ROWS_EVENTv2, images: image(le(1, 4))},
		{name: "minimal after image", cols: []testColumn{intCol, intCol}, bitmaps: [][]byte{{3}, {1}},
			tp: replication.UPDATE_ROWS_EVENTv2, images: append(image(le(1, 4), le(2, 4)), image(le(3, 4))...)},
		{name: "enum of 3 bytes", cols: []testColumn{{tp: mysql.MYSQL_TYPE_STRING, meta: uint16(mysql.MYSQL_TYPE_ENUM)<<8 | 3,
			collation: collUTF8MB4, labels: []string{"a"}}}, noPlan: true, tp: replication.WRITE_ROWS_EVENTv2,
			images: image(le(1, 3))},
		{name: "compressed", cols: []testColumn{intCol}, tp: replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1,
			images: compressRows(image(le(7, 4))), want: []string{"int:7"}},
		{name: "datetime 60 seconds", cols: []testColumn{dt}, tp: replication.WRITE_ROWS_EVENTv2,
			images: image(encDateTime2(2024, 2, 29, 13, 14, 60, 0, 0)), want: []string{"datetime:2024-02-29 13:15:00.000000"}},
		{name: "datetime february 30", cols: []testColumn{dt}, tp: replication.WRITE_ROWS_EVENTv2,
			images: image(encDateTime2(2024, 2, 30, 0, 0, 0, 0, 0)), want: []string{"datetime:2024-03-01 00:00:00.000000"}},
		{name: "datetime hour 24", cols: []testColumn{dt}, tp: replication.WRITE_ROWS_EVENTv2,
			images: image(encDateTime2(2024, 2, 29, 24, 0, 0, 0, 0)), want: []string{"datetime:2024-03-01 00:00:00.000000"}},
		{name: "datetime before 1970 hour 24", cols: []testColumn{dt}, tp: replication.WRITE_ROWS_EVENTv2,
			images: image(encDateTime2(1960, 2, 29, 24, 0, 0, 0, 0))},
		{name: "zero datetime of 7 fraction digits", cols: []testColumn{{tp: mysql.MYSQL_TYPE_DATETIME2, meta: 6}},
			tp: replication.WRITE_ROWS_EVENTv2, images: image(encDateTime2(0, 0, 0, 0, 0, 0, 1_000_000, 6))},
		{name: "time of 2 fraction digits in 1", cols: []testColumn{{tp: mysql.MYSQL_TYPE_TIME2, meta: 1}},
			tp: replication.WRITE_ROWS_EVENTv2, images: image(encTime2(false, 1, 0, 0, 550_000, 1)),
			want: []string{"time:01:00:00.500000"}},
		{name: "time 839 hours", cols: []testColumn{{tp: mysql.MYSQL_TYPE_TIME2}}, tp: replication.WRITE_ROWS_EVENTv2,
			images: image(encTime2(false, 839, 0, 0, 0, 0))},
		{name: "date year 10000", cols: []testColumn{{tp: mysql.MYSQL_TYPE_DATE}}, tp: replication.WRITE_ROWS_EVENTv2,
			images: image(encDate(10000, 1, 1))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tt := newTestTable(t, tc.cols)
			e, data := tt.event(t, tc.tp, tc.images, tc.bitmaps...)
			update, step := e.Type() == replication.EnumRowsEventTypeUpdate, 1
			if update {
				step = 2
			}
			plan := NewRowPlan(tt.tm, tt.table)
			if (plan == nil) != tc.noPlan {
				t.Fatalf("plan %v, want %v", plan != nil, !tc.noPlan)
			}
			if plan.matches(tc.tp, e) {
				if _, err := plan.decode(data, update); !errors.Is(err, ErrFallback) {
					t.Fatalf("the row-image decoder takes the event: %v", err)
				}
			}
			vals, err := DecodeImages(&replication.EventHeader{EventType: tc.tp}, e, tt.table, plan, data, true, step)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("got %v, want an error", describeValues(vals))
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := describeValues(vals); !slices.Equal(got, tc.want) {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestRowPlan checks the columns and events the row-image decoder leaves to go-mysql.
func TestRowPlan(t *testing.T) {
	noPlan := []struct {
		name string
		col  testColumn
	}{
		{"decimal(66,0)", testColumn{tp: mysql.MYSQL_TYPE_NEWDECIMAL, meta: 66 << 8}},
		{"decimal(5,6)", testColumn{tp: mysql.MYSQL_TYPE_NEWDECIMAL, meta: 5<<8 | 6}},
		{"bit(0)", testColumn{tp: mysql.MYSQL_TYPE_BIT}},
		{"bit(65)", testColumn{tp: mysql.MYSQL_TYPE_BIT, meta: 8<<8 | 1}},
		{"blob of 5 length bytes", testColumn{tp: mysql.MYSQL_TYPE_BLOB, meta: 5, collation: collBinary}},
		{"datetime(7)", testColumn{tp: mysql.MYSQL_TYPE_DATETIME2, meta: 7}},
		{"set of 9 bytes", testColumn{tp: mysql.MYSQL_TYPE_STRING, meta: uint16(mysql.MYSQL_TYPE_SET)<<8 | 9,
			collation: collUTF8MB4, labels: []string{"a"}}},
		{"string of another real type", testColumn{tp: mysql.MYSQL_TYPE_STRING, meta: uint16(mysql.MYSQL_TYPE_BLOB)<<8 | 4,
			collation: collUTF8MB4}},
	}
	for _, tc := range noPlan {
		tt := newTestTable(t, []testColumn{tc.col})
		if p := NewRowPlan(tt.tm, tt.table); p != nil {
			t.Errorf("%s: a plan", tc.name)
		}
	}

	// A Column of another class than the binlog type (a schema history out of step).
	tt := newTestTable(t, []testColumn{{tp: mysql.MYSQL_TYPE_VARCHAR, meta: 10, collation: collUTF8MB4}})
	tt.table.Columns[0].class = ClassDate
	if p := NewRowPlan(tt.tm, tt.table); p != nil {
		t.Error("a plan for a VARCHAR decoded as a DATE")
	}

	tt = newTestTable(t, []testColumn{{tp: mysql.MYSQL_TYPE_VARCHAR, meta: 10, collation: collUTF8MB4}})
	plan := NewRowPlan(tt.tm, tt.table)
	e, _ := tt.event(t, replication.WRITE_ROWS_EVENTv2, image(encString("a", 1)))
	if !plan.matches(replication.WRITE_ROWS_EVENTv2, e) {
		t.Fatal("the plan does not take its table's event")
	}
	if plan.matches(replication.PARTIAL_UPDATE_ROWS_EVENT, e) || plan.matches(replication.WRITE_ROWS_EVENTv0, e) {
		t.Error("the plan takes a partial update or a version 0 event")
	}
	other := *plan
	other.metas = []uint16{300} // VARCHAR of 300 bytes: 2 length bytes
	if other.matches(replication.WRITE_ROWS_EVENTv2, e) {
		t.Error("the plan takes the event of a table map with other metadata")
	}
}

// compressRows compresses row images as MariaDB's compressed rows events hold them: a header
// byte (the size of the length), the uncompressed length, then zlib.
func compressRows(images []byte) []byte {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	_, _ = w.Write(images)
	_ = w.Close()
	return append([]byte{0x81, byte(len(images))}, z.Bytes()...)
}

// TestRowImageUncaptured checks that the rows of tables that are not captured are left
// alone.
func TestRowImageUncaptured(t *testing.T) {
	tt := newTestTable(t, []testColumn{{tp: mysql.MYSQL_TYPE_LONG}})
	tt.parser.SetRowsEventDecodeFunc(SkipUncaptured(func(string, string) bool { return false }, tt.pending))
	if _, _, err := tt.parse(replication.WRITE_ROWS_EVENTv2, image(le(1, 4))); err == nil {
		t.Fatal("the rows of a table that is not captured were kept")
	}
	if len(tt.pending.images) != 0 {
		t.Fatalf("%d pending events", len(tt.pending.images))
	}
}

// fuzzTypes are the binlog types FuzzRowsDecode picks from: those of the row-image decoder
// and a few it leaves to go-mysql.
var fuzzTypes = []byte{mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG,
	mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_YEAR, mysql.MYSQL_TYPE_FLOAT, mysql.MYSQL_TYPE_DOUBLE,
	mysql.MYSQL_TYPE_NEWDECIMAL, mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP2,
	mysql.MYSQL_TYPE_TIME2, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_STRING,
	mysql.MYSQL_TYPE_BIT, mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_GEOMETRY, mysql.MYSQL_TYPE_JSON,
	mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIME}

var fuzzCollations = []uint64{collUTF8MB4, collLatin1, collBinary, collGBK}

// fuzzColumns reads the columns of a fuzz table from spec: 4 bytes a column (type, two
// metadata bytes, flags).
func fuzzColumns(spec []byte) []testColumn {
	labels := []string{"a", "b", "c"}
	many := make([]string, 64)
	for i := range many {
		many[i] = fmt.Sprint("m", i)
	}
	var cols []testColumn
	for ; len(spec) >= 4 && len(cols) < 6; spec = spec[4:] {
		tp := fuzzTypes[int(spec[0])%len(fuzzTypes)]
		meta := uint16(spec[1])<<8 | uint16(spec[2])
		if len(appendMeta(nil, tp, 0)) == 1 {
			meta &= 0xff
		} else if len(appendMeta(nil, tp, 0)) == 0 {
			meta = 0
		}
		flags := spec[3]
		c := testColumn{tp: tp, meta: meta, unsigned: flags&1 != 0, collation: fuzzCollations[flags>>1&3], labels: labels}
		if flags&8 != 0 {
			c.labels = many
		}
		switch {
		case flags&0x30 == 0x10:
			c.info = ptr(InfoColumn{DataType: "tinyint", ColumnType: "tinyint(1)"})
		case flags&0x30 == 0x20:
			c.info = ptr(InfoColumn{DataType: "longtext", ColumnType: "longtext", JSON: true})
		case flags&0x30 == 0x30:
			c.info = ptr(InfoColumn{DataType: "mediumint", ColumnType: "mediumint unsigned"})
		}
		cols = append(cols, c)
	}
	return cols
}

// FuzzRowsDecode decodes random row images of random columns with both decoders: the
// row-image decoder must not panic, and when it takes an event and go-mysql decodes it too,
// they must give the same values (or both an error).
func FuzzRowsDecode(f *testing.F) {
	cols, vals := allTypesColumns()
	var spec []byte
	for _, c := range cols[:6] {
		spec = append(spec, byte(slices.Index(fuzzTypes, c.tp)), byte(c.meta>>8), byte(c.meta), 0)
	}
	f.Add(byte(0), spec, image(vals[:6]...))
	for i := 0; i+6 <= len(cols); i += 6 {
		spec = spec[:0]
		for _, c := range cols[i : i+6] {
			flags := byte(slices.Index(fuzzCollations, c.collation)) << 1
			if c.unsigned {
				flags |= 1
			}
			if c.info != nil && c.info.JSON {
				flags |= 0x20
			}
			spec = append(spec, byte(slices.Index(fuzzTypes, c.tp)), byte(c.meta>>8), byte(c.meta), flags)
		}
		row := image(vals[i : i+6]...)
		f.Add(byte(0), slices.Clone(spec), row)
		f.Add(byte(1), slices.Clone(spec), append(slices.Clone(row), row...))
	}
	f.Add(byte(2), []byte{3, 0, 0, 0, 3, 0, 0, 0}, image(le(1, 4), le(2, 4)))
	f.Fuzz(func(t *testing.T, mode byte, spec []byte, images []byte) {
		cols := fuzzColumns(spec)
		if len(cols) == 0 {
			return
		}
		tt, err := buildTestTable(cols)
		if err != nil {
			return // a column Column cannot describe
		}
		tp := replication.WRITE_ROWS_EVENTv2
		if mode&1 != 0 {
			tp = replication.UPDATE_ROWS_EVENTv2
		}
		var bitmaps [][]byte
		if mode&2 != 0 { // a minimal image: the last column missing
			b := allSet(len(cols))
			b[(len(cols)-1)/8] &^= 1 << ((len(cols) - 1) % 8)
			bitmaps = [][]byte{b, b}
		}
		e, data, err := tt.parse(tp, slices.Clip(images), bitmaps...)
		if err != nil {
			t.Fatal(err)
		}
		plan := NewRowPlan(tt.tm, tt.table)
		if !plan.matches(tp, e) {
			return
		}
		fast, fastErr := plan.decode(data, tp == replication.UPDATE_ROWS_EVENTv2)
		if errors.Is(fastErr, ErrFallback) {
			return
		}
		slow, slowErr := tt.slow(e, data)
		compare(t, fast, fastErr, slow, slowErr)
	})
}

// BenchmarkRowsDecode decodes an event of the bench table of BenchmarkDecode (about 8 KiB,
// as the server writes them) with go-mysql and FromBinlog, and with the row-image decoder.
func BenchmarkRowsDecode(b *testing.B) {
	cols := []testColumn{
		{tp: mysql.MYSQL_TYPE_LONGLONG, name: "id"},
		{tp: mysql.MYSQL_TYPE_LONG, name: "a"},
		{tp: mysql.MYSQL_TYPE_VARCHAR, meta: 128, collation: collUTF8MB4, name: "b"},
		{tp: mysql.MYSQL_TYPE_VARCHAR, meta: 128, collation: collUTF8MB4, name: "c"},
		{tp: mysql.MYSQL_TYPE_NEWDECIMAL, meta: 12<<8 | 2, name: "d"},
		{tp: mysql.MYSQL_TYPE_LONG, name: "e"},
		{tp: mysql.MYSQL_TYPE_TINY, name: "f"},
		{tp: mysql.MYSQL_TYPE_DOUBLE, meta: 8, name: "g"},
		{tp: mysql.MYSQL_TYPE_VARCHAR, meta: 1020, collation: collUTF8MB4, name: "h"},
		{tp: mysql.MYSQL_TYPE_DATETIME2, meta: 6, name: "i"},
		{tp: mysql.MYSQL_TYPE_TIMESTAMP2, meta: 6, name: "j"},
	}
	var images []byte
	rows := 0
	for seq := 1; len(images) < 8000; seq++ {
		images = append(images, image(le(uint64(seq), 8), le(uint64(seq%1000), 4), encString(fmt.Sprint("b", seq), 1),
			encString(fmt.Sprint("c", seq), 1), encDecimal(fmt.Sprintf("%d.%02d", seq/100, seq%100), 12, 2),
			le(uint64(seq*7), 4), []byte{byte(seq % 100)}, encDouble(float64(seq)/3), encString(strings.Repeat("h", 20+seq%60), 2),
			encDateTime2(2024, 5, 17, 10, 11, 12, 123456, 6), encTimestamp2(1715940672, 123456, 6))...)
		rows++
	}
	tt := newTestTable(b, cols)
	parse := func() (*replication.RowsEvent, []byte) { return tt.event(b, replication.WRITE_ROWS_EVENTv2, images) }
	b.Run("go-mysql", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			b.StopTimer()
			e, data := parse()
			b.StartTimer()
			if _, err := tt.slow(e, data); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
	})
	b.Run("rowimage", func(b *testing.B) {
		b.ReportAllocs()
		e, data := parse()
		plan := NewRowPlan(tt.tm, tt.table)
		if !plan.matches(replication.WRITE_ROWS_EVENTv2, e) {
			b.Fatal("no plan")
		}
		for range b.N {
			if _, err := plan.decode(data, false); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
	})
}
