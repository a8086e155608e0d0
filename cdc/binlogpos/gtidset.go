package binlogpos

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MySQLGTIDSet is a MySQL GTID set ("uuid:1-5:7,uuid2:1-3") as a map from source uuid
// (lower case, with an optional ":tag" of MySQL 8.4) to sorted, merged, half-open intervals.
type MySQLGTIDSet map[string][]interval

// interval is [start, stop): MySQL's "1-5" is {1, 6}.
type interval struct{ start, stop uint64 }

// NormalizeMySQLGTIDSet parses a MySQL GTID set and returns its canonical text: uuids in
// lower case and sorted, intervals sorted and merged. Empty text gives "".
func NormalizeMySQLGTIDSet(s string) (string, error) {
	set, err := ParseMySQLGTIDSet(s)
	if err != nil {
		return "", err
	}
	return set.String(), nil
}

// ParseMySQLGTIDSet parses the text of a MySQL GTID set; empty text is the empty set.
func ParseMySQLGTIDSet(s string) (MySQLGTIDSet, error) {
	set := MySQLGTIDSet{}
	s = strings.Join(strings.Fields(s), "")
	if s == "" {
		return set, nil
	}
	for _, part := range strings.Split(s, ",") {
		if err := set.addText(part); err != nil {
			return nil, fmt.Errorf("mysql gtid set %q: %w", s, err)
		}
	}
	return set, nil
}

func (s MySQLGTIDSet) addText(part string) error {
	fields := strings.Split(part, ":")
	if len(fields) < 2 || !isUUID(fields[0]) {
		return fmt.Errorf("%q: want uuid:interval", part)
	}
	sid := strings.ToLower(fields[0])
	for _, f := range fields[1:] {
		if isTag(f) { // a MySQL 8.4 tag names the following intervals
			sid = strings.ToLower(fields[0]) + ":" + strings.ToLower(f)
			continue
		}
		iv, err := parseInterval(f)
		if err != nil {
			return fmt.Errorf("%q: %w", part, err)
		}
		s.add(sid, iv)
	}
	return nil
}

func parseInterval(f string) (interval, error) {
	lo, hi, isRange := strings.Cut(f, "-")
	a, err := ParseDecimal(lo, 63)
	if err != nil || a == 0 {
		return interval{}, fmt.Errorf("bad interval %q", f)
	}
	b := a
	if isRange {
		if b, err = ParseDecimal(hi, 63); err != nil || b < a {
			return interval{}, fmt.Errorf("bad interval %q", f)
		}
	}
	return interval{a, b + 1}, nil
}

// isTag reports whether f is a MySQL 8.4 GTID tag: a letter or underscore, then up to 31
// letters, digits or underscores.
func isTag(f string) bool {
	if f == "" || len(f) > 32 || (f[0] >= '0' && f[0] <= '9') {
		return false
	}
	for _, c := range f {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}

// add merges iv into the intervals of sid.
func (s MySQLGTIDSet) add(sid string, iv interval) {
	ivs := append(s[sid], iv)
	slices.SortFunc(ivs, func(a, b interval) int { return cmpUint(a.start, b.start) })
	merged := ivs[:1]
	for _, x := range ivs[1:] {
		last := &merged[len(merged)-1]
		if x.start <= last.stop {
			last.stop = max(last.stop, x.stop)
			continue
		}
		merged = append(merged, x)
	}
	s[sid] = merged
}

// Contains reports whether s holds every GTID of o.
func (s MySQLGTIDSet) Contains(o MySQLGTIDSet) bool {
	for sid, ivs := range o {
		for _, iv := range ivs {
			if !slices.ContainsFunc(s[sid], func(x interval) bool { return x.start <= iv.start && iv.stop <= x.stop }) {
				return false
			}
		}
	}
	return true
}

// String returns the canonical text of the set.
func (s MySQLGTIDSet) String() string {
	sids := make([]string, 0, len(s))
	for sid, ivs := range s {
		if len(ivs) > 0 {
			sids = append(sids, sid)
		}
	}
	slices.Sort(sids)
	var b strings.Builder
	for i, sid := range sids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(sid)
		for _, iv := range s[sid] {
			b.WriteByte(':')
			b.WriteString(strconv.FormatUint(iv.start, 10))
			if iv.stop-1 != iv.start {
				b.WriteByte('-')
				b.WriteString(strconv.FormatUint(iv.stop-1, 10))
			}
		}
	}
	return b.String()
}

func compareMySQLSets(a, b string) (int, bool) {
	sa, errA := ParseMySQLGTIDSet(a)
	sb, errB := ParseMySQLGTIDSet(b)
	if errA != nil || errB != nil {
		return 0, false
	}
	ab, ba := sa.Contains(sb), sb.Contains(sa)
	switch {
	case ab && ba:
		return 0, true
	case ab:
		return 1, true
	case ba:
		return -1, true
	}
	return 0, false
}

// AddMySQLGTID returns the MySQL GTID set text with transaction sid:gno added; a set that
// does not parse is returned unchanged.
func AddMySQLGTID(set, sid string, gno uint64) string {
	parsed, err := ParseMySQLGTIDSet(set)
	if err != nil {
		return set
	}
	parsed.add(sid, interval{gno, gno + 1})
	return parsed.String()
}
