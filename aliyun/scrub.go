package aliyun

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// redacted replaces every credential removed by scrub.
const redacted = "[redacted]"

// credentialParam matches the name and separator of a credential-bearing
// parameter in the forms it takes in error text: a plain query
// (AccessKeyId=X&), a percent-encoded query inside a string-to-sign
// (AccessKeyId%3DX%26), the same encoded twice (AccessKeyId%253DX%2526) and
// JSON or key: value text ("AccessKeySecret":"X"). Names are matched with
// their exact case, as the API spells them, so prose such as the option name
// aliyun.kafka.accessKeySecret is left alone. The name must not follow a
// letter, so that SignatureMethod stays readable while Signature= does not. The value after the match ends at the first
// separator of valueEnd.
var credentialParam = regexp.MustCompile(
	`(?:^|[^A-Za-z])(?:AccessKeyId|AccessKeySecret|Signature|SecurityToken|BearerToken|SecretData)` +
		`(?:"?\s*[:=]\s*"?|%3D|%253D)`)

// valueTerminators end a parameter value in error text.
var valueTerminators = []string{"&", "%26", "%2526", `"`, "'", " ", "\t", "\n", "\r", "<", ">", ",", ";", "}", ")"}

// scrub removes credentials from s: the value of every credential parameter
// (AccessKeyId, AccessKeySecret, Signature, SecurityToken, BearerToken and
// KMS SecretData, in query, percent-encoded, doubly encoded and JSON form)
// and every occurrence of the given literal values, raw or percent-encoded.
// Literal values shorter than four characters are not replaced, because doing
// so would mangle unrelated text; the parameter patterns still cover them.
func scrub(s string, literals ...string) string {
	s = scrubParams(s)
	for _, lit := range literals {
		if len(lit) < 4 {
			continue
		}
		for _, form := range encodings(lit) {
			s = strings.ReplaceAll(s, form, redacted)
		}
	}
	return s
}

// scrubParams replaces the value of every credential parameter in s.
func scrubParams(s string) string {
	locs := credentialParam.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		if loc[0] < last {
			continue // inside a value already removed
		}
		b.WriteString(s[last:loc[1]])
		b.WriteString(redacted)
		last = valueEnd(s, loc[1])
	}
	b.WriteString(s[last:])
	return b.String()
}

// valueEnd returns the index of the first value terminator in s at or after
// start, or len(s).
func valueEnd(s string, start int) int {
	for i := start; i < len(s); i++ {
		for _, t := range valueTerminators {
			if strings.HasPrefix(s[i:], t) {
				return i
			}
		}
	}
	return len(s)
}

// encodings returns v as it may appear in error text: raw, query-escaped,
// in the RPC percent-encoding of a string-to-sign, and that encoded again.
func encodings(v string) []string {
	q := url.QueryEscape(v)
	p := percentEncode(v)
	forms := []string{v, q, p, percentEncode(p)}
	out := forms[:0]
	seen := make(map[string]bool, len(forms))
	for _, f := range forms {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	// Longest first, so that an encoded form is not half-replaced by a
	// shorter one that is its prefix.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// percentEncode is the RPC signature encoding: url.QueryEscape with "+" as
// %20, "*" as %2A and "~" left alone.
func percentEncode(s string) string {
	e := url.QueryEscape(s)
	e = strings.ReplaceAll(e, "+", "%20")
	e = strings.ReplaceAll(e, "*", "%2A")
	return strings.ReplaceAll(e, "%7E", "~")
}

// maxLiterals bounds how many credential values a secretSet remembers; STS
// tokens rotate, and the oldest are dropped first. The parameter patterns of
// scrub still cover dropped values in query or JSON form.
const maxLiterals = 256

// secretSet is the set of credential values a client has used, so that
// scrub can remove them from error text wherever they appear. It is safe for
// concurrent use.
type secretSet struct {
	mu   sync.Mutex
	vals []string
}

// add remembers the non-empty values.
func (s *secretSet) add(vals ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
next:
	for _, v := range vals {
		if v == "" {
			continue
		}
		for _, have := range s.vals {
			if have == v {
				continue next
			}
		}
		s.vals = append(s.vals, v)
		if len(s.vals) > maxLiterals {
			s.vals = s.vals[len(s.vals)-maxLiterals:]
		}
	}
}

// scrub removes the remembered values and every credential parameter.
func (s *secretSet) scrub(text string) string {
	s.mu.Lock()
	vals := append([]string(nil), s.vals...)
	s.mu.Unlock()
	return scrub(text, vals...)
}

// guard is the last check on an error before it leaves the package: if its
// text still contains a credential (which would be a bug here, since every
// error is built from scrubbed text), it is replaced by an error with the
// scrubbed text. The replacement answers errors.Is like the original but
// does not unwrap to it, so the raw text cannot be reached.
func (s *secretSet) guard(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	clean := s.scrub(text)
	if clean == text {
		return err
	}
	return &scrubbedError{msg: clean, orig: err}
}

// scrubbedError carries the scrubbed text of an error whose own text held a
// credential.
type scrubbedError struct {
	msg  string
	orig error
}

func (e *scrubbedError) Error() string { return e.msg }

// Is reports whether the original error matches target.
func (e *scrubbedError) Is(target error) bool { return errors.Is(e.orig, target) }
