package upsert

import (
	"strconv"
)

// This file renders numbers as Flink CDC's Kafka sink writes them: Jackson writing the
// values of Flink's JSON and CSV formats, that is Java's Float.toString, Double.toString
// and BigDecimal.toString.

// appendJavaFloat appends f as Java's Float.toString (bitSize 32) or Double.toString (64)
// of JDK 19 and later print it: the shortest digits that round-trip (two when one would
// do, the closer two), in plain notation with at least one fraction digit for magnitudes
// in [1e-3, 1e7) ("0.001", "1234567.0") and in computerized scientific notation outside it
// ("1.0E-4", "1.6777216E7", "4.9E-324"); "0.0" and "-0.0" for the zeros. NaN and the
// infinities cannot come from MySQL and are written as null.
func appendJavaFloat(dst []byte, f float64, bitSize int) []byte {
	if f != f || f > maxFloat64 || f < -maxFloat64 {
		return append(dst, "null"...)
	}
	if f == 0 {
		if 1/f < 0 {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var sciBuf, digitBuf [32]byte
	sci := strconv.AppendFloat(sciBuf[:0], f, 'e', -1, bitSize)
	if len(sci) > 1 && sci[1] == 'e' { // one digit: Java prints the closest two
		sci = strconv.AppendFloat(sciBuf[:0], f, 'e', 1, bitSize)
	}
	mant, exp := splitExponent(sci)
	digits := append(digitBuf[:0], mant[0])
	if len(mant) > 2 {
		digits = append(digits, mant[2:]...)
	}
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if -3 <= exp && exp < 7 {
		return appendPlainDigits(dst, digits, exp, true)
	}
	dst = append(dst, digits[0], '.')
	if len(digits) > 1 {
		dst = append(dst, digits[1:]...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(exp), 10)
}

const maxFloat64 = 1.7976931348623157e308

// appendPlainDigits appends d1.d2d3… × 10^exp in plain notation; with minFraction a value
// without fraction digits gets ".0".
func appendPlainDigits(dst, digits []byte, exp int, minFraction bool) []byte {
	switch {
	case exp < 0:
		dst = append(dst, '0', '.')
		for range -exp - 1 {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	case exp+1 >= len(digits):
		dst = append(dst, digits...)
		for range exp + 1 - len(digits) {
			dst = append(dst, '0')
		}
		if minFraction {
			dst = append(dst, '.', '0')
		}
		return dst
	}
	dst = append(dst, digits[:exp+1]...)
	dst = append(dst, '.')
	return append(dst, digits[exp+1:]...)
}

// appendJavaDecimal appends the decimal text (-?digits(.digits)?, validated by the caller)
// as Flink's JSON format writes a DECIMAL: Jackson normalizes the BigDecimal (trailing
// zeros stripped, zero becomes 0) and writes its toString, which uses exponent notation
// when the stripped scale is negative or the exponent is below -6 ("4.50" → 4.5,
// "100.00" → 1E+2, "0.000000027" → 2.7E-8); plain is encode.decimal-as-plain-number
// (toPlainString: "100").
func appendJavaDecimal(dst, text []byte, plain bool) []byte {
	neg := len(text) > 0 && text[0] == '-'
	if neg {
		text = text[1:]
	}
	var buf [80]byte
	coeff := buf[:0]
	scale := 0
	seenPoint := false
	for _, c := range text {
		if c == '.' {
			seenPoint = true
			continue
		}
		coeff = append(coeff, c)
		if seenPoint {
			scale++
		}
	}
	for len(coeff) > 1 && coeff[0] == '0' { // leading zeros of 0.xx
		coeff = coeff[1:]
	}
	for len(coeff) > 1 && coeff[len(coeff)-1] == '0' {
		coeff = coeff[:len(coeff)-1]
		scale--
	}
	if len(coeff) == 1 && coeff[0] == '0' {
		return append(dst, '0')
	}
	if neg {
		dst = append(dst, '-')
	}
	adjusted := len(coeff) - 1 - scale // the exponent of the first digit
	if plain || scale >= 0 && adjusted >= -6 {
		if scale <= 0 {
			dst = append(dst, coeff...)
			for range -scale {
				dst = append(dst, '0')
			}
			return dst
		}
		return appendPlainDigits(dst, coeff, adjusted, false)
	}
	dst = append(dst, coeff[0])
	if len(coeff) > 1 {
		dst = append(dst, '.')
		dst = append(dst, coeff[1:]...)
	}
	dst = append(dst, 'E')
	if adjusted > 0 {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(adjusted), 10)
}
