package schema

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ingestkit/ingest/change"
)

// The binary protocol (the result of a prepared statement, COM_STMT_EXECUTE) sends integers,
// FLOAT, DOUBLE and the temporal types in fixed binary forms, and every other type as the
// text the text protocol sends. FromBinary decodes the fixed forms; BinaryText renders them
// as the text protocol would, for chunk bounds.

// FromBinary converts a value of the binary protocol's fixed forms into a change.Value equal
// to what FromText gives for the same value in the text protocol (read with the same session
// settings). b is the value without the length byte that precedes a temporal value:
//   - integers and YEAR: 1, 2, 4 or 8 bytes, little-endian;
//   - FLOAT: 4 bytes; DOUBLE: 8 (a FLOAT read as DOUBLE is accepted too);
//   - DATE, DATETIME, TIMESTAMP: 0, 4, 7 or 11 bytes (year 2, month, day, hour, minute,
//     second, microseconds 4);
//   - TIME: 0, 8 or 12 bytes (negative, days 4, hour, minute, second, microseconds 4).
//
// A column of any other type has no fixed form, and FromBinary refuses it.
func (c *Column) FromBinary(b []byte) (change.Value, error) {
	v, err := c.fromBinary(b)
	if err != nil {
		return change.Value{}, fmt.Errorf("column %s (%s): binary value % x: %w", c.Name, c.class, b, err)
	}
	return v, nil
}

// BinaryForm reports whether the binary protocol sends the column's values in a fixed form
// (FromBinary) rather than as text (FromText).
func (c *Column) BinaryForm() bool {
	switch c.class {
	case ClassInt, ClassBool, ClassYear, ClassFloat, ClassDouble, ClassDate, ClassDateTime, ClassTimestamp, ClassTime:
		return true
	}
	return false
}

var (
	errBinaryLength = fmt.Errorf("wrong length for the binary protocol")
	errNoBinaryForm = fmt.Errorf("the column type has no fixed binary form")
)

func (c *Column) fromBinary(b []byte) (change.Value, error) {
	switch c.class {
	case ClassInt, ClassBool, ClassYear:
		n, ok := c.binaryInt(b)
		if !ok {
			return change.Value{}, errBinaryLength
		}
		return c.fromInteger(n)
	case ClassFloat:
		switch len(b) {
		case 4:
			return change.Float32Value(math.Float32frombits(binary.LittleEndian.Uint32(b))), nil
		case 8:
			return change.Float32Value(float32(math.Float64frombits(binary.LittleEndian.Uint64(b)))), nil
		}
		return change.Value{}, errBinaryLength
	case ClassDouble:
		if len(b) != 8 {
			return change.Value{}, errBinaryLength
		}
		return change.Float64Value(math.Float64frombits(binary.LittleEndian.Uint64(b))), nil
	case ClassDate, ClassDateTime, ClassTimestamp:
		d, ok := binaryDateTime(b)
		if !ok {
			return change.Value{}, errBinaryLength
		}
		return c.fromDateTime(d), nil
	case ClassTime:
		micros, ok := binaryTime(b)
		if !ok {
			return change.Value{}, errBinaryLength
		}
		return change.TimeValue(micros), nil
	}
	return change.Value{}, errNoBinaryForm
}

// binaryInt reads an integer of 1, 2, 4 or 8 bytes (YEAR: 2), sign-extended unless the
// column is unsigned, as uint64 bits.
func (c *Column) binaryInt(b []byte) (uint64, bool) {
	if c.class == ClassYear { // 2 bytes, 0 or 1901…2155
		if len(b) != 2 {
			return 0, false
		}
		return uint64(binary.LittleEndian.Uint16(b)), true
	}
	switch len(b) {
	case 1:
		if c.Unsigned {
			return uint64(b[0]), true
		}
		return uint64(int64(int8(b[0]))), true
	case 2:
		u := binary.LittleEndian.Uint16(b)
		if c.Unsigned {
			return uint64(u), true
		}
		return uint64(int64(int16(u))), true
	case 4:
		u := binary.LittleEndian.Uint32(b)
		if c.Unsigned {
			return uint64(u), true
		}
		return uint64(int64(int32(u))), true
	case 8:
		return binary.LittleEndian.Uint64(b), true
	}
	return 0, false
}

// dateTime holds the fields of a binary DATE, DATETIME or TIMESTAMP.
type dateTime struct{ year, month, day, hour, minute, second, micro int }

func binaryDateTime(b []byte) (dateTime, bool) {
	var d dateTime
	switch len(b) {
	case 11:
		d.micro = int(binary.LittleEndian.Uint32(b[7:]))
		fallthrough
	case 7:
		d.hour, d.minute, d.second = int(b[4]), int(b[5]), int(b[6])
		fallthrough
	case 4:
		d.year, d.month, d.day = int(binary.LittleEndian.Uint16(b)), int(b[2]), int(b[3])
	case 0:
	default:
		return d, false
	}
	return d, d.year <= 9999 && d.month <= 12 && d.day <= 31 && d.hour < 24 && d.minute < 60 && d.second < 60 &&
		d.micro < 1_000_000
}

// fromDateTime gives the Value of a DATE, DATETIME or TIMESTAMP (the UTC clock of the
// instant); zero parts give Null.
func (c *Column) fromDateTime(d dateTime) change.Value {
	switch {
	case c.class == ClassDate:
		return change.DateValue(d.year, d.month, d.day)
	case d.year == 0 || d.month == 0 || d.day == 0:
		return change.Value{}
	case c.class == ClassTimestamp:
		t := time.Date(d.year, time.Month(d.month), d.day, d.hour, d.minute, d.second, d.micro*1000, time.UTC)
		return change.TimestampValue(t.UnixMicro())
	}
	return change.DateTimeValue(d.year, d.month, d.day, d.hour, d.minute, d.second, d.micro)
}

// binaryTime reads a binary TIME as signed microseconds.
func binaryTime(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, true
	}
	if len(b) != 8 && len(b) != 12 {
		return 0, false
	}
	days, h, m, s := int64(binary.LittleEndian.Uint32(b[1:])), int64(b[5]), int64(b[6]), int64(b[7])
	var us int64
	if len(b) == 12 {
		us = int64(binary.LittleEndian.Uint32(b[8:]))
	}
	if h > 23 || m > 59 || s > 59 || us > 999_999 || days*24+h > 838 { // TIME is ±838:59:59.999999
		return 0, false
	}
	micros := (((days*24+h)*60+m)*60+s)*1_000_000 + us
	if b[0] == 1 {
		micros = -micros
	}
	return micros, true
}

// BinaryText renders a value of the binary protocol's fixed forms (see FromBinary) as the
// text protocol sends it, fractional seconds to the column's scale: the text FromText and a
// chunk bound take.
func (c *Column) BinaryText(b []byte) ([]byte, error) {
	out, err := c.binaryText(b)
	if err != nil {
		return nil, fmt.Errorf("column %s (%s): binary value % x: %w", c.Name, c.class, b, err)
	}
	return out, nil
}

func (c *Column) binaryText(b []byte) ([]byte, error) {
	switch c.class {
	case ClassInt, ClassBool, ClassYear:
		n, ok := c.binaryInt(b)
		switch {
		case !ok:
			return nil, errBinaryLength
		case c.class == ClassYear:
			return fmt.Appendf(nil, "%04d", n), nil
		case c.Unsigned:
			return strconv.AppendUint(nil, n, 10), nil
		}
		return strconv.AppendInt(nil, int64(n), 10), nil
	case ClassDate, ClassDateTime, ClassTimestamp:
		d, ok := binaryDateTime(b)
		if !ok {
			return nil, errBinaryLength
		}
		out := fmt.Appendf(nil, "%04d-%02d-%02d", d.year, d.month, d.day)
		if c.class == ClassDate {
			return out, nil
		}
		out = fmt.Appendf(out, " %02d:%02d:%02d", d.hour, d.minute, d.second)
		return appendFraction(out, d.micro, c.Scale), nil
	case ClassTime:
		micros, ok := binaryTime(b)
		if !ok {
			return nil, errBinaryLength
		}
		var out []byte
		if micros < 0 {
			out, micros = append(out, '-'), -micros
		}
		secs := micros / 1_000_000
		out = fmt.Appendf(out, "%02d:%02d:%02d", secs/3600, secs/60%60, secs%60)
		return appendFraction(out, int(micros%1_000_000), c.Scale), nil
	}
	return nil, errNoBinaryForm
}

// appendFraction appends ".ffffff" cut to scale digits (nothing for scale 0), or all six
// when the microseconds have more digits than the scale (which the server never sends).
func appendFraction(b []byte, micro, scale int) []byte {
	digits := min(max(scale, 0), 6)
	for p := 6 - digits; p > 0 && int64(micro)%pow10[p] != 0; p-- {
		digits++
	}
	if digits == 0 {
		return b
	}
	frac := fmt.Appendf(nil, "%06d", micro)
	return append(append(b, '.'), frac[:digits]...)
}
