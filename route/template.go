package route

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// sinkTemplate is a sink-table in the replacement syntax of Java's
// Matcher.replaceAll, which Flink CDC 3.6 applies when a route has no
// replace-symbol: $n and ${name} insert a capture group, and a backslash
// makes the next character literal.
//
// Java reads the digits after '$' greedily but only while the number is a
// group that exists, so with one group "$1_tbl" and "$12" both insert group 1
// ("$12" followed by a literal "2"). Go's Regexp.Expand would read "$1_tbl"
// as the group named "1_tbl" instead, which is why this parser exists.
type sinkTemplate []segment

// segment is a literal (group < 0) or a capture group reference.
type segment struct {
	lit   string
	group int
}

// parseSinkTemplate parses sink against the groups of re, reporting at
// pipeline load time what Java would throw on the first routed record.
func parseSinkTemplate(sink string, re *regexp.Regexp) (sinkTemplate, error) {
	var t sinkTemplate
	var lit strings.Builder
	for i := 0; i < len(sink); {
		switch sink[i] {
		case '\\':
			if i+1 == len(sink) {
				return nil, errors.New(`ends with a lone '\'; write \\ for a literal backslash`)
			}
			lit.WriteByte(sink[i+1])
			i += 2
		case '$':
			group, n, err := parseGroupRef(sink[i+1:], re)
			if err != nil {
				return nil, err
			}
			t = t.appendLiteral(&lit)
			t = append(t, segment{group: group})
			i += 1 + n
		default:
			lit.WriteByte(sink[i])
			i++
		}
	}
	return t.appendLiteral(&lit), nil
}

func (t sinkTemplate) appendLiteral(lit *strings.Builder) sinkTemplate {
	if lit.Len() == 0 {
		return t
	}
	t = append(t, segment{lit: lit.String(), group: -1})
	lit.Reset()
	return t
}

// parseGroupRef parses what follows a '$' and returns the group number and
// how many bytes it used.
func parseGroupRef(rest string, re *regexp.Regexp) (group, n int, err error) {
	if rest == "" || (rest[0] != '{' && !isDigit(rest[0])) {
		return 0, 0, errors.New(`has a '$' that is not followed by a group number or {name}; write \$ for a literal '$'`)
	}
	if rest[0] == '{' {
		return parseNamedRef(rest, re)
	}
	group, n = int(rest[0]-'0'), 1
	for n < len(rest) && isDigit(rest[n]) {
		next := group*10 + int(rest[n]-'0')
		if next > re.NumSubexp() {
			break
		}
		group, n = next, n+1
	}
	if group > re.NumSubexp() {
		return 0, 0, fmt.Errorf("refers to capture group $%d, but source-table has %s", group, countGroups(re.NumSubexp()))
	}
	return group, n, nil
}

// parseNamedRef parses "{name}" like Java: ASCII letters and digits, not
// starting with a digit.
func parseNamedRef(rest string, re *regexp.Regexp) (group, n int, err error) {
	j := 1
	for j < len(rest) && (isDigit(rest[j]) || isASCIILetter(rest[j])) {
		j++
	}
	name := rest[1:j]
	switch {
	case name == "":
		return 0, 0, errors.New(`has "${" without a group name; write \$ for a literal '$'`)
	case j == len(rest) || rest[j] != '}':
		return 0, 0, fmt.Errorf(`has "${%s" without a closing '}' (group names may hold only ASCII letters and digits)`, name)
	case isDigit(name[0]):
		return 0, 0, fmt.Errorf("refers to group name %q, which starts with a digit; write $%s for a numbered group", name, name)
	}
	if group = re.SubexpIndex(name); group < 0 {
		return 0, 0, fmt.Errorf("refers to capture group %q, but source-table has no group of that name", name)
	}
	return group, j + 1, nil
}

// expand builds the sink for the table ID src whose submatch indexes are m.
// A group that did not take part in the match inserts nothing, as in Java.
func (t sinkTemplate) expand(src string, m []int) string {
	if len(t) == 1 && t[0].group < 0 {
		return t[0].lit
	}
	var b strings.Builder
	for _, seg := range t {
		if seg.group < 0 {
			b.WriteString(seg.lit)
			continue
		}
		if lo, hi := m[2*seg.group], m[2*seg.group+1]; lo >= 0 {
			b.WriteString(src[lo:hi])
		}
	}
	return b.String()
}

func isDigit(c byte) bool       { return '0' <= c && c <= '9' }
func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func countGroups(n int) string {
	if n == 1 {
		return "1 capture group"
	}
	return fmt.Sprintf("%d capture groups", n)
}
