package pipeline

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// ParseTimeZone returns the location named by a time zone option
// (server-time-zone, local-time-zone), accepting the forms of Java's
// ZoneId.of that make sense here: an IANA name such as "Asia/Shanghai" or
// "UTC", "Z", and a fixed offset with an optional UTC, GMT or UT prefix
// such as "+08:00", "GMT-8" or "UTC+05:30".
//
// IANA names need the time zone database: the system's, or the copy that
// the ingest binary embeds (time/tzdata).
func ParseTimeZone(name string) (*time.Location, error) {
	if name == "Z" {
		return time.UTC, nil
	}
	rest := name
	for _, p := range []string{"UTC", "GMT", "UT"} {
		if r, ok := strings.CutPrefix(name, p); ok && r != "" && (r[0] == '+' || r[0] == '-') {
			rest = r
			break
		}
	}
	if rest != "" && (rest[0] == '+' || rest[0] == '-') {
		secs, err := parseOffset(rest)
		if err != nil {
			return nil, err
		}
		return time.FixedZone(name, secs), nil
	}
	if name == "" || strings.EqualFold(name, "local") {
		return nil, errors.New("is not a time zone name")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, errors.New("is not a known time zone; use a name such as Asia/Shanghai or an offset such as +08:00")
	}
	return loc, nil
}

// parseOffset parses ±h, ±hh, ±hh:mm or ±hhmm into seconds east of UTC.
func parseOffset(s string) (int, error) {
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	hh, mm, ok := strings.Cut(s[1:], ":")
	if !ok && len(hh) == 4 {
		hh, mm = hh[:2], hh[2:]
	}
	h, err1 := strconv.Atoi(hh)
	m := 0
	var err2 error
	if mm != "" || ok {
		m, err2 = strconv.Atoi(mm)
	}
	if err1 != nil || err2 != nil || len(hh) > 2 || h > 18 || m > 59 || m < 0 || h < 0 {
		return 0, errors.New("is not a valid offset; write it as +08:00")
	}
	return sign * (h*3600 + m*60), nil
}
