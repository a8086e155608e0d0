package history

import (
	"regexp"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// parseDDL parses a DDL statement of the binlog with TiDB's MySQL parser. MariaDB syntax that
// parser rejects is rewritten into syntax it accepts and parsed again (see rewriteMariaDB);
// the error returned is the first parse's.
func parseDDL(query string) ([]ast.StmtNode, error) {
	if nationalType.MatchString(query) {
		query = rewriteNational(query)
	}
	p := parser.New()
	stmts, _, err := p.Parse(query, "", "")
	if err == nil {
		return stmts, nil
	}
	if rewritten := rewriteMariaDB(query); rewritten != query {
		if stmts, _, err2 := p.Parse(rewritten, "", ""); err2 == nil {
			return stmts, nil
		}
	}
	return nil, err
}

// sentinel starts the column and table COMMENTs by which rewriteMariaDB carries what TiDB's
// parser cannot read: a data type it does not know, and character sets and collations outside
// its short list. The applier reads them back (see directive).
const sentinel = "~ingest~"

// Directive kinds carried in sentinel comments.
const (
	directiveType    = "type"    // a data type: "point", "uuid", …
	directiveCharset = "charset" // CHARACTER SET name (column or table default)
	directiveCollate = "collate" // COLLATE name (column or table default)
	directiveConvert = "convert" // CONVERT TO CHARACTER SET name
)

// directive splits a sentinel comment into its kind and value; ok is false for an ordinary
// comment.
func directive(comment string) (kind, value string, ok bool) {
	rest, ok := strings.CutPrefix(comment, sentinel)
	if !ok {
		return "", "", false
	}
	kind, value, ok = strings.Cut(rest, ":")
	return kind, value, ok
}

// unknownTypes are MariaDB data types TiDB's parser rejects. They are rewritten to
// BLOB COMMENT '~ingest~type:name'.
var unknownTypes = map[string]bool{
	"GEOMETRY": true, "POINT": true, "LINESTRING": true, "POLYGON": true, "MULTIPOINT": true,
	"MULTILINESTRING": true, "MULTIPOLYGON": true, "GEOMETRYCOLLECTION": true, "GEOMCOLLECTION": true,
	"UUID": true, "INET4": true, "INET6": true,
}

// notColumnName are the keywords that may stand right before a word that is then a column
// name, not a type (ADD COLUMN uuid UUID: the first uuid is a name).
var notColumnName = map[string]bool{
	"ADD": true, "COLUMN": true, "EXISTS": true, "MODIFY": true, "CHANGE": true, "DROP": true,
	"RENAME": true, "TO": true, "AFTER": true, "FIRST": true, "TABLE": true, "AS": true, "BY": true,
	"KEY": true, "INDEX": true, "ON": true, "AND": true, "OR": true, "NOT": true, "IF": true,
	"SELECT": true, "FROM": true, "WHERE": true, "CONSTRAINT": true, "CHECK": true, "ALTER": true,
}

// rewriteMariaDB rewrites the MariaDB-only syntax of a DDL statement that TiDB's parser
// rejects into syntax it accepts with the same effect on table shapes:
//
//   - CREATE OR REPLACE TABLE → CREATE TABLE; ALTER ONLINE/IGNORE TABLE → ALTER TABLE;
//     RENAME COLUMN IF EXISTS and DROP CONSTRAINT/CHECK IF EXISTS lose IF EXISTS; the
//     INVISIBLE column attribute is dropped (invisible columns are in the binlog rows);
//   - the GEOMETRY family, UUID, INET4 and INET6 become BLOB COMMENT '~ingest~type:name';
//   - CHARACTER SET, CHARSET, COLLATE and CONVERT TO CHARACTER SET clauses become
//     COMMENT '~ingest~charset:name' (collate, convert), since the parser knows only a few
//     character sets and collations;
//   - executable comments (/*! … */, /*M! … */) are opened.
func rewriteMariaDB(query string) string {
	toks := tokenize(query)
	var out strings.Builder
	sig := func(i int) int { // index of the significant token at or after i
		for i < len(toks) && toks[i].space() {
			i++
		}
		return i
	}
	word := func(i int) string {
		if i < len(toks) && toks[i].kind == tokWord {
			return strings.ToUpper(toks[i].text)
		}
		return ""
	}
	prev := -1 // the last significant token written
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.space() {
			out.WriteString(t.text)
			continue
		}
		w := word(i)
		next := sig(i + 1)
		switch {
		case w == "OR" && word(prevIndex(toks, i)) == "CREATE" && word(next) == "REPLACE":
			i = next
			continue
		case (w == "ONLINE" || w == "IGNORE") && (word(prev) == "ALTER" || word(prev) == "ONLINE" || word(prev) == "IGNORE"):
			continue
		case w == "IF" && word(next) == "EXISTS" && (word(prev) == "COLUMN" && word(prevIndex(toks, prev)) == "RENAME" ||
			word(prev) == "CONSTRAINT" || word(prev) == "CHECK"):
			i = next
			continue
		case w == "INVISIBLE":
			continue
		case w == "DEFAULT" && (word(next) == "CHARSET" || word(next) == "CHARACTER" || word(next) == "COLLATE"):
			continue // a table option; COMMENT takes no DEFAULT
		case w == "CONVERT" && word(next) == "TO":
			if end, name, ok := charsetClause(toks, sig(next+1), sig); ok {
				writeDirective(&out, directiveConvert, name)
				i, prev = end-1, end-1
				continue
			}
		case w == "CHARSET" || w == "CHARACTER" && word(next) == "SET":
			if end, name, ok := charsetClause(toks, i, sig); ok {
				writeDirective(&out, directiveCharset, name)
				i, prev = end-1, end-1
				continue
			}
		case w == "COLLATE":
			if end, name, ok := nameAfter(toks, sig(i+1), sig); ok {
				writeDirective(&out, directiveCollate, name)
				i, prev = end-1, end-1
				continue
			}
		case unknownTypes[w] && prev >= 0 && (toks[prev].kind == tokQuoted || toks[prev].kind == tokWord && !notColumnName[word(prev)]):
			writeDirective(&out, directiveType, strings.ToLower(w))
			prev = i
			continue
		case t.kind == tokComment && (strings.HasPrefix(t.text, "/*!") || strings.HasPrefix(t.text, "/*M!")):
			body := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(t.text, "/*"), "M"), "*/")
			body = strings.TrimLeft(body[1:], "0123456789") // the "!" and the version
			out.WriteString(" " + rewriteMariaDB(body) + " ")
			continue
		}
		out.WriteString(t.text)
		if t.kind != tokComment {
			prev = i
		}
	}
	return out.String()
}

func writeDirective(out *strings.Builder, kind, value string) {
	if kind == directiveType {
		out.WriteString("BLOB ")
	}
	out.WriteString("COMMENT '" + sentinel + kind + ":" + strings.ToLower(value) + "'")
}

// prevIndex returns the index of the significant token before i, or -1.
func prevIndex(toks []token, i int) int {
	for i--; i >= 0; i-- {
		if !toks[i].space() && toks[i].kind != tokComment {
			return i
		}
	}
	return -1
}

// charsetClause reads "CHARACTER SET [=] name" or "CHARSET [=] name" starting at i and
// returns the index after it.
func charsetClause(toks []token, i int, sig func(int) int) (end int, name string, ok bool) {
	if i >= len(toks) || toks[i].kind != tokWord {
		return 0, "", false
	}
	switch strings.ToUpper(toks[i].text) {
	case "CHARSET":
		i = sig(i + 1)
	case "CHARACTER":
		i = sig(i + 1)
		if i >= len(toks) || !strings.EqualFold(toks[i].text, "SET") {
			return 0, "", false
		}
		i = sig(i + 1)
	default:
		return 0, "", false
	}
	return nameAfter(toks, i, sig)
}

// nameAfter reads "[=] name" at i (a word, or a quoted name) and returns the index after it.
func nameAfter(toks []token, i int, sig func(int) int) (end int, name string, ok bool) {
	if i < len(toks) && toks[i].text == "=" {
		i = sig(i + 1)
	}
	if i >= len(toks) {
		return 0, "", false
	}
	switch t := toks[i]; t.kind {
	case tokWord:
		if strings.EqualFold(t.text, "DEFAULT") {
			return 0, "", false
		}
		return i + 1, t.text, true
	case tokString, tokQuoted:
		return i + 1, t.text[1 : len(t.text)-1], true
	}
	return 0, "", false
}

type tokKind uint8

const (
	tokSpace   tokKind = iota
	tokComment         // /* … */, -- …, # …
	tokWord            // a keyword, bare identifier or number
	tokQuoted          // a `quoted` identifier
	tokString          // a '…' or "…" literal
	tokOther           // punctuation
)

type token struct {
	kind tokKind
	text string
}

func (t token) space() bool { return t.kind == tokSpace }

// tokenize splits SQL text into tokens, keeping every byte (their concatenation is s).
func tokenize(s string) []token {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		j := i + 1
		kind := tokOther
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			for j < len(s) && strings.IndexByte(" \t\n\r", s[j]) >= 0 {
				j++
			}
			kind = tokSpace
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			if end := strings.Index(s[i+2:], "*/"); end >= 0 {
				j = i + 2 + end + 2
			} else {
				j = len(s)
			}
			kind = tokComment
		case c == '#' || c == '-' && strings.HasPrefix(s[i:], "-- "):
			if end := strings.IndexByte(s[i:], '\n'); end >= 0 {
				j = i + end
			} else {
				j = len(s)
			}
			kind = tokComment
		case c == '\'' || c == '"' || c == '`':
			for j < len(s) {
				if s[j] == '\\' && c != '`' {
					j += 2
					continue
				}
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c { // doubled quote
						j += 2
						continue
					}
					j++
					break
				}
				j++
			}
			j = min(j, len(s))
			kind = tokString
			if c == '`' {
				kind = tokQuoted
			}
		case isWordByte(c):
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			kind = tokWord
		}
		toks = append(toks, token{kind: kind, text: s[i:j]})
		i = j
	}
	return toks
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

var nationalType = regexp.MustCompile(`(?i)\b(?:NATIONAL|NCHAR|NVARCHAR)\b`)

// rewriteNational spells out the character set of the national character types, which
// TiDB's parser reads without it: NCHAR(n), NVARCHAR(n), NATIONAL CHAR(n) and NATIONAL
// VARCHAR(n) (or CHARACTER VARYING) are utf8 (utf8mb3).
func rewriteNational(query string) string {
	toks := tokenize(query)
	var out strings.Builder
	prev := -1
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		w := strings.ToUpper(t.text)
		national := t.kind == tokWord && (w == "NATIONAL" || (w == "NCHAR" || w == "NVARCHAR") && prev >= 0 &&
			(toks[prev].kind == tokQuoted || toks[prev].kind == tokWord && !notColumnName[strings.ToUpper(toks[prev].text)]))
		if !national {
			out.WriteString(t.text)
			if !t.space() && t.kind != tokComment {
				prev = i
			}
			continue
		}
		// The type's words, then its length, then the character set.
		j := i
		for ; j < len(toks); j++ {
			if toks[j].space() {
				continue
			}
			switch u := strings.ToUpper(toks[j].text); {
			case toks[j].kind != tokWord:
			case u == "NATIONAL":
				continue
			case u == "NCHAR" || u == "NVARCHAR":
				out.WriteString(" " + u[1:])
				continue
			case u == "CHAR" || u == "CHARACTER" || u == "VARCHAR" || u == "VARYING":
				out.WriteString(" " + u)
				continue
			}
			break
		}
		if j < len(toks) && toks[j].text == "(" {
			for ; j < len(toks) && toks[j].text != ")"; j++ {
				out.WriteString(toks[j].text)
			}
			if j < len(toks) {
				out.WriteString(")")
				j++
			}
		}
		out.WriteString(" CHARACTER SET utf8 ")
		i, prev = j-1, j-1
	}
	return out.String()
}

// shapeStatement matches the statements that may change a table's shape, for a statement
// that could not be parsed: anything else (CREATE PROCEDURE, GRANT, …) is no DDL of a table.
var shapeStatement = regexp.MustCompile(`(?is)^(?:CREATE\s+(?:OR\s+REPLACE\s+)?TABLE|ALTER\s+(?:(?:ONLINE|IGNORE)\s+)*TABLE|` +
	`DROP\s+TABLE|RENAME\s+TABLE|DROP\s+(?:DATABASE|SCHEMA)|DROP\s+INDEX)\b`)

// mayChangeShapes reports whether an unparsable statement may change a table's shape.
// Temporary tables are left out: their rows are not in a row-based binlog.
func mayChangeShapes(query string) bool {
	return shapeStatement.MatchString(StripLeadingComments(query))
}
