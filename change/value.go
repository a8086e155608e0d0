package change

import "math"

// Kind says what a Value holds and so how it renders in JSON (see docs/output.md).
type Kind uint8

// The kinds of value. The comment of each says which field of Value holds it.
const (
	Null      Kind = iota // SQL NULL, a zero date, the zero TIMESTAMP
	Bool                  // Num: 0 or 1 (TINYINT(1), BIT(1))
	Int                   // Num: int64 bits (signed integers, YEAR)
	Uint                  // Num: uint64 (unsigned integers)
	Float32               // Num: math.Float64bits of the float32 value widened to float64
	Float64               // Num: math.Float64bits
	Decimal               // Bytes: exact decimal text at the column's scale, e.g. "-12.500"
	String                // Bytes: UTF-8 text (CHAR, VARCHAR, TEXT, ENUM label, SET labels)
	Bytes                 // Bytes: raw bytes, rendered base64 (BINARY padded, VARBINARY, BLOB, BIT(n>1))
	JSON                  // Bytes: compact JSON document text
	Date                  // Num: packed civil date, see DateValue
	DateTime              // Num: packed wall-clock date and time, see DateTimeValue
	Timestamp             // Num: int64 microseconds since the Unix epoch, UTC
	Time                  // Num: int64 signed microseconds (TIME may exceed 24h and be negative)
	Geometry              // Bytes: the GeoJSON-like text {"type":…,"coordinates":…,"srid":n}
)

var kindNames = [...]string{"null", "bool", "int", "uint", "float32", "float64", "decimal",
	"string", "bytes", "json", "date", "datetime", "timestamp", "time", "geometry"}

// String returns the lower-case name of the kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + itoa(int64(k)) + ")"
}

// Value is one column value. The zero Value is NULL. Values are small and passed by value;
// Bytes may alias a decoder's buffer and must not be modified.
type Value struct {
	Kind  Kind
	Num   uint64
	Bytes []byte
}

// Row is the values of a table's columns in column order.
type Row []Value

// BoolValue returns a Bool value.
func BoolValue(b bool) Value {
	if b {
		return Value{Kind: Bool, Num: 1}
	}
	return Value{Kind: Bool}
}

// IntValue returns an Int value.
func IntValue(i int64) Value { return Value{Kind: Int, Num: uint64(i)} }

// UintValue returns a Uint value.
func UintValue(u uint64) Value { return Value{Kind: Uint, Num: u} }

// Float32Value returns a Float32 value.
func Float32Value(f float32) Value { return Value{Kind: Float32, Num: math.Float64bits(float64(f))} }

// Float64Value returns a Float64 value.
func Float64Value(f float64) Value { return Value{Kind: Float64, Num: math.Float64bits(f)} }

// DecimalValue returns a Decimal value from exact decimal text (digits, optional sign and point).
func DecimalValue(text []byte) Value { return Value{Kind: Decimal, Bytes: text} }

// StringValue returns a String value holding UTF-8 text.
func StringValue(s []byte) Value { return Value{Kind: String, Bytes: s} }

// BytesValue returns a Bytes value.
func BytesValue(b []byte) Value { return Value{Kind: Bytes, Bytes: b} }

// JSONValue returns a JSON value holding compact JSON text.
func JSONValue(doc []byte) Value { return Value{Kind: JSON, Bytes: doc} }

// GeometryValue returns a Geometry value holding its rendered JSON text.
func GeometryValue(text []byte) Value { return Value{Kind: Geometry, Bytes: text} }

// Bool reports the value of a Bool.
func (v Value) Bool() bool { return v.Num != 0 }

// Int returns the value of an Int.
func (v Value) Int() int64 { return int64(v.Num) }

// Float returns the value of a Float32 or Float64, widened to float64.
func (v Value) Float() float64 { return math.Float64frombits(v.Num) }

// IsNull reports whether the value is NULL.
func (v Value) IsNull() bool { return v.Kind == Null }

func itoa(i int64) string {
	var b [20]byte
	n := len(b)
	neg := i < 0
	u := uint64(i)
	if neg {
		u = uint64(-i)
	}
	for {
		n--
		b[n] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		n--
		b[n] = '-'
	}
	return string(b[n:])
}
