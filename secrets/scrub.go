package secrets

import (
	"bytes"
	"encoding/json"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// MinScrubLen is the length, in bytes, below which a [Scrubber] does not
// mask a secret value: replacing every "a" or "42" of a log would make it
// unreadable without hiding anything. The ingest command warns about such
// secrets ([Scrubber.Short]); docs/pipeline.md ("Placeholders") says so.
const MinScrubLen = 4

// Scrubber knows the secret values a [Resolver] has looked up and removes
// them from text: every occurrence of a value, as written or in the escaped
// forms it takes in JSON, Go-quoted, URL-query and URL-path text, becomes
// the placeholder that names it, ${secret_values.NAME}. Values are matched
// longest first, so that a value that contains another is masked whole.
// Values shorter than [MinScrubLen] are remembered but not masked.
//
// A Scrubber is safe for concurrent use; the zero value is not usable, call
// [NewScrubber]. A nil *Scrubber scrubs nothing.
type Scrubber struct {
	mu     sync.Mutex
	values map[string]string // value -> name (the first name seen)
	short  []string          // names of values too short to mask

	rep atomic.Pointer[scrubState]
}

// scrubState is what Scrub uses, rebuilt by Add.
type scrubState struct {
	text   *strings.Replacer // escaped forms -> placeholder
	hide   *strings.Replacer // JSON forms -> hidden placeholder (HideJSON)
	reveal *strings.Replacer // hidden placeholder -> JSON form (RevealJSON)
}

// NewScrubber returns an empty Scrubber.
func NewScrubber() *Scrubber {
	return &Scrubber{values: make(map[string]string)}
}

// Add remembers the value of the secret name. An empty value is ignored.
func (s *Scrubber) Add(name, value string) {
	if s == nil || value == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.values[value]; ok {
		return
	}
	s.values[value] = name
	if len(value) < MinScrubLen {
		s.short = append(s.short, name)
		return
	}
	s.rebuild()
}

// Short returns the names of the secrets whose values are too short to be
// masked, in the order they were added.
func (s *Scrubber) Short() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.short)
}

// rebuild makes the replacers from s.values; s.mu is held.
func (s *Scrubber) rebuild() {
	type pair struct{ old, new string }
	var text, hide []pair
	taken := make(map[string]bool)
	add := func(old, placeholder string) {
		if !taken[old] {
			taken[old] = true
			text = append(text, pair{old, placeholder})
		}
	}
	names := make(map[string]string) // value -> placeholder, of the values to mask
	for value, name := range s.values {
		if len(value) >= MinScrubLen {
			names[value] = "${" + secretPrefix + name + "}"
			hide = append(hide, pair{jsonForm(value, true), hiddenPlaceholder(name)})
		}
	}
	// A placeholder stands for itself, so that scrubbing twice changes nothing even when a
	// value is part of a placeholder's text ("values", a NAME). Then whole values, before
	// the parts of others.
	for _, placeholder := range names {
		add(placeholder, placeholder)
	}
	for value, placeholder := range names {
		for _, f := range forms(value) {
			add(f, placeholder)
		}
	}
	for value, placeholder := range names {
		for _, part := range parts(value) {
			for _, f := range forms(part) {
				add(f, placeholder)
			}
		}
	}
	// strings.Replacer tries the old strings in argument order at each
	// position: longest first masks a value that contains another whole.
	order := func(a, b pair) int {
		if len(a.old) != len(b.old) {
			return len(b.old) - len(a.old)
		}
		return strings.Compare(a.old, b.old)
	}
	slices.SortFunc(text, order)
	slices.SortFunc(hide, order)
	st := &scrubState{}
	var args, hargs, rargs []string
	for _, p := range text {
		args = append(args, p.old, p.new)
	}
	for _, p := range hide {
		hargs = append(hargs, p.old, p.new)
		rargs = append(rargs, p.new, p.old)
	}
	st.text, st.hide, st.reveal = strings.NewReplacer(args...), strings.NewReplacer(hargs...), strings.NewReplacer(rargs...)
	s.rep.Store(st)
}

// parts returns the pieces of value a client may print alone: the items of a
// comma-separated list (bootstrap.servers), and the host of each host:port
// item, as in "lookup HOST: no such host". Pieces shorter than MinScrubLen
// are left out.
func parts(value string) []string {
	var out []string
	for item := range strings.SplitSeq(value, ",") {
		item = strings.TrimSpace(item)
		out = append(out, item)
		if host, _, err := net.SplitHostPort(item); err == nil {
			out = append(out, host)
		}
	}
	return slices.DeleteFunc(out, func(p string) bool { return len(p) < MinScrubLen })
}

// forms returns value as it may appear in output: as it is, JSON-escaped
// (with and without HTML escaping), Go-quoted (%q), URL-query- and
// URL-path-escaped; each without quotes, without repeats.
func forms(value string) []string {
	q := strconv.Quote(value)
	all := []string{value, jsonForm(value, true), jsonForm(value, false), q[1 : len(q)-1],
		url.QueryEscape(value), url.PathEscape(value)}
	slices.Sort(all)
	return slices.Compact(all)
}

// jsonForm returns value as encoding/json writes it inside a string,
// without the quotes.
func jsonForm(value string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(value) // a string always encodes
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// hiddenPlaceholder is the placeholder of name as [Scrubber.HideJSON] writes
// it: "\u0024{secret_values.NAME}", which decodes to ${secret_values.NAME}.
// encoding/json never escapes '$', so the form cannot come from other text.
func hiddenPlaceholder(name string) string {
	return `\u0024{` + secretPrefix + name + "}"
}

// Scrub returns s with every secret value replaced by its placeholder.
func (s *Scrubber) Scrub(text string) string {
	if s == nil {
		return text
	}
	st := s.rep.Load()
	if st == nil {
		return text
	}
	return st.text.Replace(text)
}

// Contains reports whether text holds a secret value that Scrub masks.
func (s *Scrubber) Contains(text string) bool {
	return s.Scrub(text) != text
}

// HideJSON replaces, in the strings of the JSON document b, each secret
// value by the escaped placeholder "\u0024{secret_values.NAME}", so that
// the document can be stored without the values; [Scrubber.RevealJSON]
// puts them back. Read without RevealJSON, such a string holds
// ${secret_values.NAME}. Numbers, names of literals and the document's
// structure are left alone, so the result is valid JSON.
func (s *Scrubber) HideJSON(b []byte) []byte {
	st := s.state()
	if st == nil {
		return b
	}
	var out bytes.Buffer
	for i := 0; i < len(b); {
		if b[i] != '"' {
			out.WriteByte(b[i])
			i++
			continue
		}
		end := stringEnd(b, i)
		out.WriteString(st.hide.Replace(string(b[i:end])))
		i = end
	}
	return out.Bytes()
}

// stringEnd returns the index after the JSON string that starts at b[at],
// a quote; or len(b) when it is not closed.
func stringEnd(b []byte, at int) int {
	for i := at + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// RevealJSON undoes [Scrubber.HideJSON] for the secrets s knows.
func (s *Scrubber) RevealJSON(b []byte) []byte {
	if st := s.state(); st != nil {
		return []byte(st.reveal.Replace(string(b)))
	}
	return b
}

func (s *Scrubber) state() *scrubState {
	if s == nil {
		return nil
	}
	return s.rep.Load()
}
