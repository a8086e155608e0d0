package pipeline

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ingestkit/ingest/internal/suggest"
	"github.com/ingestkit/ingest/route"
	"github.com/ingestkit/ingest/secrets"
)

// value is the typed target of one option, in the manner of flag.Value:
// set parses a string into the field it points at, and get formats the
// field back. The options tables (schema.go) bind one value to each field
// of the Definition.
type value interface {
	// set parses s. Its error says what is expected without repeating s,
	// so that a secret value is never echoed; a *valueError may carry a
	// hint derived from s that is shown only when s is not secret.
	set(s string) error
	// get returns the effective value in canonical form.
	get() string
}

// valueError is an error whose hint (such as a "did you mean") is derived
// from the value and so is dropped for secret values. The hint is a suffix
// of the message, with its own leading separator.
type valueError struct {
	msg, hint string
}

func (e *valueError) Error() string { return e.msg }

type stringValue struct{ p *string }

func (v stringValue) set(s string) error { *v.p = s; return nil }
func (v stringValue) get() string        { return *v.p }

type secretValue struct{ p *secrets.Secret }

func (v secretValue) set(s string) error { *v.p = secrets.Secret(s); return nil }
func (v secretValue) get() string        { return secrets.Mask }

// intValue is an int option in [min, max].
type intValue struct {
	p        *int
	min, max int
}

func (v intValue) set(s string) error {
	n, err := parseInt(s, int64(v.min), int64(v.max))
	if err != nil {
		return err
	}
	*v.p = int(n)
	return nil
}

func (v intValue) get() string { return strconv.Itoa(*v.p) }

// int64Value is a long option in [min, max].
type int64Value struct {
	p        *int64
	min, max int64
}

func (v int64Value) set(s string) error {
	n, err := parseInt(s, v.min, v.max)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}

func (v int64Value) get() string { return strconv.FormatInt(*v.p, 10) }

func parseInt(s string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange), err == nil && (n < lo || n > hi):
		return 0, rangeError(lo, hi)
	case err != nil:
		return 0, errors.New("must be a whole number")
	}
	return n, nil
}

func rangeError(lo, hi int64) error {
	switch {
	case lo == 0 && hi == math.MaxInt64:
		return errors.New("must be a whole number that is not negative")
	case hi == math.MaxInt64:
		return fmt.Errorf("must be a whole number of at least %d", lo)
	}
	return fmt.Errorf("must be a whole number from %d to %d", lo, hi)
}

type boolValue struct{ p *bool }

// set accepts true and false in any case, as Flink does.
func (v boolValue) set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		*v.p = true
	case "false":
		*v.p = false
	default:
		return errors.New("must be true or false")
	}
	return nil
}

func (v boolValue) get() string { return strconv.FormatBool(*v.p) }

// durationValue is a Flink duration of at least min.
type durationValue struct {
	p   *time.Duration
	min time.Duration
}

func (v durationValue) set(s string) error {
	d, problem := parseDuration(s)
	if problem != "" {
		return &valueError{msg: "must be a duration such as 30s, 1 min or 500 ms", hint: "; " + problem}
	}
	if d < v.min {
		return fmt.Errorf("must be at least %s", formatDuration(v.min))
	}
	*v.p = d
	return nil
}

func (v durationValue) get() string { return formatDuration(*v.p) }

// enumValue is one of a fixed list of values, matched ignoring case like
// Flink's enum options, and stored in its canonical form.
type enumValue[T fmt.Stringer] struct {
	p      *T
	values []T
}

func enum[T fmt.Stringer](p *T, values ...T) enumValue[T] {
	return enumValue[T]{p: p, values: values}
}

func (v enumValue[T]) set(s string) error {
	names := make([]string, len(v.values))
	for i, e := range v.values {
		if strings.EqualFold(strings.TrimSpace(s), e.String()) {
			*v.p = e
			return nil
		}
		names[i] = e.String()
	}
	return &valueError{msg: "must be " + oneOf(names), hint: suggest.DidYouMean(s, names)}
}

func (v enumValue[T]) get() string { return (*v.p).String() }

// oneOf returns `"a"`, `"a" or "b"`, `one of "a", "b" or "c"`.
func oneOf(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	switch len(q) {
	case 1:
		return q[0]
	case 2:
		return q[0] + " or " + q[1]
	}
	return "one of " + strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// serverIDValue is server-id: "5400" or "5400-5408".
type serverIDValue struct{ p *ServerIDRange }

func (v serverIDValue) set(s string) error {
	const want = "must be a server id such as 5400 or a range such as 5400-5408"
	lo, hi, isRange := strings.Cut(strings.TrimSpace(s), "-")
	start, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 32)
	end := start
	if err == nil && isRange {
		end, err = strconv.ParseUint(strings.TrimSpace(hi), 10, 32)
	}
	switch {
	case err != nil:
		return errors.New(want + ", each id from 1 to 4294967295")
	case start == 0:
		return errors.New("must not use server id 0, which MySQL reserves for a server that is not a replica")
	case end < start:
		return errors.New("must be a range whose start is not above its end")
	}
	*v.p = ServerIDRange{Start: uint32(start), End: uint32(end)}
	return nil
}

func (v serverIDValue) get() string { return v.p.String() }

// timeZoneValue is a zone name that ParseTimeZone accepts.
type timeZoneValue struct{ p *string }

func (v timeZoneValue) set(s string) error {
	if _, err := ParseTimeZone(strings.TrimSpace(s)); err != nil {
		return err
	}
	*v.p = strings.TrimSpace(s)
	return nil
}

func (v timeZoneValue) get() string { return *v.p }

// keysValue is a primary-keys list, split as Flink CDC does.
type keysValue struct{ p *[]string }

func (v keysValue) set(s string) error {
	*v.p = route.SplitKeys(s)
	return nil
}

func (v keysValue) get() string { return strings.Join(*v.p, ",") }

// headersValue is sink.custom-header: key:value entries separated by ';'
// (what Flink's code splits on) or, when there is no ';', by ',' (what its
// documentation shows).
type headersValue struct{ p *[]Header }

func (v headersValue) set(s string) error {
	sep := ";"
	if !strings.Contains(s, ";") {
		sep = ","
	}
	var hs []Header
	for entry := range strings.SplitSeq(s, sep) {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		k, val, ok := strings.Cut(entry, ":")
		if !ok || strings.TrimSpace(k) == "" || strings.Contains(val, ":") {
			return errors.New("must be key:value entries separated by ';', such as app:ingest;env:prod")
		}
		hs = append(hs, Header{Key: strings.TrimSpace(k), Value: strings.TrimSpace(val)})
	}
	*v.p = hs
	return nil
}

func (v headersValue) get() string {
	parts := make([]string, len(*v.p))
	for i, h := range *v.p {
		parts[i] = h.Key + ":" + h.Value
	}
	return strings.Join(parts, ";")
}

// chunkKeysValue is scan.incremental.snapshot.chunk.key-column in Flink CDC's pipeline
// form, table-pattern:column entries separated by ';' ("app.orders:id;app.log_\.*:seq"),
// or, as an ingest extension, a single column name for every table.
type chunkKeysValue struct{ p *[]ChunkKey }

func (v chunkKeysValue) set(s string) error {
	var keys []ChunkKey
	entries := strings.Split(s, ";")
	for _, entry := range entries {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		parts := strings.Split(entry, ":")
		switch {
		case len(parts) == 1 && len(entries) == 1:
			keys = append(keys, ChunkKey{Column: entry})
			continue
		case len(parts) != 2 || strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[1]) == "":
			return &valueError{msg: "must be table-pattern:column entries separated by ';', such as app.orders:id;app.log_\\.*:seq",
				hint: fmt.Sprintf("; %q is not one", entry)}
		}
		sel, err := route.ParseSelector(strings.TrimSpace(parts[0]))
		if err != nil {
			return &valueError{msg: "has an invalid table pattern", hint: fmt.Sprintf(" in %q: %v", entry, err)}
		}
		keys = append(keys, ChunkKey{Tables: sel, Column: strings.TrimSpace(parts[1])})
	}
	if len(keys) == 0 {
		return errors.New("must name a column, or table-pattern:column entries separated by ';'")
	}
	*v.p = keys
	return nil
}

func (v chunkKeysValue) get() string {
	parts := make([]string, len(*v.p))
	for i, k := range *v.p {
		parts[i] = k.Column
		if k.Tables != nil {
			parts[i] = k.Tables.String() + ":" + k.Column
		}
	}
	return strings.Join(parts, ";")
}

// topicMappingValue is sink.tableId-to-topic.mapping: selector:topic entries separated by
// ';', each selector in the syntax of source.tables (Flink CDC splits on ';' and then on
// ':', which must give exactly two parts).
type topicMappingValue struct{ p *[]TopicMapping }

func (v topicMappingValue) set(s string) error {
	var ms []TopicMapping
	for entry := range strings.SplitSeq(s, ";") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		parts := strings.Split(entry, ":")
		if len(parts) != 2 || strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[1]) == "" {
			return errors.New("must be table-pattern:topic entries separated by ';', such as app.orders:orders;app.items_\\.*:items")
		}
		sel, err := route.ParseSelector(strings.TrimSpace(parts[0]))
		if err != nil {
			return fmt.Errorf("table pattern %q: %w", strings.TrimSpace(parts[0]), err)
		}
		ms = append(ms, TopicMapping{Tables: sel, Topic: parts[1]}) // the topic as written, as in Flink CDC
	}
	*v.p = ms
	return nil
}

func (v topicMappingValue) get() string {
	parts := make([]string, len(*v.p))
	for i, m := range *v.p {
		parts[i] = m.Tables.String() + ":" + m.Topic
	}
	return strings.Join(parts, ";")
}

// valueFormatValue is value.format: the formats of Flink CDC's Kafka sink, with a clear
// refusal of Realtime Compute's canal-protobuf.
type valueFormatValue struct{ p *ValueFormat }

func (v valueFormatValue) set(s string) error {
	if strings.EqualFold(strings.TrimSpace(s), "canal-protobuf") {
		return errors.New("canal-protobuf is a Realtime Compute format that ingest does not write; use debezium-json or canal-json")
	}
	return enum(v.p, ValueDebeziumJSON, ValueCanalJSON).set(s)
}

func (v valueFormatValue) get() string { return v.p.String() }
