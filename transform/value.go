package transform

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ingestkit/ingest/change"
)

var (
	vTrue  = change.BoolValue(true)
	vFalse = change.BoolValue(false)
)

func boolVal(b bool) change.Value {
	if b {
		return vTrue
	}
	return vFalse
}

// numeric kinds, in the order that mixing them widens to.
const (
	numNone = iota
	numInt
	numDec
	numFloat
)

func numClass(v change.Value) int {
	switch v.Kind {
	case change.Bool, change.Int:
		return numInt
	case change.Uint:
		if v.Num > math.MaxInt64 {
			return numDec
		}
		return numInt
	case change.Decimal:
		return numDec
	case change.Float32, change.Float64:
		return numFloat
	}
	return numNone
}

// asInt returns an integer-class value as int64.
func asInt(v change.Value) int64 { return int64(v.Num) }

func asDec(v change.Value) (dec, bool) {
	switch v.Kind {
	case change.Decimal:
		return parseDec(string(v.Bytes))
	case change.Uint:
		var d dec
		d.u.SetUint64(v.Num)
		return d, true
	case change.Int, change.Bool:
		return decInt(int64(v.Num)), true
	}
	return dec{}, false
}

func asFloat(v change.Value) float64 {
	switch v.Kind {
	case change.Float32, change.Float64:
		return v.Float()
	case change.Int, change.Bool:
		return float64(int64(v.Num))
	case change.Uint:
		return float64(v.Num)
	case change.Decimal:
		d, _ := parseDec(string(v.Bytes))
		return d.float()
	}
	return math.NaN()
}

func decValue(e *env, d dec) change.Value {
	start := e.begin()
	e.arena = d.appendText(e.arena)
	return change.DecimalValue(e.end(start))
}

// unordered is what compare returns for NaN: neither less, equal nor greater.
const unordered = 2

// compare orders a and b, neither NULL: -1, 0, 1 or unordered; ok is false when they cannot
// be compared.
func compare(a, b change.Value) (int, bool) {
	ca, cb := numClass(a), numClass(b)
	switch {
	case ca != numNone && cb != numNone:
		switch max(ca, cb) {
		case numInt:
			x, y := asInt(a), asInt(b)
			return cmpInt(x, y), true
		case numFloat:
			x, y := asFloat(a), asFloat(b)
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			case x == y:
				return 0, true
			}
			return unordered, true // NaN
		default:
			x, _ := asDec(a)
			y, _ := asDec(b)
			return decCmp(&x, &y), true
		}
	case a.Kind == change.String && b.Kind == change.String:
		return bytes.Compare(a.Bytes, b.Bytes), true
	case a.Kind == b.Kind && (a.Kind == change.Date || a.Kind == change.DateTime || a.Kind == change.Time):
		if a.Kind == change.Time {
			return cmpInt(a.Micros(), b.Micros()), true
		}
		return cmpUint(a.Num, b.Num), true
	case a.Kind == change.Timestamp && b.Kind == change.Timestamp:
		return cmpInt(a.Micros(), b.Micros()), true
	case a.Kind == change.Date && b.Kind == change.DateTime || a.Kind == change.DateTime && b.Kind == change.Date:
		return cmpUint(dateTimeNum(a), dateTimeNum(b)), true
	case a.Kind == b.Kind && (a.Kind == change.Bytes || a.Kind == change.JSON):
		return bytes.Compare(a.Bytes, b.Bytes), true
	}
	return 0, false
}

func dateTimeNum(v change.Value) uint64 {
	if v.Kind == change.Date {
		y, m, d := v.Date()
		return change.DateTimeValue(y, m, d, 0, 0, 0, 0).Num
	}
	return v.Num
}

func cmpInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func cmpUint(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// appendText appends v as CAST(v AS STRING) writes it.
func appendText(dst []byte, v change.Value) []byte {
	switch v.Kind {
	case change.Bool:
		return strconv.AppendBool(dst, v.Num != 0)
	case change.Int:
		return strconv.AppendInt(dst, int64(v.Num), 10)
	case change.Uint:
		return strconv.AppendUint(dst, v.Num, 10)
	case change.Float32:
		return appendJavaFloat(dst, v.Float(), 32)
	case change.Float64:
		return appendJavaFloat(dst, v.Float(), 64)
	case change.Date:
		y, m, d := v.Date()
		return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).AppendFormat(dst, "2006-01-02")
	case change.DateTime:
		y, m, d := v.Date()
		h, mi, s, us := v.Clock()
		return appendDateTime(dst, time.Date(y, time.Month(m), d, h, mi, s, us*1000, time.UTC))
	case change.Timestamp:
		return appendDateTime(dst, time.UnixMicro(v.Micros()).UTC())
	case change.Time:
		us := v.Micros()
		if us < 0 {
			dst = append(dst, '-')
			us = -us
		}
		h, m, s, frac := us/3600e6, us/60e6%60, us/1e6%60, us%1e6
		dst = append(dst, pad2(h)...)
		dst = append(dst, ':')
		dst = append(dst, pad2(m)...)
		dst = append(dst, ':')
		dst = append(dst, pad2(s)...)
		if frac != 0 {
			dst = append(dst, strings.TrimRight("."+strconv.FormatInt(frac+1e6, 10)[1:], "0")...)
		}
		return dst
	}
	return append(dst, v.Bytes...)
}

func pad2(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// appendDateTime writes "2024-01-02 03:04:05[.ffffff]" without trailing zeros.
func appendDateTime(dst []byte, t time.Time) []byte {
	return t.AppendFormat(dst, "2006-01-02 15:04:05.999999")
}

// appendJavaFloat writes f as Java's Double.toString (Float.toString for 32 bits) does:
// "1.0", "0.001", "1.0E7", "1.5E-4".
func appendJavaFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	abs := math.Abs(f)
	if abs == 0 || abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return append(dst, s...)
	}
	s := strconv.FormatFloat(f, 'E', -1, bits) // 1.5E-04
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	return append(append(append(dst, mant...), 'E'), strconv.Itoa(n)...)
}
