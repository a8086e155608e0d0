package secrets

import (
	"errors"
	"fmt"
	"strings"
)

// secretPrefix starts the name of a secret placeholder: ${secret_values.NAME}.
const secretPrefix = "secret_values."

// ErrSyntax is wrapped by a [PlaceholderError] for a malformed placeholder.
var ErrSyntax = errors.New("malformed placeholder")

// Ref is one placeholder of a string.
type Ref struct {
	// Name is the secret's or variable's name, without "secret_values.".
	Name string
	// Secret is true for ${secret_values.NAME}, false for ${NAME}.
	Secret bool
	// Offset is the byte offset of the placeholder's "${" in the string.
	Offset int
	// Text is the placeholder as written, such as "${secret_values.db-pw}".
	Text string
}

// kind returns "secret" or "variable".
func (r Ref) kind() string {
	if r.Secret {
		return "secret"
	}
	return "variable"
}

// ValidName reports whether name may appear in a placeholder: a non-empty
// string of letters, digits, '.', '-' and '_'.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range []byte(name) {
		if !isNameByte(c) {
			return false
		}
	}
	return true
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '.' || c == '-' || c == '_'
}

// segment is a literal run of text or a placeholder.
type segment struct {
	literal string
	ref     *Ref
}

// scan splits s into literal text (with $${ turned into ${) and
// placeholders. A malformed placeholder gives a *PlaceholderError and
// scanning goes on after it, so that every problem of s is reported.
func scan(s string) ([]segment, []*PlaceholderError) {
	var (
		segs []segment
		errs []*PlaceholderError
		lit  strings.Builder
	)
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			lit.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			ref, n, err := scanRef(s, i)
			if err != nil {
				errs = append(errs, err)
			} else {
				if lit.Len() > 0 {
					segs = append(segs, segment{literal: lit.String()})
					lit.Reset()
				}
				segs = append(segs, segment{ref: ref})
			}
			i += n
		default:
			lit.WriteByte(s[i])
			i++
		}
	}
	if lit.Len() > 0 {
		segs = append(segs, segment{literal: lit.String()})
	}
	return segs, errs
}

// scanRef parses the placeholder that starts at s[at:], which begins with
// "${". It returns the placeholder and the number of bytes it spans.
func scanRef(s string, at int) (*Ref, int, *PlaceholderError) {
	end := strings.IndexByte(s[at:], '}')
	if end < 0 {
		text := s[at:]
		if len(text) > 32 {
			text = text[:32] + "..."
		}
		return nil, len(s) - at, syntaxError(at, text, `has no closing "}" (write $${ for a literal ${)`)
	}
	text := s[at : at+end+1]
	name := text[2 : len(text)-1]
	ref := &Ref{Name: name, Offset: at, Text: text}
	if rest, ok := strings.CutPrefix(name, secretPrefix); ok {
		ref.Name, ref.Secret = rest, true
	}
	if !ValidName(ref.Name) {
		msg := `has an invalid name; names are letters, digits, ".", "-" and "_" (write $${ for a literal ${)`
		if ref.Name == "" {
			msg = "has an empty name"
		}
		return nil, len(text), syntaxError(at, text, msg)
	}
	return ref, len(text), nil
}

func syntaxError(at int, text, msg string) *PlaceholderError {
	return &PlaceholderError{
		Ref: Ref{Offset: at, Text: text},
		Err: fmt.Errorf("%w: %s", ErrSyntax, msg),
	}
}
