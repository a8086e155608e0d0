package pipeline

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// durationUnits maps the unit labels of Flink's TimeUtils.parseDuration to
// their length. Labels are matched after lower-casing.
var durationUnits = map[string]time.Duration{
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"min": time.Minute, "m": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond,
	"millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"µs": time.Microsecond, "micro": time.Microsecond, "micros": time.Microsecond,
	"microsecond": time.Microsecond, "microseconds": time.Microsecond,
	"ns": time.Nanosecond, "nano": time.Nanosecond, "nanos": time.Nanosecond,
	"nanosecond": time.Nanosecond, "nanoseconds": time.Nanosecond,
}

// ParseDuration parses a duration the way Flink does
// (Flink's TimeUtils.parseDuration): a non-negative whole number,
// optional whitespace and an optional unit, such as "30s", "1 min",
// "500 ms", "2 h" or "1d". A bare number is milliseconds. Units are d, day,
// h, hour, min, m, minute, s, sec, second, ms, milli, millisecond, µs,
// micro, microsecond, ns, nano and nanosecond, each also with an "s", in
// any case. Fractions and compound forms such as "1h30m" are not accepted,
// as in Flink.
func ParseDuration(s string) (time.Duration, error) {
	d, problem := parseDuration(s)
	if problem != "" {
		return 0, fmt.Errorf("invalid duration %q: %s", s, problem)
	}
	return d, nil
}

// parseDuration does the work of ParseDuration; problem says what is wrong
// with s, if anything.
func parseDuration(s string) (d time.Duration, problem string) {
	t := strings.TrimSpace(s)
	digits := len(t) - len(strings.TrimLeft(t, "0123456789"))
	if digits == 0 {
		return 0, "it does not start with a number"
	}
	n, err := strconv.ParseInt(t[:digits], 10, 64)
	if err != nil {
		return 0, "it is too large"
	}
	label := strings.ToLower(strings.TrimSpace(t[digits:]))
	unit := time.Millisecond
	if label != "" {
		var ok bool
		if unit, ok = durationUnits[label]; !ok {
			return 0, fmt.Sprintf("%q is not a unit", label)
		}
	}
	if n > math.MaxInt64/int64(unit) {
		return 0, "it is too large"
	}
	return time.Duration(n) * unit, ""
}

// formatDuration writes d in the largest unit that holds it exactly, in a
// form ParseDuration reads back: "30s", "5min", "250ms".
func formatDuration(d time.Duration) string {
	units := []struct {
		label string
		d     time.Duration
	}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"min", time.Minute}, {"s", time.Second},
		{"ms", time.Millisecond}, {"µs", time.Microsecond}}
	for _, u := range units {
		if d != 0 && d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.label
		}
	}
	if d == 0 {
		return "0ms"
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}
