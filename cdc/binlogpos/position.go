package binlogpos

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// GTID is one MariaDB global transaction id, written domain-server-sequence.
type GTID struct {
	Domain uint32
	Server uint32
	Seq    uint64
}

// String returns the GTID as MariaDB writes it, e.g. "0-1-42".
func (g GTID) String() string {
	return strconv.FormatUint(uint64(g.Domain), 10) + "-" + strconv.FormatUint(uint64(g.Server), 10) +
		"-" + strconv.FormatUint(g.Seq, 10)
}

// ParseGTID parses a MariaDB GTID "domain-server-sequence".
func ParseGTID(s string) (GTID, error) {
	parts := strings.Split(s, "-")
	if len(parts) != 3 {
		return GTID{}, fmt.Errorf("mariadb gtid %q: want domain-server-sequence", s)
	}
	d, err1 := ParseDecimal(parts[0], 32)
	srv, err2 := ParseDecimal(parts[1], 32)
	seq, err3 := ParseDecimal(parts[2], 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return GTID{}, fmt.Errorf("mariadb gtid %q: %w", s, err)
	}
	return GTID{Domain: uint32(d), Server: uint32(srv), Seq: seq}, nil
}

// ParseDecimal parses plain decimal digits (no sign, no leading zeros except "0").
func ParseDecimal(s string, bits int) (uint64, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a canonical unsigned number", s)
	}
	return strconv.ParseUint(s, 10, bits)
}

// Position is a point in a server's binlog between two source transactions: where a stream
// resumes. It holds what is known of the point, in up to three forms:
//
//   - File and Offset: the binlog file and the offset of the next event in it; they name the
//     point on this server only.
//   - MariaDB: for each replication domain, the last GTID applied, sorted by domain (the form
//     of @@gtid_binlog_pos). It is kept per domain by this package, never taken from
//     go-mysql's accumulated set, which keeps one GTID per (domain, server id) and cannot be
//     resumed from after a server id change inside a domain (MariaDB error 1943).
//   - MySQL: the executed GTID set (uuid:interval,…), normalised.
//
// A stream resumes by GTID when a GTID form is present and by file and offset otherwise.
// The zero Position is "unknown".
type Position struct {
	File    string
	Offset  uint32
	MariaDB []GTID
	MySQL   string
}

// IsZero reports whether nothing is known of the position.
func (p Position) IsZero() bool {
	return p.File == "" && p.Offset == 0 && len(p.MariaDB) == 0 && p.MySQL == ""
}

// HasGTID reports whether the position can be resumed from by GTID.
func (p Position) HasGTID() bool { return len(p.MariaDB) > 0 || p.MySQL != "" }

// MariaDBString returns the MariaDB GTIDs as a comma-separated list, the form of
// @@gtid_binlog_pos and of @slave_connect_state.
func (p Position) MariaDBString() string {
	parts := make([]string, len(p.MariaDB))
	for i, g := range p.MariaDB {
		parts[i] = g.String()
	}
	return strings.Join(parts, ",")
}

// String returns the text form of the position, fields separated by ";" in a fixed order:
//
//	file=mariadb-bin.000003:2689;mariadb-gtid=0-1-29,7-1-1
//	file=binlog.000002:157;mysql-gtid=3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5
//
// [ParsePosition] reads it back. The zero Position is "".
func (p Position) String() string {
	var parts []string
	if p.File != "" {
		parts = append(parts, "file="+p.File+":"+strconv.FormatUint(uint64(p.Offset), 10))
	}
	if len(p.MariaDB) > 0 {
		parts = append(parts, "mariadb-gtid="+p.MariaDBString())
	}
	if p.MySQL != "" {
		parts = append(parts, "mysql-gtid="+p.MySQL)
	}
	return strings.Join(parts, ";")
}

// ParsePosition parses the text form written by [Position.String]. It also accepts the
// shorter forms a user types for scan.startup.specific-offset: "file:offset" alone, or a
// bare GTID set (MariaDB "0-1-29,7-1-1" or MySQL "uuid:1-5").
func ParsePosition(s string) (Position, error) {
	var p Position
	if s == "" {
		return p, nil
	}
	if !strings.Contains(s, "=") {
		return parseShortPosition(s)
	}
	seen := map[string]bool{}
	for _, field := range strings.Split(s, ";") {
		key, val, ok := strings.Cut(field, "=")
		if !ok || seen[key] {
			return Position{}, fmt.Errorf("position %q: bad or repeated field %q", s, field)
		}
		seen[key] = true
		if err := p.setField(key, val); err != nil {
			return Position{}, fmt.Errorf("position %q: %w", s, err)
		}
	}
	return p, nil
}

func (p *Position) setField(key, val string) error {
	var err error
	switch key {
	case "file":
		p.File, p.Offset, err = parseFilePos(val)
	case "mariadb-gtid":
		p.MariaDB, err = ParseMariaDBGTIDs(val)
		if err == nil && len(p.MariaDB) == 0 {
			err = errors.New("empty mariadb-gtid")
		}
	case "mysql-gtid":
		p.MySQL, err = NormalizeMySQLGTIDSet(val)
		if err == nil && p.MySQL == "" {
			err = errors.New("empty mysql-gtid")
		}
	default:
		err = fmt.Errorf("unknown field %q", key)
	}
	return err
}

func parseShortPosition(s string) (Position, error) {
	if set, err := ParseMariaDBGTIDs(s); err == nil && len(set) > 0 {
		return Position{MariaDB: set}, nil
	}
	if set, err := NormalizeMySQLGTIDSet(s); err == nil && set != "" {
		return Position{MySQL: set}, nil
	}
	file, off, err := parseFilePos(s)
	if err != nil {
		return Position{}, fmt.Errorf("position %q: neither file:offset nor a gtid set: %w", s, err)
	}
	return Position{File: file, Offset: off}, nil
}

func parseFilePos(s string) (string, uint32, error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return "", 0, fmt.Errorf("file position %q: want name:offset", s)
	}
	file := s[:i]
	if strings.ContainsAny(file, ";\n") {
		return "", 0, fmt.Errorf("file position %q: bad file name", s)
	}
	off, err := ParseDecimal(s[i+1:], 32)
	if err != nil {
		return "", 0, fmt.Errorf("file position %q: offset: %w", s, err)
	}
	return file, uint32(off), nil
}

// ParseMariaDBGTIDs parses a comma-separated MariaDB GTID list with at most one GTID per
// domain (the form of @@gtid_binlog_pos) and returns it sorted by domain. Empty text gives
// an empty list.
func ParseMariaDBGTIDs(s string) ([]GTID, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var set []GTID
	for _, part := range strings.Split(s, ",") {
		g, err := ParseGTID(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		set = append(set, g)
	}
	slices.SortFunc(set, func(a, b GTID) int { return cmpUint(uint64(a.Domain), uint64(b.Domain)) })
	for i := 1; i < len(set); i++ {
		if set[i].Domain == set[i-1].Domain {
			return nil, fmt.Errorf("mariadb gtid list %q: two gtids for domain %d", s, set[i].Domain)
		}
	}
	return set, nil
}

// WithGTID returns a copy of set with g as the last GTID of its domain.
func WithGTID(set []GTID, g GTID) []GTID {
	out := make([]GTID, 0, len(set)+1)
	added := false
	for _, x := range set {
		switch {
		case x.Domain == g.Domain:
			out = append(out, g)
			added = true
			continue
		case x.Domain > g.Domain && !added:
			out = append(out, g)
			added = true
		}
		out = append(out, x)
	}
	if !added {
		out = append(out, g)
	}
	return out
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Compare orders p and q: -1 if p is before q, 0 if they are the same point, +1 if p is
// after q. ok is false when the two cannot be ordered: no common form, MariaDB GTIDs ahead in
// one domain and behind in another, or MySQL sets neither containing the other. GTIDs are
// compared when both positions have them; file and offset otherwise (meaningful on one server
// only).
func (p Position) Compare(q Position) (c int, ok bool) {
	switch {
	case len(p.MariaDB) > 0 && len(q.MariaDB) > 0:
		return compareMariaDB(p.MariaDB, q.MariaDB)
	case p.MySQL != "" && q.MySQL != "":
		return compareMySQLSets(p.MySQL, q.MySQL)
	case p.File != "" && q.File != "":
		c, ok := CompareBinlogFiles(p.File, q.File)
		if !ok || c != 0 {
			return c, ok
		}
		return cmpUint(uint64(p.Offset), uint64(q.Offset)), true
	}
	return 0, false
}

// After reports whether p is known to be strictly after q.
func (p Position) After(q Position) bool {
	c, ok := p.Compare(q)
	return ok && c > 0
}

func compareMariaDB(a, b []GTID) (int, bool) {
	seq := func(set []GTID, domain uint32) uint64 {
		for _, g := range set {
			if g.Domain == domain {
				return g.Seq
			}
		}
		return 0
	}
	less, greater := false, false
	for _, set := range [][]GTID{a, b} {
		for _, g := range set {
			switch cmpUint(seq(a, g.Domain), seq(b, g.Domain)) {
			case -1:
				less = true
			case 1:
				greater = true
			}
		}
	}
	switch {
	case less && greater:
		return 0, false
	case less:
		return -1, true
	case greater:
		return 1, true
	}
	return 0, true
}

// CompareBinlogFiles orders binlog file names of one server by the number of their
// extension (name.000123), as a number: mariadb-bin.000010 is after mariadb-bin.000009, and
// mariadb-bin.1000000 after mariadb-bin.999999. ok is false when the names cannot be ordered:
// different base names (another log_bin setting, another server) or an extension that is
// not a number.
func CompareBinlogFiles(a, b string) (c int, ok bool) {
	an, baseA, okA := binlogIndex(a)
	bn, baseB, okB := binlogIndex(b)
	if !okA || !okB || baseA != baseB {
		if a == b {
			return 0, true
		}
		return 0, false
	}
	return cmpUint(an, bn), true
}

// binlogIndex splits a binlog file name into its base name and the number of its extension.
func binlogIndex(name string) (n uint64, base string, ok bool) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || i == len(name)-1 || strings.TrimLeft(name[i+1:], "0123456789") != "" {
		return 0, "", false
	}
	n, err := strconv.ParseUint(name[i+1:], 10, 64)
	return n, name[:i], err == nil
}
