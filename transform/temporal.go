package transform

import (
	"strings"
	"time"

	"github.com/ingestkit/ingest/change"
)

// The temporal functions. The current time is read once per change; the local time zone
// is pipeline.local-time-zone (the system's zone when it is not set).
var temporalFunctions = map[string]function{
	"CURRENT_TIMESTAMP": {0, 0, buildNow},
	"NOW":               {0, 0, buildNow},
	"LOCALTIMESTAMP": {0, 0, func(c *compiler, x *Call, _ []*node) (*node, error) {
		c.usesNow = true
		return &node{typ: TDateTime, off: x.Off, eval: func(e *env) change.Value {
			return dateTimeOf(e.now.In(e.loc).Truncate(time.Millisecond))
		}}, nil
	}},
	"CURRENT_DATE": {0, 0, func(c *compiler, x *Call, _ []*node) (*node, error) {
		c.usesNow = true
		return &node{typ: TDate, off: x.Off, eval: func(e *env) change.Value {
			t := e.now.In(e.loc)
			return change.DateValue(t.Year(), int(t.Month()), t.Day())
		}}, nil
	}},
	"DATE_FORMAT":    {2, 2, buildDateFormat},
	"TO_DATE":        {1, 2, buildParseTime(TDate, "yyyy-MM-dd")},
	"TO_TIMESTAMP":   {1, 2, buildParseTime(TDateTime, "yyyy-MM-dd HH:mm:ss")},
	"FROM_UNIXTIME":  {1, 2, buildFromUnixtime},
	"UNIX_TIMESTAMP": {0, 2, buildUnixTimestamp},
	"TIMESTAMPDIFF":  {2, 2, buildTimestampDiff},
}

func buildNow(c *compiler, x *Call, _ []*node) (*node, error) {
	c.usesNow = true
	return &node{typ: TTimestamp, off: x.Off, eval: func(e *env) change.Value {
		return change.TimestampValue(e.now.UnixMilli() * 1000)
	}}, nil
}

// instant returns the moment of a temporal value: a TIMESTAMP is an instant, a DATE or
// DATETIME a wall clock in the local zone.
func instant(v change.Value, loc *time.Location) (time.Time, bool) {
	switch v.Kind {
	case change.Timestamp:
		return time.UnixMicro(v.Micros()).In(loc), true
	case change.DateTime:
		y, m, d := v.Date()
		h, mi, s, us := v.Clock()
		return time.Date(y, time.Month(m), d, h, mi, s, us*1000, loc), true
	case change.Date:
		y, m, d := v.Date()
		return time.Date(y, time.Month(m), d, 0, 0, 0, 0, loc), true
	}
	return time.Time{}, false
}

// javaLayout converts a Java SimpleDateFormat pattern to a Go layout. ok is false for
// pattern letters it does not know.
func javaLayout(p string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(p); {
		c := p[i]
		j := i
		for j < len(p) && p[j] == c {
			j++
		}
		n := j - i
		switch {
		case c == '\'':
			k := strings.IndexByte(p[i+1:], '\'')
			if k < 0 {
				return "", false
			}
			if k == 0 {
				b.WriteByte('\'')
			} else {
				b.WriteString(p[i+1 : i+1+k])
			}
			i += k + 2
			continue
		case c == 'y' && n == 2:
			b.WriteString("06")
		case c == 'y':
			b.WriteString("2006")
		case c == 'M' && n == 1:
			b.WriteString("1")
		case c == 'M' && n == 2:
			b.WriteString("01")
		case c == 'M' && n == 3:
			b.WriteString("Jan")
		case c == 'M':
			b.WriteString("January")
		case c == 'd' && n == 1:
			b.WriteString("2")
		case c == 'd':
			b.WriteString("02")
		case c == 'H' && n == 1:
			b.WriteString("15")
		case c == 'H':
			b.WriteString("15")
		case c == 'h' && n == 1:
			b.WriteString("3")
		case c == 'h':
			b.WriteString("03")
		case c == 'm' && n == 1:
			b.WriteString("4")
		case c == 'm':
			b.WriteString("04")
		case c == 's' && n == 1:
			b.WriteString("5")
		case c == 's':
			b.WriteString("05")
		case c == 'S':
			b.WriteString(strings.Repeat("0", n))
		case c == 'a':
			b.WriteString("PM")
		case c == 'E' && n <= 3:
			b.WriteString("Mon")
		case c == 'E':
			b.WriteString("Monday")
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			return "", false
		default:
			b.WriteString(p[i:j])
		}
		i = j
	}
	return b.String(), true
}

// layoutArg compiles the format argument: a constant is converted once.
func (c *compiler) layoutArg(n *node, fn string) (func(*env) (string, bool), error) {
	if err := c.wantString(n, fn); err != nil {
		return nil, err
	}
	if n.konst && !n.k.IsNull() {
		l, ok := javaLayout(string(n.k.Bytes))
		if !ok {
			return nil, c.errAt(n.off, "format %q has a pattern letter that ingest does not support (it knows y M d H h m s S a E)", n.k.Bytes)
		}
		return func(*env) (string, bool) { return l, true }, nil
	}
	return func(e *env) (string, bool) {
		v := n.eval(e)
		if v.IsNull() {
			return "", false
		}
		return javaLayout(string(v.Bytes))
	}, nil
}

func constLayout(p string) func(*env) (string, bool) {
	l, _ := javaLayout(p)
	return func(*env) (string, bool) { return l, true }
}

func buildDateFormat(c *compiler, x *Call, a []*node) (*node, error) {
	if !a[0].typ.temporal() && a[0].typ != TAny && a[0].typ != TNull && !a[0].typ.stringy() {
		return nil, c.errAt(a[0].off, "DATE_FORMAT needs a date or time, not %s", a[0].typ)
	}
	layout, err := c.layoutArg(a[1], x.Name)
	if err != nil {
		return nil, err
	}
	return &node{typ: TString, off: x.Off, eval: func(e *env) change.Value {
		v := a[0].eval(e)
		l, ok := layout(e)
		if v.IsNull() || !ok {
			return change.Value{}
		}
		if v.Kind == change.String {
			cv, ok := castValue(v, TDateTime, 0, 0)
			if !ok {
				return change.Value{}
			}
			v = cv
		}
		t, ok := instant(v, e.loc)
		if !ok {
			return e.fail("DATE_FORMAT needs a date or time, not %s", v.Kind)
		}
		return e.str(func(dst []byte) []byte { return t.AppendFormat(dst, l) })
	}}, nil
}

func buildParseTime(t Type, def string) func(*compiler, *Call, []*node) (*node, error) {
	return func(c *compiler, x *Call, a []*node) (*node, error) {
		if t == TDate && len(a) == 1 && a[0].typ.temporal() {
			return c.castNode(a[0], TDate, x.Off), nil
		}
		if err := c.wantString(a[0], x.Name); err != nil {
			return nil, err
		}
		layout := constLayout(def)
		if len(a) == 2 {
			var err error
			if layout, err = c.layoutArg(a[1], x.Name); err != nil {
				return nil, err
			}
		}
		return &node{typ: t, off: x.Off, eval: func(e *env) change.Value {
			v := a[0].eval(e)
			l, ok := layout(e)
			if v.IsNull() || !ok {
				return change.Value{}
			}
			tm, err := time.Parse(l, string(v.Bytes))
			if err != nil {
				return change.Value{} // Flink CDC returns NULL for a string that does not parse
			}
			if t == TDate {
				return change.DateValue(tm.Year(), int(tm.Month()), tm.Day())
			}
			return dateTimeOf(tm)
		}}, nil
	}
}

// castNode converts n's values to the temporal type t.
func (c *compiler) castNode(n *node, t Type, off int) *node {
	return &node{typ: t, off: off, eval: func(e *env) change.Value {
		v := n.eval(e)
		if v.IsNull() {
			return v
		}
		r, _ := castValue(v, t, 0, 0)
		return r
	}}
}

func buildFromUnixtime(c *compiler, x *Call, a []*node) (*node, error) {
	if err := c.wantInt(a[0], x.Name); err != nil {
		return nil, err
	}
	layout := constLayout("yyyy-MM-dd HH:mm:ss")
	if len(a) == 2 {
		var err error
		if layout, err = c.layoutArg(a[1], x.Name); err != nil {
			return nil, err
		}
	}
	return &node{typ: TString, off: x.Off, eval: func(e *env) change.Value {
		v := a[0].eval(e)
		l, ok := layout(e)
		if v.IsNull() || !ok {
			return change.Value{}
		}
		t := time.Unix(asInt(v), 0).In(e.loc)
		return e.str(func(dst []byte) []byte { return t.AppendFormat(dst, l) })
	}}, nil
}

func buildUnixTimestamp(c *compiler, x *Call, a []*node) (*node, error) {
	if len(a) == 0 {
		c.usesNow = true
		return &node{typ: TInt, off: x.Off, eval: func(e *env) change.Value { return change.IntValue(e.now.Unix()) }}, nil
	}
	if err := c.wantString(a[0], x.Name); err != nil {
		return nil, err
	}
	layout := constLayout("yyyy-MM-dd HH:mm:ss")
	if len(a) == 2 {
		var err error
		if layout, err = c.layoutArg(a[1], x.Name); err != nil {
			return nil, err
		}
	}
	return &node{typ: TInt, off: x.Off, eval: func(e *env) change.Value {
		v := a[0].eval(e)
		l, ok := layout(e)
		if v.IsNull() || !ok {
			return change.Value{}
		}
		t, err := time.ParseInLocation(l, string(v.Bytes), e.loc)
		if err != nil {
			return change.Value{}
		}
		return change.IntValue(t.Unix())
	}}, nil
}

// buildTimestampDiff is TIMESTAMPDIFF(unit, a, b): the whole units from a to b, truncated
// towards zero; MONTH, QUARTER and YEAR count calendar months.
func buildTimestampDiff(c *compiler, x *Call, a []*node) (*node, error) {
	for _, n := range a {
		if !n.typ.temporal() && n.typ != TAny && n.typ != TNull {
			return nil, c.errAt(n.off, "TIMESTAMPDIFF needs dates or times, not %s", n.typ)
		}
	}
	unit := x.Unit
	per := map[string]time.Duration{"SECOND": time.Second, "MINUTE": time.Minute, "HOUR": time.Hour,
		"DAY": 24 * time.Hour, "WEEK": 7 * 24 * time.Hour}[unit]
	months := map[string]int{"MONTH": 1, "QUARTER": 3, "YEAR": 12}[unit]
	return &node{typ: TInt, off: x.Off, eval: func(e *env) change.Value {
		v, w := a[0].eval(e), a[1].eval(e)
		if v.IsNull() || w.IsNull() {
			return change.Value{}
		}
		t1, ok1 := instant(v, time.UTC)
		t2, ok2 := instant(w, time.UTC)
		if !ok1 || !ok2 {
			return e.fail("TIMESTAMPDIFF needs dates or times")
		}
		if per != 0 {
			return change.IntValue(int64(t2.Sub(t1) / per))
		}
		m := (t2.Year()-t1.Year())*12 + int(t2.Month()) - int(t1.Month())
		// A month is whole only when the later day and time reach the earlier's.
		rest1 := t1.AddDate(0, m, 0)
		if m > 0 && rest1.After(t2) {
			m--
		} else if m < 0 && rest1.Before(t2) {
			m++
		}
		return change.IntValue(int64(m / months))
	}}, nil
}
