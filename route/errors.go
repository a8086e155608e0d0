package route

import (
	"fmt"
	"strconv"
	"unicode"
)

// FieldError reports an invalid pipeline field, so that a pipeline loader can
// find the YAML node with errors.As and prefix the message with its position.
type FieldError struct {
	// Block is the top-level block of the field: "source", "route" or
	// "transform".
	Block string
	// Index is the item's position in the route or transform list, counting
	// from 0, or -1 for a field of a map block such as source.
	Index int
	// Field is the option name, such as "tables.exclude", "source-table" or
	// "primary-keys".
	Field string
	// Err says what is wrong.
	Err error
}

// Path returns the field's path in the pipeline file, such as
// "route[1].sink-table" or "source.tables".
func (e *FieldError) Path() string {
	if e.Index < 0 {
		return e.Block + "." + e.Field
	}
	return fmt.Sprintf("%s[%d].%s", e.Block, e.Index, e.Field)
}

// Error returns the path followed by what is wrong.
func (e *FieldError) Error() string { return e.Path() + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(block string, index int, field string, err error) error {
	return &FieldError{Block: block, Index: index, Field: field, Err: err}
}

// quote quotes s for an error message. Unlike %q it leaves backslashes
// alone when it can, because patterns are full of them and users must see
// what they wrote.
func quote(s string) string {
	for _, r := range s {
		if r == '"' || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return `"` + s + `"`
}
