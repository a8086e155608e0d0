package upsert

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ingestkit/ingest/change"
)

// This file writes key.format csv as Flink's CsvRowDataSerializationSchema does with its
// defaults: Jackson's CSV writer, ',' between fields, '"' quotes, no line separator, and
// null as an empty field.

// csvMaxUnquoted is the longest value (in UTF-16 units) that Jackson's CSV writer checks
// before quoting; a longer one is always quoted (CsvEncoder.MAX_QUOTE_CHECK).
const csvMaxUnquoted = 24

// csvMinSafe is the lowest character that needs no quotes: one above the separator, the
// quote character and the (empty) line separator.
const csvMinSafe = ',' + 1 // ',' is above '"'

// appendCSVString appends s as Jackson's CSV writer does in its default, loose quoting
// mode: quoted when longer than 24 UTF-16 units or holding a character below '-' (space,
// '"', ',' and the controls among them), with quotes doubled.
func appendCSVString(dst []byte, s string) []byte {
	if !csvNeedsQuotes(s) {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, s[i])
	}
	return append(dst, '"')
}

func csvNeedsQuotes(s string) bool {
	units := 0
	for _, r := range s {
		if r < csvMinSafe {
			return true
		}
		units += utf16.RuneLen(r)
	}
	return units > csvMaxUnquoted || !utf8.ValidString(s)
}

// appendCSVValue appends one primary key value as Flink's CSV format writes it: numbers
// and booleans as they are, everything else (a DECIMAL's text, strings, temporal values,
// base64 bytes) as a string with the quoting above.
func appendCSVValue(dst []byte, v change.Value, col columnKind) ([]byte, error) {
	switch v.Kind {
	case change.Null:
		return dst, nil
	case change.Bool:
		return strconv.AppendBool(dst, v.Num != 0), nil
	case change.Int:
		return strconv.AppendInt(dst, int64(v.Num), 10), nil
	case change.Uint:
		if col != bigintUnsigned {
			return strconv.AppendUint(dst, v.Num, 10), nil
		}
	case change.Float32:
		return appendJavaFloat(dst, float64(float32(v.Float())), 32), nil
	case change.Float64:
		return appendJavaFloat(dst, v.Float(), 64), nil
	}
	// A string: the value's JSON rendering without the JSON quoting.
	text, err := appendEventValue(nil, v, col, JSONFormat{})
	if err != nil {
		return dst, err
	}
	if len(text) > 0 && text[0] == '"' {
		s, err := strconv.Unquote(string(text))
		if err != nil {
			return dst, fmt.Errorf("csv: %w", err)
		}
		return appendCSVString(dst, s), nil
	}
	return appendCSVString(dst, string(text)), nil
}
