package schema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/ingestkit/ingest/change"
)

// The row images of captured tables are decoded here, from the bytes of the rows event
// straight into change.Values, instead of by go-mysql (which boxes every value into an
// interface and formats decimals and temporal values as text) followed by
// Column.FromBinlog. The values are the ones that path gives, bit for bit: the decoders
// below reproduce go-mysql's reading of each binlog type and the conversion FromBinlog
// applies to its result. Strings and byte strings alias the event buffer, as go-mysql's do;
// the bytes a value is built of (decimal digits, SET labels, BIT bytes, BINARY padding) go to
// one block per event.
//
// What is not handled here is left to go-mysql, for the whole event: column types without a
// decoder below (MySQL's binary JSON, the temporal types from before MySQL 5.6, VECTOR),
// partial JSON updates, compressed MariaDB events, row images without every column
// (binlog_row_image MINIMAL or NOBLOB), and values outside the forms the server writes (a
// DATETIME of February 30, say), whose conversion through go-mysql's text is not worth
// reproducing.

// PendingRows hands the undecoded row images of captured tables' rows events from go-mysql's
// reader goroutine, which decodes only their headers, to the stream goroutine, which decodes
// the rows. A RowsEvent has no field for them, so they are kept by event until taken. One
// pendingRows serves one replication connection: what its stream never took goes with it.
type PendingRows struct {
	mu     sync.Mutex
	images map[*replication.RowsEvent][]byte
}

// NewPendingRows returns an empty pendingRows.
func NewPendingRows() *PendingRows {
	return &PendingRows{images: map[*replication.RowsEvent][]byte{}}
}

// put keeps the row images of e: the event body after its header.
func (p *PendingRows) put(e *replication.RowsEvent, images []byte) {
	p.mu.Lock()
	p.images[e] = images
	p.mu.Unlock()
}

// Take returns and forgets the row images of e. ok is false when e's rows were not left to
// the stream (a table that is not captured); p may be nil.
func (p *PendingRows) Take(e *replication.RowsEvent) (images []byte, ok bool) {
	if p == nil {
		return nil, false
	}
	p.mu.Lock()
	images, ok = p.images[e]
	delete(p.images, e)
	p.mu.Unlock()
	return images, ok
}

var (
	// ErrFallback says that the plan leaves an event to go-mysql: it holds a value whose
	// conversion the plan does not reproduce.
	ErrFallback = errors.New("value left to go-mysql's decoder")
	// errTruncated reports a row image shorter than its columns.
	errTruncated = errors.New("row image truncated")
)

// wire is how a column's value is laid out in a row image.
type wire uint8

const (
	wireInt        wire = iota + 1 // little-endian two's complement of size bytes
	wireYear                       // one byte, years since 1900 (0: year 0)
	wireBit                        // big-endian, size bytes
	wireEnum                       // little-endian index, size bytes (1 or 2)
	wireSet                        // little-endian member mask, size bytes (1 to 8)
	wireFloat                      // IEEE 754 binary32
	wireDouble                     // IEEE 754 binary64
	wireDecimal                    // MySQL's packed decimal of prec digits, scale of them decimals
	wireDate                       // 3 bytes: year<<9 | month<<5 | day
	wireDateTime2                  // 5 bytes and fsp fraction digits
	wireTimestamp2                 // 4 bytes of Unix seconds and fsp fraction digits
	wireTime2                      // 3 bytes and fsp fraction digits
	wireString                     // length in size (1 or 2) bytes, then the bytes
	wireBlob                       // length in size (1 to 4) bytes, then the bytes
)

// RowPlan decodes the row images of one TABLE_MAP event's table: a decoder per column,
// chosen from the column's binlog type and metadata and the Column it converts into. A table
// map for which newRowPlan gives no plan has its events decoded by go-mysql.
type RowPlan struct {
	types []byte   // the column types of the table map
	metas []uint16 // and their metadata
	cols  []colPlan

	textSize int // the most bytes the values of a row image build (valid values assumed)
}

// colPlan decodes one column.
type colPlan struct {
	col   *Column
	wire  wire
	size  int // the size of fixed-size values; the length prefix of strings and blobs
	prec  int // wireDecimal: digits
	scale int // wireDecimal: decimals
	fsp   int // temporal types: fraction digits (0 to 6)
}

// NewRowPlan returns the plan decoding the rows of t as tm maps them, or nil when a column's
// type, metadata or class is one the plan does not handle.
func NewRowPlan(tm *replication.TableMapEvent, t *Table) *RowPlan {
	n := len(t.Columns)
	if n == 0 || len(tm.ColumnType) != n || len(tm.ColumnMeta) != n {
		return nil
	}
	p := &RowPlan{types: tm.ColumnType, metas: tm.ColumnMeta, cols: make([]colPlan, n)}
	for i := range p.cols {
		cp, ok := planColumn(tm.ColumnType[i], tm.ColumnMeta[i], &t.Columns[i])
		if !ok {
			return nil
		}
		p.cols[i] = cp
		p.textSize += cp.textSize()
	}
	return p
}

// planColumn chooses the decoder of a column from its binlog type and metadata (read as
// go-mysql reads them) and its class.
func planColumn(tp byte, meta uint16, c *Column) (colPlan, bool) {
	p := colPlan{col: c}
	switch tp {
	case mysql.MYSQL_TYPE_TINY:
		p.wire, p.size = wireInt, 1
	case mysql.MYSQL_TYPE_SHORT:
		p.wire, p.size = wireInt, 2
	case mysql.MYSQL_TYPE_INT24:
		p.wire, p.size = wireInt, 3
	case mysql.MYSQL_TYPE_LONG:
		p.wire, p.size = wireInt, 4
	case mysql.MYSQL_TYPE_LONGLONG:
		p.wire, p.size = wireInt, 8
	case mysql.MYSQL_TYPE_YEAR:
		p.wire, p.size = wireYear, 1
	case mysql.MYSQL_TYPE_BIT:
		bits := int(meta>>8)*8 + int(meta&0xff)
		if bits < 1 || bits > 64 {
			return p, false
		}
		p.wire, p.size = wireBit, bitBytes(bits)
	case mysql.MYSQL_TYPE_FLOAT:
		p.wire, p.size = wireFloat, 4
	case mysql.MYSQL_TYPE_DOUBLE:
		p.wire, p.size = wireDouble, 8
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		p.wire, p.prec, p.scale = wireDecimal, int(meta>>8), int(meta&0xff)
		if p.prec < 1 || p.prec > maxDecimalDigits || p.scale > p.prec {
			return p, false
		}
		p.size = decimalSize(p.prec, p.scale)
	case mysql.MYSQL_TYPE_DATE:
		p.wire, p.size = wireDate, 3
	case mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP2, mysql.MYSQL_TYPE_TIME2:
		if meta > 6 {
			return p, false
		}
		p.fsp = int(meta)
		p.wire, p.size = temporalWire(tp, p.fsp)
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		p.wire, p.size = wireString, stringPrefix(int(meta))
	case mysql.MYSQL_TYPE_STRING:
		if !p.planString(meta) {
			return p, false
		}
	case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_GEOMETRY:
		if meta < 1 || meta > 4 {
			return p, false
		}
		p.wire, p.size = wireBlob, int(meta)
	default:
		return p, false
	}
	return p, p.converts()
}

// planString plans a MYSQL_TYPE_STRING column: CHAR and BINARY, or the ENUM or SET its
// metadata names.
func (p *colPlan) planString(meta uint16) bool {
	tp, length := realType(mysql.MYSQL_TYPE_STRING, meta)
	switch tp {
	case mysql.MYSQL_TYPE_STRING:
		p.wire, p.size = wireString, stringPrefix(length)
	case mysql.MYSQL_TYPE_ENUM:
		p.wire, p.size = wireEnum, int(meta&0xff)
		return p.size == 1 || p.size == 2
	case mysql.MYSQL_TYPE_SET:
		p.wire, p.size = wireSet, int(meta&0xff)
		return p.size >= 1 && p.size <= 8
	default:
		return false
	}
	return true
}

// stringPrefix is the size of the length of a string of at most maxLen bytes.
func stringPrefix(maxLen int) int {
	if maxLen < 256 {
		return 1
	}
	return 2
}

// temporalWire returns the wire form and size of DATETIME2, TIMESTAMP2 or TIME2 with fsp
// fraction digits.
func temporalWire(tp byte, fsp int) (wire, int) {
	frac := (fsp + 1) / 2
	switch tp {
	case mysql.MYSQL_TYPE_DATETIME2:
		return wireDateTime2, 5 + frac
	case mysql.MYSQL_TYPE_TIMESTAMP2:
		return wireTimestamp2, 4 + frac
	}
	return wireTime2, 3 + frac
}

// converts reports whether the plan converts the value of its wire form into the column's
// class the way FromBinlog converts go-mysql's value of that type.
func (p *colPlan) converts() bool {
	cl := p.col.class
	switch p.wire {
	case wireInt, wireYear, wireBit, wireEnum, wireSet:
		switch cl {
		case ClassInt, ClassBool, ClassYear, ClassEnum, ClassSet:
			return true
		case ClassBit:
			return p.col.Length <= 64
		}
		return false
	case wireFloat:
		return cl == ClassFloat
	case wireDouble:
		return cl == ClassDouble
	case wireDecimal:
		return cl == ClassDecimal
	case wireDate:
		return cl == ClassDate
	case wireDateTime2:
		return cl == ClassDateTime
	case wireTimestamp2:
		return cl == ClassTimestamp
	case wireTime2:
		return cl == ClassTime
	}
	// wireString, wireBlob
	switch cl {
	case ClassString, ClassBinary, ClassBytes, ClassJSON, ClassGeometry:
		return true
	}
	return false
}

// textSize is the most bytes a valid value of the column builds in the text block.
func (p *colPlan) textSize() int {
	switch p.wire {
	case wireDecimal:
		return p.prec + 3 // sign, point and the 0 of "0.5"
	case wireString, wireBlob:
		if p.col.class == ClassBinary {
			return p.col.Length
		}
		return 0
	}
	switch p.col.class {
	case ClassBit:
		return bitBytes(p.col.Length)
	case ClassSet:
		n := 0
		for _, l := range p.col.Labels {
			n += len(l) + 1
		}
		return n
	}
	return 0
}

// matches reports whether the plan decodes the rows of e: e's table map has the plan's
// column types, every column is in both images, and e is a plain rows event of version 1 or
// 2 (not compressed, not a partial update).
func (p *RowPlan) matches(eventType replication.EventType, e *replication.RowsEvent) bool {
	if p == nil || e.Table == nil || int(e.ColumnCount) != len(p.cols) || !allColumns(e.ColumnBitmap1, len(p.cols)) {
		return false
	}
	switch eventType {
	case replication.WRITE_ROWS_EVENTv1, replication.WRITE_ROWS_EVENTv2,
		replication.DELETE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv2:
	case replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2:
		if !allColumns(e.ColumnBitmap2, len(p.cols)) {
			return false
		}
	default:
		return false
	}
	return string(e.Table.ColumnType) == string(p.types) && slices.Equal(e.Table.ColumnMeta, p.metas)
}

// allColumns reports whether the first n bits of a column bitmap are set.
func allColumns(bitmap []byte, n int) bool {
	if len(bitmap) < (n+7)/8 {
		return false
	}
	for i := range n {
		if bitmap[i/8]&(1<<(i%8)) == 0 {
			return false
		}
	}
	return true
}

// decode returns the values of the row images in data (the rows event body after its
// header), len(p.cols) per image; an update's images are before and after in turn. It
// returns ErrFallback (wrapped) when the event is to be decoded by go-mysql.
func (p *RowPlan) decode(data []byte, update bool) ([]change.Value, error) {
	images, err := p.count(data)
	if err != nil {
		return nil, err
	}
	if update && images%2 != 0 {
		return nil, fmt.Errorf("update without an after image: %w", errTruncated)
	}
	n := len(p.cols)
	vals := make([]change.Value, images*n)
	var text textBlock
	if p.textSize > 0 {
		text.buf = make([]byte, 0, images*p.textSize)
	}
	for i, pos := 0, 0; i < images; i++ {
		size, err := p.decodeImage(data[pos:], vals[i*n:(i+1)*n], &text)
		if err != nil {
			return nil, err
		}
		pos += size
	}
	return vals, nil
}

// count returns the number of row images in data, checking that each is whole.
func (p *RowPlan) count(data []byte) (int, error) {
	images := 0
	for pos := 0; pos < len(data); images++ {
		size, err := p.imageSize(data[pos:])
		if err != nil {
			return 0, err
		}
		pos += size
	}
	return images, nil
}

// imageSize returns the size of the row image at the start of data.
func (p *RowPlan) imageSize(data []byte) (int, error) {
	pos := (len(p.cols) + 7) / 8
	if len(data) < pos {
		return 0, errTruncated
	}
	nulls := data[:pos]
	for i := range p.cols {
		if nulls[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		size, err := p.cols[i].valueSize(data[pos:])
		if err != nil {
			return 0, fmt.Errorf("column %s (%s): %w", p.cols[i].col.Name, p.cols[i].col.class, err)
		}
		pos += size
	}
	return pos, nil
}

// valueSize returns the size of the value at the start of b.
func (p *colPlan) valueSize(b []byte) (int, error) {
	size := p.size
	if p.wire == wireString || p.wire == wireBlob {
		if len(b) < p.size {
			return 0, errTruncated
		}
		n := littleEndian(b[:p.size])
		if n > uint64(len(b)-p.size) {
			return 0, errTruncated
		}
		size += int(n)
	}
	if len(b) < size {
		return 0, errTruncated
	}
	return size, nil
}

// decodeImage decodes one row image at the start of data into row, whose values are zero
// (NULL), and returns its size.
func (p *RowPlan) decodeImage(data []byte, row change.Row, text *textBlock) (int, error) {
	pos := (len(p.cols) + 7) / 8
	if len(data) < pos {
		return 0, errTruncated
	}
	nulls := data[:pos]
	for i := range p.cols {
		if nulls[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		c := &p.cols[i]
		size, err := c.decode(data[pos:], &row[i], text)
		if err != nil {
			return 0, fmt.Errorf("column %s (%s): %w", c.col.Name, c.col.class, err)
		}
		pos += size
	}
	return pos, nil
}

// decode decodes the value at the start of b into dst, which is zero, and returns its size.
func (p *colPlan) decode(b []byte, dst *change.Value, text *textBlock) (int, error) {
	if len(b) < p.size {
		return 0, errTruncated
	}
	var v change.Value
	var err error
	switch p.wire {
	case wireString, wireBlob:
		return p.decodeBytes(b, dst, text)
	case wireDecimal:
		v, err = p.decimal(b[:p.size], text)
	case wireFloat:
		v = change.Float32Value(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case wireDouble:
		v = change.Float64Value(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	case wireDate:
		v, err = date(b[:3])
	case wireDateTime2:
		v, err = dateTime2(b[:p.size], p.fsp)
	case wireTimestamp2:
		v, err = timestamp2(b[:p.size], p.fsp)
	case wireTime2:
		v, err = time2(b[:p.size], p.fsp)
	default:
		n := p.integer(b[:p.size])
		if p.col.medium && p.col.Unsigned {
			n &= 1<<24 - 1
		}
		v, err = p.col.integerValue(n, text)
	}
	store(dst, v)
	return p.size, err
}

// store writes v into dst, which is zero: only the fields v uses, so that a value without
// bytes is stored without the write barrier of a pointer.
func store(dst *change.Value, v change.Value) {
	dst.Kind, dst.Num = v.Kind, v.Num
	if v.Bytes != nil {
		dst.Bytes = v.Bytes
	}
}

// integer reads an integer form as FromBinlog sees go-mysql's value of it: the signed
// integer types widened as binlogInt widens them, the others as go-mysql's int64 or int.
func (p *colPlan) integer(b []byte) uint64 {
	switch p.wire {
	case wireYear:
		if b[0] == 0 {
			return 0
		}
		return uint64(b[0]) + 1900
	case wireBit:
		return bigEndian(b)
	case wireEnum, wireSet:
		return littleEndian(b)
	}
	shift := 64 - 8*uint(len(b))
	n := int64(littleEndian(b)<<shift) >> shift // sign-extended
	if !p.col.Unsigned {
		return uint64(n)
	}
	switch len(b) {
	case 1:
		return uint64(uint8(n))
	case 2:
		return uint64(uint16(n))
	case 3, 4:
		return uint64(uint32(n))
	}
	return uint64(n)
}

// littleEndian reads an unsigned little-endian integer of up to 8 bytes.
func littleEndian(b []byte) uint64 {
	var n uint64
	for i := len(b) - 1; i >= 0; i-- {
		n = n<<8 | uint64(b[i])
	}
	return n
}

// bigEndian reads an unsigned big-endian integer of up to 8 bytes.
func bigEndian(b []byte) uint64 {
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return n
}

// integerValue is fromInteger with the bytes it builds (BIT, SET) in text and ENUM labels
// not copied.
func (c *Column) integerValue(n uint64, text *textBlock) (change.Value, error) {
	switch c.class {
	case ClassInt:
		if c.Unsigned {
			return change.UintValue(n), nil
		}
		return change.IntValue(int64(n)), nil
	case ClassBit:
		if c.Length == 1 {
			return change.BoolValue(n != 0), nil
		}
		start := len(text.buf)
		for i := bitBytes(c.Length) - 1; i >= 0; i-- {
			text.buf = append(text.buf, byte(n>>(8*i)))
		}
		return change.BytesValue(text.since(start)), nil
	case ClassEnum:
		if n == 0 || n > uint64(len(c.Labels)) {
			return c.enumLabel(n) // the empty string, or the error
		}
		return change.StringValue(stringBytes(c.Labels[n-1])), nil
	case ClassSet:
		return c.setValue(n, text)
	}
	return c.fromInteger(n)
}

// setValue is setLabels writing into text.
func (c *Column) setValue(mask uint64, text *textBlock) (change.Value, error) {
	if len(c.Labels) < 64 && mask>>len(c.Labels) != 0 {
		return c.setLabels(mask) // the error
	}
	start := len(text.buf)
	for i, l := range c.Labels {
		if mask&(1<<i) == 0 {
			continue
		}
		if len(text.buf) > start {
			text.buf = append(text.buf, ',')
		}
		text.buf = append(text.buf, l...)
	}
	return change.StringValue(text.since(start)), nil
}

// decodeBytes decodes the string and blob forms into dst: a length, then the bytes, which
// the value aliases.
func (p *colPlan) decodeBytes(b []byte, dst *change.Value, text *textBlock) (int, error) {
	end, err := p.valueSize(b)
	if err != nil {
		return 0, err
	}
	s := b[p.size:end:end]
	switch c := p.col; {
	case c.class == ClassBinary:
		dst.Kind, dst.Bytes = change.Bytes, text.padded(s, c.Length)
	case c.dec == nil && (c.class == ClassString || c.class == ClassBytes):
		dst.Kind, dst.Bytes = c.ValueKind(), s // fromText, without transcoding
	default:
		v, err := c.fromText(s)
		if err != nil {
			return 0, err
		}
		store(dst, v)
	}
	return end, nil
}

// textBlock holds the bytes an event's values are built of. Values are clipped slices of
// it; when it grows, the earlier values keep the old array.
type textBlock struct {
	buf []byte
}

// since returns the bytes appended from start on, never nil.
func (t *textBlock) since(start int) []byte {
	if len(t.buf) == start {
		return []byte{}
	}
	return t.buf[start:len(t.buf):len(t.buf)]
}

// padded is padBinary building the padded copy in t.
func (t *textBlock) padded(b []byte, n int) []byte {
	if len(b) >= n {
		return b
	}
	start := len(t.buf)
	t.buf = append(t.buf, b...)
	t.buf = append(t.buf, make([]byte, n-len(b))...)
	return t.since(start)
}

// maxDecimalDigits is the largest DECIMAL precision of MySQL and MariaDB.
const maxDecimalDigits = 65

// decimalDigitBytes is the size of a group of fewer than 9 decimal digits.
var decimalDigitBytes = [9]int{0, 1, 1, 2, 2, 3, 3, 4, 4}

// decimalSize is the size of a packed DECIMAL(prec, scale): groups of 9 digits in 4 bytes
// either side of the point, a shorter group for the remaining digits.
func decimalSize(prec, scale int) int {
	intg := prec - scale
	return intg/9*4 + decimalDigitBytes[intg%9] + scale/9*4 + decimalDigitBytes[scale%9]
}

// decimal writes the text of a packed decimal into text: the text go-mysql's decodeDecimal
// makes, which FromText then checks against the column's scale.
func (p *colPlan) decimal(b []byte, text *textBlock) (change.Value, error) {
	var d [32]byte // decimalSize is at most 30 (DECIMAL(64,3)) for maxDecimalDigits
	copy(d[:], b[:p.size])
	negative := d[0]&0x80 == 0
	d[0] ^= 0x80
	start := len(text.buf)
	if negative {
		for i := range p.size {
			d[i] = ^d[i]
		}
		text.buf = append(text.buf, '-')
	}
	var err error
	text.buf, err = appendDecimalDigits(text.buf, d[:p.size], p.prec-p.scale, p.scale)
	if err != nil {
		return change.Value{}, err
	}
	digits := text.since(start)
	if !isDecimalText(digits, p.col.Scale) {
		return change.Value{}, fmt.Errorf("%q is not a decimal with %d decimals", digits, p.col.Scale)
	}
	return change.DecimalValue(digits), nil
}

// appendDecimalDigits appends the digits of a packed decimal whose sign is removed (d is
// its magnitude), as go-mysql writes them: the integer part without leading zeros ("0"
// when it is zero), then the point and scale decimals.
func appendDecimalDigits(dst, d []byte, intg, scale int) ([]byte, error) {
	pos := decimalDigitBytes[intg%9]
	lead := bigEndian(d[:pos])
	leading := lead == 0 // no digit written yet
	if !leading {
		dst = strconv.AppendUint(dst, lead, 10)
	}
	for range intg / 9 {
		v := bigEndian(d[pos : pos+4])
		pos += 4
		switch {
		case leading && v != 0:
			leading = false
			dst = strconv.AppendUint(dst, v, 10)
		case !leading:
			if v > 999_999_999 {
				return dst, ErrFallback
			}
			dst = appendPadded(dst, v, 9)
		}
	}
	if leading {
		dst = append(dst, '0')
	}
	if scale == 0 {
		return dst, nil
	}
	dst = append(dst, '.')
	for range scale / 9 {
		v := bigEndian(d[pos : pos+4])
		pos += 4
		if v > 999_999_999 {
			return dst, ErrFallback
		}
		dst = appendPadded(dst, v, 9)
	}
	if rest := scale % 9; rest > 0 {
		dst = appendPadded(dst, bigEndian(d[pos:pos+decimalDigitBytes[rest]]), rest)
	}
	return dst, nil
}

// appendPadded appends v in decimal with leading zeros to width digits (more digits when v
// has more).
func appendPadded(dst []byte, v uint64, width int) []byte {
	var buf [20]byte
	s := strconv.AppendUint(buf[:0], v, 10)
	for range width - len(s) {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// date reads a DATE: go-mysql writes it as "YYYY-MM-DD", which dateText reads back.
func date(b []byte) (change.Value, error) {
	v := littleEndian(b)
	y, m, d := int(v>>9), int(v>>5&0xf), int(v&0x1f)
	if y > 9999 {
		return change.Value{}, ErrFallback
	}
	return change.DateValue(y, m, d), nil
}

// fraction reads the fractional seconds of DATETIME2 and TIMESTAMP2 in microseconds, as
// go-mysql scales them (the bytes are not range-checked).
func fraction(b []byte, fsp int) int64 {
	switch fsp {
	case 1, 2:
		return int64(b[0]) * 10_000
	case 3, 4:
		return int64(binary.BigEndian.Uint16(b)) * 100
	case 5, 6:
		return int64(bigEndian(b[:3]))
	}
	return 0
}

var pow10 = [7]int64{1, 10, 100, 1_000, 10_000, 100_000, 1_000_000}

// exactFraction reports whether micros is a fraction of fsp digits: one that go-mysql's text
// of it (cut to fsp digits) reads back as micros.
func exactFraction(micros int64, fsp int) bool {
	return micros >= 0 && micros < 1_000_000 && micros%pow10[6-fsp] == 0
}

// datetimeOffset is the packed DATETIME2 of 0000-00-00 00:00:00.
const datetimeOffset = 0x80_0000_0000

// dateTime2 reads a DATETIME2 as a wall clock. go-mysql gives a time.Time for the dates from
// 1970 on without zero parts (normalised by time.Date) and text otherwise (not normalised);
// both agree on the valid dates and times this handles.
func dateTime2(b []byte, fsp int) (change.Value, error) {
	packed := int64(bigEndian(b[:5])) - datetimeOffset
	frac := fraction(b[5:], fsp)
	if packed == 0 { // the zero datetime
		if frac >= 1_000_000 {
			return change.Value{}, ErrFallback
		}
		return change.Value{}, nil
	}
	if packed < 0 || !exactFraction(frac, fsp) {
		return change.Value{}, ErrFallback
	}
	ymd, hms := packed>>17, packed&(1<<17-1)
	ym := ymd >> 5
	year, month, day := int(ym/13), int(ym%13), int(ymd&0x1f)
	hour, minute, second := int(hms>>12), int(hms>>6&0x3f), int(hms&0x3f)
	if year > 9999 || hour > 23 || minute > 59 || second > 59 ||
		month != 0 && day > daysIn(month, year) {
		return change.Value{}, ErrFallback
	}
	return change.DateTimeValue(year, month, day, hour, minute, second, int(frac)), nil
}

// daysIn returns the number of days of a month of the proleptic Gregorian calendar.
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// timestamp2 reads a TIMESTAMP2 as Unix microseconds; 0 seconds is the zero timestamp.
func timestamp2(b []byte, fsp int) (change.Value, error) {
	sec := int64(binary.BigEndian.Uint32(b))
	frac := fraction(b[4:], fsp)
	if sec == 0 {
		if frac >= 1_000_000 {
			return change.Value{}, ErrFallback
		}
		return change.Value{}, nil
	}
	return change.TimestampValue(sec*1_000_000 + frac), nil
}

// Offsets of the packed TIME2 forms.
const (
	TimeOffset     = 0x80_0000        // the 3 integer bytes
	TimeFracOffset = 0x8000_0000_0000 // the 6 bytes of fsp 5 and 6
)

// time2 reads a TIME2 as signed microseconds, computing go-mysql's decodeTime2 (negative
// values keep their fraction in reverse order).
func time2(b []byte, fsp int) (change.Value, error) {
	var packed int64 // hours, minutes, seconds << 24 | microseconds
	intPart := int64(bigEndian(b[:3])) - TimeOffset
	switch fsp {
	case 1, 2:
		frac := int64(b[3])
		if intPart < 0 && frac != 0 {
			intPart++
			frac -= 0x100
		}
		packed = intPart<<24 + frac*10_000
	case 3, 4:
		frac := int64(binary.BigEndian.Uint16(b[3:]))
		if intPart < 0 && frac != 0 {
			intPart++
			frac -= 0x10000
		}
		packed = intPart<<24 + frac*100
	case 5, 6:
		packed = int64(bigEndian(b[:6])) - TimeFracOffset
	default:
		packed = intPart << 24
	}
	negative := packed < 0
	if negative {
		packed = -packed
	}
	hms, micros := packed>>24, packed&(1<<24-1)
	hour, minute, second := hms>>12&0x3ff, hms>>6&0x3f, hms&0x3f
	if hour > 838 || minute > 59 || second > 59 || !exactFraction(micros, fsp) {
		return change.Value{}, ErrFallback
	}
	total := ((hour*60+minute)*60+second)*1_000_000 + micros
	if negative {
		total = -total
	}
	return change.TimeValue(total), nil
}
