package pipeline

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Error is one problem of a pipeline file, at a position.
type Error struct {
	File      string
	Line, Col int // from 1
	// Path names the block or option, such as "sink",
	// "source.scan.startup.mode" or "route[1].sink-table"; it is empty for
	// problems of the YAML itself.
	Path string
	// Msg says what is wrong and, where it can, what to do.
	Msg string
	// Err is the cause when there is one, such as a
	// *secrets.PlaceholderError; its text is already part of Msg.
	Err error
}

// Error returns "file:line:col: path: message".
func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s", e.File, e.Line, e.Col, e.Path, e.Msg)
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem found in a pipeline file, sorted by position.
// [Load] and [Parse] return it as their error.
type Errors []*Error

// Error returns one error per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}

// sort orders the errors by line, column and path, keeping the order in
// which equal ones were found.
func (es Errors) sort() {
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col), cmp.Compare(a.Path, b.Path))
	})
}

// parentPath returns the path that encloses p: "route[0]" for
// "route[0].sink-table", "route" for "route[0]", and for an option, which
// may contain dots itself, the text before its last '.'. The callers walk
// up until they find a known path, so the intermediate ones do no harm.
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// plural returns "1 id" or "3 ids".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
