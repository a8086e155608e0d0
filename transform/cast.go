package transform

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ingestkit/ingest/change"
)

// castTypes maps the type names CAST accepts to their static types.
var castTypes = map[string]Type{
	"STRING": TString, "VARCHAR": TString, "CHAR": TString, "CHARACTER VARYING": TString, "TEXT": TString,
	"BOOLEAN": TBool, "BOOL": TBool,
	"TINYINT": TInt, "SMALLINT": TInt, "INT": TInt, "INTEGER": TInt, "BIGINT": TInt,
	"FLOAT": TFloat, "REAL": TFloat, "DOUBLE": TFloat, "DOUBLE PRECISION": TFloat,
	"DECIMAL": TDecimal, "NUMERIC": TDecimal, "DEC": TDecimal,
	"DATE": TDate, "TIMESTAMP": TDateTime,
}

// intBits is the width of each integer type, for CAST's narrowing.
var intBits = map[string]uint{"TINYINT": 8, "SMALLINT": 16, "INT": 32, "INTEGER": 32, "BIGINT": 64}

func (c *compiler) cast(x *Cast) (*node, error) {
	a, err := c.compile(x.X)
	if err != nil {
		return nil, err
	}
	t, ok := castTypes[x.Type.Name]
	if !ok {
		names := make([]string, 0, len(castTypes))
		for n := range castTypes {
			names = append(names, n)
		}
		return nil, c.errAt(x.Type.Off, "CAST to %s is not supported%s", x.Type.Name, didYouMeanSorted(x.Type.Name, names))
	}
	if a.typ == TBytes || a.typ == TJSON && t != TString {
		return nil, c.errAt(x.Off, "CAST from %s to %s is not supported", a.typ, x.Type.Name)
	}
	if t.temporal() && !(a.typ.stringy() || a.typ == t || a.typ == TAny || a.typ == TNull || a.typ.temporal()) {
		return nil, c.errAt(x.Off, "CAST from %s to %s is not supported", a.typ, x.Type.Name)
	}
	p1, p2 := 10, 0 // DECIMAL's default precision and scale (Flink CDC's CastingFunctions)
	if len(x.Type.Params) > 0 {
		p1 = x.Type.Params[0]
	}
	if len(x.Type.Params) > 1 {
		p2 = x.Type.Params[1]
	}
	if t == TInt {
		p1 = int(intBits[x.Type.Name])
	}
	if t == TFloat {
		p1 = 64
		if x.Type.Name == "FLOAT" || x.Type.Name == "REAL" {
			p1 = 32 // Java's float
		}
	}
	try, name := x.Try, x.Type.Name
	n := &node{typ: t, off: x.Off, eval: func(e *env) change.Value {
		v := a.eval(e)
		if v.IsNull() {
			return v
		}
		r, ok := castValue(v, t, p1, p2)
		if !ok {
			if try {
				return change.Value{}
			}
			return e.fail("cannot CAST %s value %q to %s", v.Kind, appendText(nil, v), name)
		}
		if t == TString && (r.Kind != change.String || len(r.Bytes) == 0 && v.Kind != change.String) {
			return e.str(func(dst []byte) []byte { return appendText(dst, v) })
		}
		return r
	}}
	if a.konst {
		return constant(t, n.eval(&env{}), x.Off), nil
	}
	return n, nil
}

// castValue converts a non-NULL v to type t; p1 is DECIMAL's precision or an integer's
// width in bits, p2 DECIMAL's scale. A CAST to STRING of a non-string returns an empty
// String, which the caller renders.
func castValue(v change.Value, t Type, p1, p2 int) (change.Value, bool) {
	s := string(v.Bytes)
	isStr := v.Kind == change.String || v.Kind == change.JSON
	switch t {
	case TString:
		if isStr {
			return change.StringValue(v.Bytes), true
		}
		return change.Value{Kind: change.String}, true
	case TBool:
		if isStr {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "true":
				return vTrue, true
			case "false":
				return vFalse, true
			}
			return change.Value{}, false
		}
		if numClass(v) == numNone {
			return change.Value{}, false
		}
		return boolVal(truth(v)), true
	case TInt:
		var i int64
		switch {
		case isStr:
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return change.Value{}, false
			}
			i = n
		case numClass(v) == numInt:
			i = asInt(v)
		case numClass(v) == numFloat:
			f := asFloat(v)
			if math.IsNaN(f) {
				return change.Value{}, false
			}
			i = int64(math.Trunc(f))
		case numClass(v) == numDec:
			d, _ := asDec(v)
			t := d.setScale(0, 'd')
			if !t.u.IsInt64() {
				return change.Value{}, false
			}
			i = t.u.Int64()
		default:
			return change.Value{}, false
		}
		if p1 > 0 && p1 < 64 && (i < -(1<<(p1-1)) || i >= 1<<(p1-1)) {
			return change.Value{}, false // out of the type's range
		}
		return change.IntValue(i), true
	case TFloat:
		var f float64
		switch {
		case isStr:
			var err error
			if f, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
				return change.Value{}, false
			}
		case numClass(v) != numNone:
			f = asFloat(v)
		default:
			return change.Value{}, false
		}
		if p1 == 32 {
			return change.Float32Value(float32(f)), true
		}
		return change.Float64Value(f), true
	case TDecimal:
		var d dec
		var ok bool
		switch {
		case isStr:
			d, ok = parseDec(strings.TrimSpace(s))
		case numClass(v) == numFloat:
			d, ok = parseDec(strconv.FormatFloat(asFloat(v), 'f', -1, 64))
		default:
			d, ok = asDec(v)
		}
		if !ok {
			return change.Value{}, false
		}
		r := d.setScale(p2, 'h')
		if len(new(dec).u.Abs(&r.u).String()) > p1 && r.u.Sign() != 0 {
			return change.Value{}, false // does not fit DECIMAL(p1, p2)
		}
		return change.DecimalValue(r.appendText(nil)), true
	case TDate:
		switch v.Kind {
		case change.Date:
			return v, true
		case change.DateTime:
			y, m, d := v.Date()
			return change.DateValue(y, m, d), true
		case change.Timestamp:
			t := time.UnixMicro(v.Micros()).UTC()
			return change.DateValue(t.Year(), int(t.Month()), t.Day()), true
		}
		tm, err := time.Parse("2006-1-2", strings.TrimSpace(s))
		if !isStr || err != nil {
			return change.Value{}, false
		}
		return change.DateValue(tm.Year(), int(tm.Month()), tm.Day()), true
	case TDateTime, TTimestamp:
		switch v.Kind {
		case change.DateTime:
			return v, true
		case change.Date:
			y, m, d := v.Date()
			return change.DateTimeValue(y, m, d, 0, 0, 0, 0), true
		case change.Timestamp:
			return dateTimeOf(time.UnixMicro(v.Micros()).UTC()), true
		}
		if !isStr {
			return change.Value{}, false
		}
		tm, ok := parseDateTime(strings.TrimSpace(s))
		if !ok {
			return change.Value{}, false
		}
		return dateTimeOf(tm), true
	}
	return change.Value{}, false
}

func dateTimeOf(t time.Time) change.Value {
	return change.DateTimeValue(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1000)
}

// parseDateTime reads an ISO local date-time ("2024-01-02T03:04:05.123", or with a space),
// or a date alone (midnight).
func parseDateTime(s string) (time.Time, bool) {
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999",
		"2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
