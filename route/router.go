package route

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Mode is the pipeline option route-mode: which of several matching routes
// apply to a table. The zero value is [AllMatch], the Flink CDC default.
type Mode int

const (
	// AllMatch routes a table through every matching route, so it can fan
	// out to several topics.
	AllMatch Mode = iota
	// FirstMatch routes a table through the first matching route only.
	FirstMatch
)

// ParseMode parses "ALL_MATCH" or "FIRST_MATCH", ignoring case like Flink CDC
// enum options.
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{AllMatch, FirstMatch} {
		if strings.EqualFold(s, m.String()) {
			return m, nil
		}
	}
	return 0, fmt.Errorf(`unknown route mode %q; valid values are "ALL_MATCH" and "FIRST_MATCH"`, s)
}

// String returns "ALL_MATCH" or "FIRST_MATCH".
func (m Mode) String() string {
	switch m {
	case AllMatch:
		return "ALL_MATCH"
	case FirstMatch:
		return "FIRST_MATCH"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Rule is one item of the pipeline's route block.
type Rule struct {
	// SourceTable is the table pattern. See [Table] for its syntax, which
	// differs from [Selector]'s.
	SourceTable string
	// SinkTable is the topic. Without ReplaceSymbol, $1, $2 … insert the
	// capture groups of SourceTable and `\` escapes the next character.
	SinkTable string
	// ReplaceSymbol, when not empty, is replaced in SinkTable by the source
	// table name (without the db), and SinkTable is otherwise literal.
	ReplaceSymbol string
	// Description is free text.
	Description string
}

// TableID names a MySQL table.
type TableID struct {
	// DB is the database (Flink CDC's schema name).
	DB string
	// Table is the table name.
	Table string
}

// String returns "db.table", Flink CDC's TableId string for a MySQL table and
// the default topic of the table.
func (id TableID) String() string { return id.DB + "." + id.Table }

// Table maps source tables to Kafka topics with the semantics of Flink CDC
// 3.6's TableIdRouter (docs/pipeline.md).
//
// A route's source-table becomes one regular expression: each ','
// becomes '|', an unescaped '.' a literal dot and `\.` the regex '.'. It must
// match the whole "db.table" and, unlike [Selector], is case-sensitive,
// because Flink CDC 3.6 compiles it without flags. The routed sink-table is
// the topic name as it is, dots included: for Kafka there is no TableId to
// split.
//
// Without replace-symbol, sink-table follows Java's replacement syntax:
// "$1_tbl" is group 1 followed by "_tbl". It is expanded against the match of
// the whole table ID. Flink CDC calls Matcher.find and replaceAll instead, so
// with an alternation such as `db.a, db.a_\.*` and sink-table "all_a" it routes
// db.a_x to "all_a_x" (only the prefix "db.a" is replaced); here it goes to
// "all_a".
//
// A Table is safe for concurrent use. It caches the topics of every table it
// is asked about.
type Table struct {
	rules     []compiledRule
	mode      Mode
	topicOnly []string // the sink option topic, when set
	cache     sync.Map // TableID → []string
}

type compiledRule struct {
	re     *regexp.Regexp
	sink   string
	symbol string
	tmpl   sinkTemplate // used when symbol is empty
}

// NewTable compiles the route rules. mode is the pipeline option route-mode
// and topic the sink option topic, which, when not empty, sends every table
// to that one topic. Errors about a rule are [*FieldError]s naming the rule's
// field, and include the sink-table references to capture groups that do not
// exist, which Flink CDC reports only when the first record is routed.
func NewTable(rules []Rule, mode Mode, topic string) (*Table, error) {
	if mode != AllMatch && mode != FirstMatch {
		return nil, fmt.Errorf("unknown route mode %v", mode)
	}
	t := &Table{mode: mode}
	if topic != "" {
		t.topicOnly = []string{topic}
	}
	for i, r := range rules {
		cr, err := compileRule(i, r)
		if err != nil {
			return nil, err
		}
		t.rules = append(t.rules, cr)
	}
	return t, nil
}

func compileRule(i int, r Rule) (compiledRule, error) {
	if r.SinkTable == "" {
		return compiledRule{}, fieldErr("route", i, "sink-table", errors.New("is empty; write the topic name"))
	}
	re, err := compileRoutePattern(r.SourceTable)
	if err != nil {
		return compiledRule{}, fieldErr("route", i, "source-table", err)
	}
	cr := compiledRule{re: re, sink: r.SinkTable, symbol: r.ReplaceSymbol}
	if cr.symbol == "" {
		if cr.tmpl, err = parseSinkTemplate(r.SinkTable, re); err != nil {
			return compiledRule{}, fieldErr("route", i, "sink-table", err)
		}
	}
	return cr, nil
}

// compileRoutePattern compiles a source-table as Flink CDC 3.6's
// TableIdRouter.convertTableListToRegExpPattern does, anchored to match the
// whole table ID.
func compileRoutePattern(source string) (*regexp.Regexp, error) {
	items := strings.Split(source, ",")
	// Java's String.split drops trailing empty strings but keeps the others,
	// which become empty alternatives: "db.t(_x,)" is db\.t(_x|).
	for len(items) > 0 && items[len(items)-1] == "" {
		items = items[:len(items)-1]
	}
	blank := true
	for i, item := range items {
		items[i] = swapDots(javaTrim(item))
		blank = blank && items[i] == ""
	}
	if blank {
		return nil, errors.New("has no table pattern; write one such as shop_[0-9]+.orders")
	}
	expr := strings.Join(items, "|")
	// Compile alone first so that an unbalanced ')' is not hidden by the
	// wrapping group.
	if _, err := regexp.Compile(expr); err != nil {
		return nil, fmt.Errorf(`%s becomes the regular expression %s, which is not valid: %s; note that an unescaped '.' separates db and table, and \. is the regex any-character`,
			quote(source), quote(expr), describeRegexpError(err))
	}
	return regexp.Compile(`^(?:` + expr + `)$`)
}

// swapDots turns `\.` into '.' and every other '.' into `\.`, in one pass
// that gives the same result as Flink CDC's three string replacements.
func swapDots(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '.':
			b.WriteByte('.')
			i++
		case s[i] == '.':
			b.WriteString(`\.`)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// Topics returns the topics that records of the table db.table go to: the
// sink option topic when it is set; otherwise the routed sink-table of every
// matching rule (AllMatch, in rule order, without duplicates) or of the first
// one (FirstMatch); otherwise the default topic "db.table". The result is
// never empty and is shared between calls: callers must not modify it. The
// names are not checked: a capture group can even expand to "". Check them
// with [ValidateKafkaTopic] or [ValidateApsaraTopic].
func (t *Table) Topics(db, table string) []string {
	if t.topicOnly != nil {
		return t.topicOnly
	}
	id := TableID{DB: db, Table: table}
	if v, ok := t.cache.Load(id); ok {
		return v.([]string)
	}
	v, _ := t.cache.LoadOrStore(id, t.route(id))
	return v.([]string)
}

func (t *Table) route(id TableID) []string {
	name := id.String()
	var topics []string
	for i := range t.rules {
		r := &t.rules[i]
		m := r.re.FindStringSubmatchIndex(name)
		if m == nil {
			continue
		}
		if sink := r.sinkFor(id, name, m); !slices.Contains(topics, sink) {
			topics = append(topics, sink)
		}
		if t.mode == FirstMatch {
			break
		}
	}
	if len(topics) == 0 {
		return []string{name}
	}
	return topics
}

// sinkFor returns the routed sink-table. Flink CDC 3.6 expands the template
// with Matcher.find and replaceAll, which for an alternation such as
// "db.a, db.a_\.*" can replace only a prefix of the table ID; here the
// template is always expanded against the whole-ID match that selected the
// rule.
func (r *compiledRule) sinkFor(id TableID, name string, m []int) string {
	if r.symbol != "" {
		return strings.ReplaceAll(r.sink, r.symbol, id.Table)
	}
	return r.tmpl.expand(name, m)
}
