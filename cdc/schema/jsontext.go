package schema

import (
	"math"
	"strconv"
)

// compactJSON removes the insignificant whitespace (space, tab, CR, LF outside strings) of
// a JSON document and changes nothing else: string contents, escapes, key order and number
// forms are kept byte for byte. It returns doc itself when there is nothing to remove, and
// otherwise a copy.
func compactJSON(doc []byte) []byte { return compact(doc, false) }

// compactJSONInPlace is compactJSON writing the result over doc.
func compactJSONInPlace(doc []byte) []byte { return compact(doc, true) }

func compact(doc []byte, inPlace bool) []byte {
	var out []byte // set at the first space to drop
	start := 0     // the run of doc not yet copied to out
	for i := 0; i < len(doc); i++ {
		switch c := doc[i]; {
		case c == '"':
			i = stringEnd(doc, i+1)
		case isJSONSpace(c):
			if out == nil && inPlace {
				out = doc[:0] // out never overtakes i: append moves runs backwards
			} else if out == nil {
				out = make([]byte, 0, len(doc))
			}
			out = append(out, doc[start:i]...)
			start = i + 1
		}
	}
	if out == nil {
		return doc
	}
	out = append(out, doc[start:]...)
	return out[:len(out):len(out)]
}

// stringEnd returns the index of the quote closing the JSON string whose contents start at
// i (len(doc) when it is not closed).
func stringEnd(doc []byte, i int) int {
	for ; i < len(doc); i++ {
		switch doc[i] {
		case '\\':
			i++ // the escaped character
		case '"':
			return i
		}
	}
	return len(doc)
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// appendESNumber appends f as ECMAScript's Number::toString writes it: the shortest text
// that round-trips, exponent form only below 1e-6 or from 1e21 on ("1e-7", "1e+21").
// NaN and infinities, which JSON cannot hold, are written as null.
func appendESNumber(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == 0 {
		return append(b, '0') // also -0, as ECMAScript prints it
	}
	abs := math.Abs(f)
	if abs < 1e-6 || abs >= 1e21 {
		n := len(b)
		b = strconv.AppendFloat(b, f, 'e', -1, 64)
		// Go writes e-07 / e+21; ECMAScript drops the exponent's leading zero.
		if m := len(b); m-n >= 4 && b[m-4] == 'e' && b[m-2] == '0' {
			b[m-2] = b[m-1]
			b = b[:m-1]
		}
		return b
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}
