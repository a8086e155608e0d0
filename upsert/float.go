package upsert

import (
	"math"
	"strconv"
)

// appendFloat appends f in the form ECMAScript's Number::toString gives it, with the
// shortest digits that round-trip a float of bitSize bits (32 or 64): plain decimal notation
// for magnitudes in [1e-6, 1e21), exponent notation ("1e-7", "1.5e+21") outside it, "0" for
// both zeros. NaN and the infinities have no JSON form; they cannot come from MySQL, and are
// written as null rather than producing invalid JSON.
func appendFloat(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return append(dst, "null"...)
	case f == 0:
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// strconv gives the shortest round-trip digits as d.ddddde±XX; rearrange them.
	var sciBuf, digitBuf [32]byte
	sci := strconv.AppendFloat(sciBuf[:0], f, 'e', -1, bitSize)
	mant, exp := splitExponent(sci)
	digits := append(digitBuf[:0], mant[0])
	if len(mant) > 2 {
		digits = append(digits, mant[2:]...) // skip the '.'
	}
	return appendECMA(dst, digits, exp+1)
}

// splitExponent splits strconv's 'e' form "d.ddde±XX" into its mantissa and exponent.
func splitExponent(sci []byte) (mant []byte, exp int) {
	for i, c := range sci {
		if c != 'e' {
			continue
		}
		neg := sci[i+1] == '-'
		for _, d := range sci[i+2:] {
			exp = exp*10 + int(d-'0')
		}
		if neg {
			exp = -exp
		}
		return sci[:i], exp
	}
	return sci, 0
}

// appendECMA writes the value 0.d1d2…dk × 10^n following ECMA-262 Number::toString, steps
// 6 to 10 (k = len(digits), n as in the specification).
func appendECMA(dst, digits []byte, n int) []byte {
	k := len(digits)
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}
