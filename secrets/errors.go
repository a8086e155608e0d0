package secrets

import (
	"errors"
	"fmt"
	"strings"
)

// PlaceholderError is a placeholder that could not be expanded: malformed
// (wrapping [ErrSyntax]), not found by any provider (wrapping [ErrNotFound])
// or failed in a provider's backend (wrapping that provider's error). Its
// message names the placeholder, never a value.
type PlaceholderError struct {
	// Ref is the placeholder; for a malformed one only Offset and Text are
	// set.
	Ref Ref
	// Hints tell a user how to supply a name that was not found, one per
	// provider that was asked, such as "set INGEST_SECRET_DB_PW".
	Hints []string
	// Err is the cause.
	Err error
}

// Error describes the problem, for example `unresolved secret
// ${secret_values.db-pw}: set INGEST_SECRET_DB_PW or add "db-pw" to the
// secrets file s.yaml`.
func (e *PlaceholderError) Error() string {
	switch {
	case errors.Is(e.Err, ErrSyntax):
		return fmt.Sprintf("placeholder %q %s", e.Ref.Text, strings.TrimPrefix(e.Err.Error(), ErrSyntax.Error()+": "))
	case errors.Is(e.Err, ErrNotFound):
		return fmt.Sprintf("unresolved %s %s: %s", e.Ref.kind(), e.Ref.Text, e.help())
	default:
		return fmt.Sprintf("cannot look up %s %s: %v", e.Ref.kind(), e.Ref.Text, e.Err)
	}
}

// help joins the hints: "a", "a or b", "a, b or c".
func (e *PlaceholderError) help() string {
	switch len(e.Hints) {
	case 0:
		return fmt.Sprintf("no %s providers are configured", e.Ref.kind())
	case 1:
		return e.Hints[0]
	}
	return strings.Join(e.Hints[:len(e.Hints)-1], ", ") + " or " + e.Hints[len(e.Hints)-1]
}

// Unwrap returns the cause.
func (e *PlaceholderError) Unwrap() error { return e.Err }

// PlaceholderErrors is every placeholder of a string that could not be
// expanded, in the order they appear.
type PlaceholderErrors []*PlaceholderError

// Error returns the messages, one per line.
func (es PlaceholderErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (es PlaceholderErrors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}
