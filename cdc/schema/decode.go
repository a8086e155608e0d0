package schema

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/ingestkit/ingest/change"
)

// Class is how a column's values are decoded; it follows from the column's SQL type and
// the facts schema.go gathers (signedness, display width, collation, JSON check).
type Class uint8

const (
	ClassInt       Class = iota + 1 // TINYINT…BIGINT; Unsigned selects Uint
	ClassBool                       // TINYINT(1) with treat-tinyint1-as-boolean
	ClassYear                       // YEAR
	ClassFloat                      // FLOAT
	ClassDouble                     // DOUBLE
	ClassDecimal                    // DECIMAL(p,s); Scale
	ClassDate                       // DATE
	ClassDateTime                   // DATETIME(p)
	ClassTimestamp                  // TIMESTAMP(p)
	ClassTime                       // TIME(p)
	ClassString                     // CHAR, VARCHAR, TEXT; Charset
	ClassBinary                     // BINARY(n); Length is n bytes
	ClassBytes                      // VARBINARY, BLOB
	ClassBit                        // BIT(n); Length is n bits
	ClassEnum                       // ENUM; Labels
	ClassSet                        // SET; Labels
	ClassJSON                       // JSON (MySQL binary JSON or MariaDB LONGTEXT json_valid)
	ClassGeometry                   // GEOMETRY family
	ClassUUID                       // MariaDB UUID; Length 16 (see fixedbin.go)
	ClassInet4                      // MariaDB INET4; Length 4
	ClassInet6                      // MariaDB INET6; Length 16
)

var classNames = [...]string{"", "int", "bool", "year", "float", "double", "decimal", "date",
	"datetime", "timestamp", "time", "string", "binary", "bytes", "bit", "enum", "set", "json",
	"geometry", "uuid", "inet4", "inet6"}

// String returns the class's name, e.g. "datetime".
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// Column describes one column of a captured table: everything needed to turn a binlog value
// or the text a SELECT returns into a [change.Value]. Build it with the schema functions of
// this package; the zero Column is not usable.
type Column struct {
	// Name is the column name.
	Name string
	// SQLType is information_schema.COLUMNS.COLUMN_TYPE, e.g. "decimal(20,6)", when known.
	SQLType string
	// Unsigned is set for UNSIGNED integer columns.
	Unsigned bool
	// Charset is the character set of a text column ("utf8mb4", "latin1", …).
	Charset string
	// Length is the byte length of BINARY(n) and the bit count of BIT(n).
	Length int
	// Scale is the number of decimals of DECIMAL and the fractional digits of temporal types.
	Scale int
	// Labels holds the members of an ENUM or SET in definition order.
	Labels []string
	// NotNull says the column is declared NOT NULL.
	NotNull bool
	// Comment is the column's COMMENT ("" when none, or not known).
	Comment string

	class  Class
	medium bool    // MEDIUMINT: go-mysql sign-extends its 24 bits into an int32
	dec    decoder // nil when the text is UTF-8 already
}

// ValueKind returns the kind of the values the column decodes to (Null aside).
func (c *Column) ValueKind() change.Kind {
	return classKinds[c.class]
}

var classKinds = [...]change.Kind{ClassInt: change.Int, ClassBool: change.Bool,
	ClassYear: change.Int, ClassFloat: change.Float32, ClassDouble: change.Float64,
	ClassDecimal: change.Decimal, ClassDate: change.Date, ClassDateTime: change.DateTime,
	ClassTimestamp: change.Timestamp, ClassTime: change.Time, ClassString: change.String,
	ClassBinary: change.Bytes, ClassBytes: change.Bytes, ClassBit: change.Bytes,
	ClassEnum: change.String, ClassSet: change.String, ClassJSON: change.JSON,
	ClassGeometry: change.Geometry, ClassUUID: change.String, ClassInet4: change.String,
	ClassInet6: change.String}

// FromBinlog converts a value as go-mysql's row decoder returns it (BinlogSyncer with
// ParseTime, TimestampStringLocation UTC and UseDecimal off) into a change.Value.
func (c *Column) FromBinlog(v any) (change.Value, error) {
	if v == nil {
		return change.Value{}, nil
	}
	val, err := c.fromBinlog(v)
	if err != nil {
		return change.Value{}, fmt.Errorf("column %s (%s): binlog value %T %v: %w", c.Name, c.class, v, v, err)
	}
	return val, nil
}

func (c *Column) fromBinlog(v any) (change.Value, error) {
	switch c.class {
	case ClassInt, ClassBool, ClassYear, ClassBit, ClassEnum, ClassSet:
		n, ok := binlogInt(v, c.Unsigned)
		if !ok {
			return change.Value{}, errUnexpectedType
		}
		if c.medium && c.Unsigned {
			n &= 1<<24 - 1
		}
		return c.fromInteger(n)
	case ClassFloat:
		if f, ok := v.(float32); ok {
			return change.Float32Value(f), nil
		}
	case ClassDouble:
		if f, ok := v.(float64); ok {
			return change.Float64Value(f), nil
		}
	case ClassDateTime, ClassTimestamp:
		if t, ok := v.(time.Time); ok {
			return c.fromTime(t), nil
		}
	case ClassBinary:
		if s, ok := v.(string); ok {
			return change.BytesValue(padBinary(stringBytes(s), c.Length)), nil
		}
	case ClassUUID, ClassInet4, ClassInet6:
		if s, ok := v.(string); ok {
			return c.fixedBinFromBytes(stringBytes(s))
		}
		return change.Value{}, errUnexpectedType
	}
	switch x := v.(type) {
	case string:
		return c.FromText(stringBytes(x))
	case []byte:
		return c.FromText(x)
	}
	return change.Value{}, errUnexpectedType
}

var errUnexpectedType = fmt.Errorf("unexpected go type for the column type")

// binlogInt returns an integer value of go-mysql as uint64 bits, reinterpreting the
// signed types go-mysql uses as unsigned of the same width when unsigned is set.
func binlogInt(v any, unsigned bool) (uint64, bool) {
	switch x := v.(type) {
	case int8:
		if unsigned {
			return uint64(uint8(x)), true
		}
		return uint64(int64(x)), true
	case int16:
		if unsigned {
			return uint64(uint16(x)), true
		}
		return uint64(int64(x)), true
	case int32:
		if unsigned {
			return uint64(uint32(x)), true
		}
		return uint64(int64(x)), true
	case int64:
		return uint64(x), true
	case int:
		return uint64(x), true
	}
	return 0, false
}

// fromInteger converts the integer forms: ints, YEAR, BIT as a number, ENUM index, SET mask.
func (c *Column) fromInteger(n uint64) (change.Value, error) {
	switch c.class {
	case ClassBool:
		return change.BoolValue(n != 0), nil
	case ClassBit:
		if c.Length == 1 {
			return change.BoolValue(n != 0), nil
		}
		b := make([]byte, 8)
		binary.BigEndian.PutUint64(b, n)
		return change.BytesValue(b[8-bitBytes(c.Length):]), nil
	case ClassEnum:
		return c.enumLabel(n)
	case ClassSet:
		return c.setLabels(n)
	}
	if c.Unsigned {
		return change.UintValue(n), nil
	}
	return change.IntValue(int64(n)), nil
}

func bitBytes(bits int) int { return (bits + 7) / 8 }

func (c *Column) enumLabel(i uint64) (change.Value, error) {
	if i == 0 { // the "invalid value" MySQL stores for a bad ENUM in non-strict mode
		return change.StringValue([]byte{}), nil
	}
	if i > uint64(len(c.Labels)) {
		return change.Value{}, fmt.Errorf("enum index %d beyond %d labels", i, len(c.Labels))
	}
	return change.StringValue([]byte(c.Labels[i-1])), nil
}

func (c *Column) setLabels(mask uint64) (change.Value, error) {
	if len(c.Labels) < 64 && mask>>len(c.Labels) != 0 {
		return change.Value{}, fmt.Errorf("set mask %#x beyond %d members", mask, len(c.Labels))
	}
	var b []byte
	for i, l := range c.Labels {
		if mask&(1<<i) == 0 {
			continue
		}
		if b != nil {
			b = append(b, ',')
		}
		b = append(b, l...)
	}
	if b == nil {
		b = []byte{}
	}
	return change.StringValue(b), nil
}

// fromTime converts go-mysql's ParseTime values: DATETIME as a wall clock labelled UTC,
// TIMESTAMP as an instant (in whatever location).
func (c *Column) fromTime(t time.Time) change.Value {
	if c.class == ClassTimestamp {
		return change.TimestampValue(t.UnixMicro())
	}
	return change.DateTimeValue(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(),
		t.Nanosecond()/1000)
}

// FromText converts a value in the text form a SELECT returns over the text protocol into a
// change.Value. The snapshot must read with time_zone '+00:00' (TIMESTAMP text is taken as
// UTC) and character_set_results = NULL (text arrives in the column's own character set and
// is transcoded here exactly as binlog text is). A nil b is NULL.
func (c *Column) FromText(b []byte) (change.Value, error) {
	if b == nil {
		return change.Value{}, nil
	}
	v, err := c.fromText(b)
	if err != nil {
		return change.Value{}, fmt.Errorf("column %s (%s): value %q: %w", c.Name, c.class, b, err)
	}
	return v, nil
}

// FromOwnedText is FromText for text the caller hands over (the snapshot's row buffers): a
// JSON document is compacted where it is instead of into a copy.
func (c *Column) FromOwnedText(b []byte) (change.Value, error) {
	if c.class == ClassJSON && c.dec == nil && len(b) > 0 {
		return change.JSONValue(compactJSONInPlace(b)), nil
	}
	return c.FromText(b)
}

func (c *Column) fromText(b []byte) (change.Value, error) {
	switch c.class {
	case ClassInt, ClassYear, ClassBool:
		return c.intText(b)
	case ClassFloat:
		f, err := strconv.ParseFloat(unsafeString(b), 32)
		return change.Float32Value(float32(f)), err
	case ClassDouble:
		f, err := strconv.ParseFloat(unsafeString(b), 64)
		return change.Float64Value(f), err
	case ClassDecimal:
		return c.decimalText(b)
	case ClassDate:
		return dateText(b)
	case ClassDateTime:
		return dateTimeText(b, false)
	case ClassTimestamp:
		return dateTimeText(b, true)
	case ClassTime:
		return timeText(b)
	case ClassBinary:
		return change.BytesValue(padBinary(b, c.Length)), nil
	case ClassBytes:
		return change.BytesValue(b), nil
	case ClassBit:
		return c.bitText(b)
	case ClassJSON:
		return c.jsonText(b)
	case ClassGeometry:
		g, err := geometryJSON(b)
		return change.GeometryValue(g), err
	case ClassUUID, ClassInet4, ClassInet6:
		return c.fixedBinFromText(b)
	}
	// ClassString, ClassEnum and ClassSet: labels and text in the column's character set.
	return c.stringText(b)
}

func (c *Column) intText(b []byte) (change.Value, error) {
	s := unsafeString(b)
	if c.Unsigned {
		u, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return change.Value{}, err
		}
		return c.fromInteger(u)
	}
	i, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return change.Value{}, err
	}
	return c.fromInteger(uint64(i))
}

func (c *Column) decimalText(b []byte) (change.Value, error) {
	if !isDecimalText(b, c.Scale) {
		return change.Value{}, fmt.Errorf("not a decimal with %d decimals", c.Scale)
	}
	return change.DecimalValue(trimLeadingZeros(b)), nil
}

// trimLeadingZeros drops the zeros a ZEROFILL column pads the integer part of its text with
// ("0123.4569" is 123.4569, "00000000" is 0), as the binlog carries the number.
func trimLeadingZeros(b []byte) []byte {
	i := 0
	for i+1 < len(b) && b[i] == '0' && b[i+1] != '.' {
		i++
	}
	return b[i:]
}

// isDecimalText reports whether b is [-]digits[.digits] with exactly scale decimals.
func isDecimalText(b []byte, scale int) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	intPart, frac, hasPoint := bytes.Cut(b, []byte{'.'})
	if len(intPart) == 0 || !allDigits(intPart) || !allDigits(frac) {
		return false
	}
	if scale == 0 {
		return !hasPoint
	}
	return hasPoint && len(frac) == scale
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (c *Column) bitText(b []byte) (change.Value, error) {
	if c.Length == 1 {
		return change.BoolValue(len(b) > 0 && b[len(b)-1] != 0), nil
	}
	n := bitBytes(c.Length)
	if len(b) > n {
		return change.Value{}, fmt.Errorf("%d bytes for BIT(%d)", len(b), c.Length)
	}
	out := make([]byte, n)
	copy(out[n-len(b):], b)
	return change.BytesValue(out), nil
}

func (c *Column) jsonText(b []byte) (change.Value, error) {
	if len(b) == 0 { // MySQL writes an empty document for NULL forced into NOT NULL
		return change.Value{}, nil
	}
	doc, err := c.transcode(b)
	if err != nil {
		return change.Value{}, err
	}
	return change.JSONValue(compactJSON(doc)), nil
}

func (c *Column) stringText(b []byte) (change.Value, error) {
	s, err := c.transcode(b)
	if err != nil {
		return change.Value{}, err
	}
	return change.StringValue(s), nil
}

func (c *Column) transcode(b []byte) ([]byte, error) {
	if c.dec == nil {
		return b, nil
	}
	return c.dec.decode(b)
}

// padBinary pads BINARY(n) to n bytes with 0x00; the binlog strips the padding.
func padBinary(b []byte, n int) []byte {
	if len(b) >= n {
		return b
	}
	out := make([]byte, n)
	copy(out, b)
	return out
}

// dateText parses "YYYY-MM-DD"; dates with a zero part are Null.
func dateText(b []byte) (change.Value, error) {
	y, m, d, ok := parseDate(b)
	if !ok || len(b) != 10 {
		return change.Value{}, errBadTemporal
	}
	return change.DateValue(y, m, d), nil
}

var errBadTemporal = fmt.Errorf("bad temporal text")

func parseDate(b []byte) (y, m, d int, ok bool) {
	if len(b) < 10 || b[4] != '-' || b[7] != '-' {
		return 0, 0, 0, false
	}
	y, ok1 := digits(b[0:4])
	m, ok2 := digits(b[5:7])
	d, ok3 := digits(b[8:10])
	return y, m, d, ok1 && ok2 && ok3
}

// dateTimeText parses "YYYY-MM-DD HH:MM:SS[.ffffff]" (a wall clock, or for a TIMESTAMP the
// UTC clock of the instant). Zero parts give Null.
func dateTimeText(b []byte, utcInstant bool) (change.Value, error) {
	y, mo, d, ok := parseDate(b)
	if !ok || len(b) < 19 || b[10] != ' ' {
		return change.Value{}, errBadTemporal
	}
	h, mi, s, us, ok := parseClock(b[11:])
	if !ok || h > 23 {
		return change.Value{}, errBadTemporal
	}
	if y == 0 || mo == 0 || d == 0 {
		return change.Value{}, nil
	}
	if !utcInstant {
		return change.DateTimeValue(y, mo, d, h, mi, s, us), nil
	}
	t := time.Date(y, time.Month(mo), d, h, mi, s, us*1000, time.UTC)
	return change.TimestampValue(t.UnixMicro()), nil
}

// parseClock parses "HH:MM:SS[.f…]" with 2 or more hour digits and up to 6 fraction digits.
func parseClock(b []byte) (h, m, s, us int, ok bool) {
	i := bytes.IndexByte(b, ':')
	if i < 2 || len(b) < i+6 || b[i+3] != ':' {
		return 0, 0, 0, 0, false
	}
	h, ok1 := digits(b[:i])
	m, ok2 := digits(b[i+1 : i+3])
	s, ok3 := digits(b[i+4 : i+6])
	rest := b[i+6:]
	ok = ok1 && ok2 && ok3 && m < 60 && s < 60
	if len(rest) == 0 {
		return h, m, s, 0, ok
	}
	if rest[0] != '.' || len(rest) < 2 || len(rest) > 7 {
		return 0, 0, 0, 0, false
	}
	us, ok4 := digits(rest[1:])
	for n := len(rest) - 1; n < 6; n++ {
		us *= 10
	}
	return h, m, s, us, ok && ok4
}

func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, len(b) > 0 && len(b) <= 9
}

// timeText parses "[-]HHH:MM:SS[.ffffff]" into signed microseconds.
func timeText(b []byte) (change.Value, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	h, m, s, us, ok := parseClock(b)
	if !ok || h > 838 {
		return change.Value{}, errBadTemporal
	}
	micros := ((int64(h)*60+int64(m))*60+int64(s))*1_000_000 + int64(us)
	if neg {
		micros = -micros
	}
	return change.TimeValue(micros), nil
}

// stringBytes returns the bytes of s without copying. go-mysql builds its strings over the
// event buffer, which is never modified, and change.Value.Bytes is read-only.
func stringBytes(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// unsafeString views b as a string for parsing, without copying.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// DescribeValue renders a Value in the package's debug form "kind:text", used by the golden
// tests and in error messages.
func DescribeValue(v change.Value) string {
	var sb strings.Builder
	sb.WriteString(v.Kind.String())
	sb.WriteByte(':')
	switch v.Kind {
	case change.Null:
	case change.Bool:
		sb.WriteString(strconv.FormatBool(v.Bool()))
	case change.Int:
		sb.WriteString(strconv.FormatInt(v.Int(), 10))
	case change.Uint:
		sb.WriteString(strconv.FormatUint(v.Num, 10))
	case change.Float32:
		sb.WriteString(strconv.FormatFloat(v.Float(), 'g', -1, 32))
	case change.Float64:
		sb.Write(appendESNumber(nil, v.Float()))
	case change.Date:
		y, m, d := v.Date()
		fmt.Fprintf(&sb, "%04d-%02d-%02d", y, m, d)
	case change.DateTime:
		y, mo, d := v.Date()
		h, mi, s, us := v.Clock()
		fmt.Fprintf(&sb, "%04d-%02d-%02d %02d:%02d:%02d.%06d", y, mo, d, h, mi, s, us)
	case change.Timestamp:
		sb.WriteString(time.UnixMicro(v.Micros()).UTC().Format("2006-01-02 15:04:05.000000Z"))
	case change.Time:
		sb.WriteString(formatTimeMicros(v.Micros()))
	case change.Bytes:
		fmt.Fprintf(&sb, "%x", v.Bytes)
	default:
		sb.WriteString(strconv.Quote(string(v.Bytes)))
	}
	return sb.String()
}

func formatTimeMicros(us int64) string {
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	s := us / 1_000_000
	return fmt.Sprintf("%s%02d:%02d:%02d.%06d", sign, s/3600, s/60%60, s%60, us%1_000_000)
}
