package upsert

import (
	"encoding/base64"
	"encoding/binary"
	"math/bits"
	"strconv"
	"time"
	"unicode/utf8"
)

// escape says how each byte below 0x80 is written inside a JSON string: 0 means as itself,
// 'u' means \u00XX, any other value is the letter after a backslash.
var escape = func() [utf8.RuneSelf]byte {
	var t [utf8.RuneSelf]byte
	for c := range 0x20 {
		t[c] = 'u'
	}
	t['"'], t['\\'] = '"', '\\'
	t['\b'], t['\t'], t['\n'], t['\f'], t['\r'] = 'b', 't', 'n', 'f', 'r'
	return t
}()

const upperHex = "0123456789ABCDEF"

// appendString appends s as a JSON string, escaped minimally as Jackson does (OUTPUT.md):
// `"` and `\`, the five short escapes \b \t \n \f \r, other control characters as \u00XX in
// upper-case hex, and everything else (non-ASCII, <, >, &, U+2028, U+2029, DEL) as raw UTF-8.
//
// The source hands over valid UTF-8 (it transcodes from the column's character set). Should
// a byte sequence be invalid anyway, each offending byte is replaced with U+FFFD, as
// encoding/json and Java's decoders do, so that the output is always valid UTF-8 and JSON.
func appendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0 // the run of s not yet appended
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			m := special8(binary.LittleEndian.Uint64(s[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3 // to the first byte that needs attention
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if escape[c] != 0 {
				dst = appendEscape(append(dst, s[start:i]...), c)
				start = i + 1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			start = i + 1
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plain8 reports whether none of the 8 bytes packed in w needs attention (special8).
func plain8(w uint64) bool { return special8(w) == 0 }

// special8 marks the bytes packed in w (little-endian) that need attention: non-ASCII,
// control characters, '"' and '\\'. It tests the bytes together: the top bit of a byte of
// (x - 0x01…) &^ x is set where x's byte is zero, and of (w - 0x20…) &^ w where w's byte
// is below 0x20 (bytes of 0x80 and above are caught by w's own top bits). A borrow can
// mark a byte above a marked one too, never below: the lowest mark is exact.
func special8(w uint64) uint64 {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	zero := func(x uint64) uint64 { return (x - ones) &^ x }
	control := (w - 0x20*ones) &^ w
	quote := zero(w ^ '"'*ones)
	backslash := zero(w ^ '\\'*ones)
	return (w | control | quote | backslash) & highs
}

func appendEscape(dst []byte, c byte) []byte {
	if e := escape[c]; e != 'u' {
		return append(dst, '\\', e)
	}
	return append(dst, '\\', 'u', '0', '0', upperHex[c>>4], upperHex[c&0xf])
}

// appendBase64 appends b as a JSON string of its standard, padded base64 encoding.
func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendPad appends the decimal form of v, zero-padded to at least width digits.
func appendPad(dst []byte, v uint64, width int) []byte {
	switch {
	case width == 2 && v < 100:
		return append(dst, byte('0'+v/10), byte('0'+v%10))
	case width == 4 && v < 10000:
		return append(dst, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
	}
	var buf [20]byte
	d := strconv.AppendUint(buf[:0], v, 10)
	for range width - len(d) {
		dst = append(dst, '0')
	}
	return append(dst, d...)
}

// appendYear appends a year with at least four digits (and a sign when negative, which
// only out-of-range timestamps can give).
func appendYear(dst []byte, year int) []byte {
	if year < 0 {
		dst = append(dst, '-')
		return appendPad(dst, uint64(-int64(year)), 4)
	}
	return appendPad(dst, uint64(year), 4)
}

// appendDate appends yyyy-MM-dd.
func appendDate(dst []byte, year, month, day int) []byte {
	dst = appendYear(dst, year)
	dst = append(dst, '-')
	dst = appendPad(dst, uint64(month), 2)
	dst = append(dst, '-')
	return appendPad(dst, uint64(day), 2)
}

// appendClock appends HH:mm:ss (hours with at least two digits) and, when micro is not
// zero, a point and the microseconds with their trailing zeros trimmed.
func appendClock(dst []byte, hour uint64, minute, second, micro int) []byte {
	dst = appendPad(dst, hour, 2)
	dst = append(dst, ':')
	dst = appendPad(dst, uint64(minute), 2)
	dst = append(dst, ':')
	dst = appendPad(dst, uint64(second), 2)
	return appendFraction(dst, micro)
}

// appendFraction appends ".ffffff" with trailing zeros trimmed, or nothing for zero.
func appendFraction(dst []byte, micro int) []byte {
	if micro == 0 {
		return dst
	}
	var buf [6]byte
	for i := 5; i >= 0; i-- {
		buf[i] = byte('0' + micro%10)
		micro /= 10
	}
	n := 6
	for buf[n-1] == '0' {
		n--
	}
	dst = append(dst, '.')
	return append(dst, buf[:n]...)
}

// appendTimeOfDay appends a TIME value: [-]HH:mm:ss[.f], hours unbounded.
func appendTimeOfDay(dst []byte, micros int64) []byte {
	u := uint64(micros)
	if micros < 0 {
		dst = append(dst, '-')
		u = -u // two's complement magnitude; right for math.MinInt64 too
	}
	const perSecond = uint64(time.Second / time.Microsecond)
	secs := u / perSecond
	return appendClock(dst, secs/3600, int(secs/60%60), int(secs%60), int(u%perSecond))
}
