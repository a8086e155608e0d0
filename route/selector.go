package route

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// Selector is a parsed Flink CDC table pattern (the Selectors syntax of
// docs/pipeline.md), as used by the source options tables
// and tables.exclude and by transform source-table.
//
// A pattern is a comma-separated list of items; `\,` puts a comma into an
// item and items are trimmed. Each item is db.table, split on every unescaped
// '.'. In each part `\.` becomes the regular expression '.' (any character),
// and the part is a case-insensitive regular expression that must match the
// whole name. A table matches the Selector when it matches any item.
//
// Case is folded with Go's (?i), which also folds non-ASCII letters; Java's
// CASE_INSENSITIVE, which Flink CDC uses, folds ASCII letters only.
//
// A Selector is immutable and safe for concurrent use. The nil *Selector
// matches nothing.
type Selector struct {
	pattern string
	items   []selectorItem
}

type selectorItem struct {
	db, table *regexp.Regexp
}

// ParseSelector parses a table pattern such as `app_db.\.*, shop_[0-9]+.orders`.
//
// Flink CDC accepts items of 1, 2 or 3 parts and lets those that do not have 2
// parts match no MySQL table; ParseSelector rejects them instead, because such
// an item is always a mistake (usually an unescaped '.' meant as "any
// character"). Unlike Flink CDC it also rejects empty parts such as "db..t",
// and treats `\,` as a literal comma inside the regular expression (Flink CDC
// splits the part on it once more).
func ParseSelector(pattern string) (*Selector, error) {
	rawItems, err := splitUnescaped(pattern, ',')
	if err != nil {
		return nil, fmt.Errorf("table pattern %s: %w", quote(pattern), err)
	}
	s := &Selector{pattern: pattern}
	for _, raw := range rawItems {
		item := unescapeSep(javaTrim(raw), ',')
		if item == "" {
			continue // Flink CDC skips empty items too: "a.b," is a.b.
		}
		it, err := parseItem(item)
		if err != nil {
			return nil, err
		}
		s.items = append(s.items, it)
	}
	if len(s.items) == 0 {
		return nil, errors.New(`table pattern is empty; write db.table, for example app_db.\.* for every table of app_db`)
	}
	return s, nil
}

// Match reports whether the table db.table matches any item of the pattern.
// Matching ignores case.
func (s *Selector) Match(db, table string) bool {
	if s == nil {
		return false
	}
	for _, it := range s.items {
		if it.db.MatchString(db) && it.table.MatchString(table) {
			return true
		}
	}
	return false
}

// MatchDB reports whether some table of database db could match, that is,
// whether the db part of any item matches db. A caller listing tables can
// skip a database for which it returns false.
func (s *Selector) MatchDB(db string) bool {
	if s == nil {
		return false
	}
	for _, it := range s.items {
		if it.db.MatchString(db) {
			return true
		}
	}
	return false
}

// String returns the pattern as it was given to ParseSelector.
func (s *Selector) String() string {
	if s == nil {
		return ""
	}
	return s.pattern
}

// parseItem parses one comma-free item into its db and table regexps.
func parseItem(item string) (selectorItem, error) {
	parts, err := splitUnescaped(item, '.')
	if err != nil {
		return selectorItem{}, fmt.Errorf("table pattern %s: %w", quote(item), err)
	}
	for i := range parts {
		parts[i] = javaTrim(parts[i])
		if parts[i] == "" {
			return selectorItem{}, fmt.Errorf(`table pattern %s has an empty part; every unescaped '.' separates db and table, so write db.table with both present (and \. for "any character")`, quote(item))
		}
	}
	if len(parts) != 2 {
		return selectorItem{}, partCountError(item, parts)
	}
	db, err := compilePart(item, "db", unescapeSep(parts[0], '.'))
	if err != nil {
		return selectorItem{}, err
	}
	table, err := compilePart(item, "table", unescapeSep(parts[1], '.'))
	if err != nil {
		return selectorItem{}, err
	}
	return selectorItem{db: db, table: table}, nil
}

// partCountError explains why an item without exactly 2 parts is wrong and
// suggests the pattern the user most likely meant.
func partCountError(item string, parts []string) error {
	if len(parts) == 1 {
		return fmt.Errorf("table pattern %s has 1 part, but a MySQL table pattern needs exactly 2, db and table, separated by an unescaped '.'; %s",
			quote(item), onePartFix(item))
	}
	fix := parts[0] + "." + strings.Join(parts[1:], `\.`)
	return fmt.Errorf(`table pattern %s has %d parts because every unescaped '.' separates db and table, and a MySQL table pattern needs exactly 2; write %s to mean any characters`,
		quote(item), len(parts), fix)
}

func onePartFix(item string) string {
	every := `\.*.` + item + " to match it in every database"
	db, table, ok := strings.Cut(item, `\.`)
	if !ok || db == "" || table == "" {
		return "write " + every
	}
	return "write " + db + "." + table + ` if '\.' was meant to separate db and table ('\.' means any character), or ` + every
}

// compilePart compiles one part as a case-insensitive full-match regexp.
func compilePart(item, which, expr string) (*regexp.Regexp, error) {
	// Compile the part alone first: wrapping it could hide an unbalanced
	// parenthesis such as "a)|(b".
	if _, err := regexp.Compile(expr); err != nil {
		return nil, fmt.Errorf("table pattern %s: %s part %s is not a valid regular expression: %s",
			quote(item), which, quote(expr), describeRegexpError(err))
	}
	re, err := regexp.Compile(`(?i)^(?:` + expr + `)$`)
	if err != nil {
		return nil, fmt.Errorf("table pattern %s: %s part %s: %s", quote(item), which, quote(expr), describeRegexpError(err))
	}
	return re, nil
}

// describeRegexpError drops Go's "error parsing regexp:" prefix and explains
// the RE2 limits that Java users run into.
func describeRegexpError(err error) string {
	var se *syntax.Error
	if !errors.As(err, &se) {
		return err.Error()
	}
	msg := se.Code.String() + ": `" + se.Expr + "`"
	switch se.Code {
	case syntax.ErrInvalidPerlOp, syntax.ErrInvalidEscape, syntax.ErrInvalidRepeatOp:
		msg += " (Go RE2 syntax has no look-around, back-references or possessive quantifiers)"
	}
	return msg
}

// splitUnescaped splits s at every sep byte that a backslash does not escape.
// A backslash escapes the byte after it and the pair is kept as it is, as in
// Flink CDC's RegExSplitterByComma and RegExSplitterByDot.
func splitUnescaped(s string, sep byte) ([]string, error) {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 == len(s) {
				return nil, errors.New(`ends with a lone '\'; write \\ for a literal backslash`)
			}
			i++
		case sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:]), nil
}

// unescapeSep turns each escaped sep ("\," or "\.") into sep and keeps every
// other escape pair. s must not end with a lone backslash.
func unescapeSep(s string, sep byte) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if s[i+1] != sep {
				b.WriteByte('\\')
			}
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// javaTrim trims like Java's String.trim: every character up to U+0020.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}
