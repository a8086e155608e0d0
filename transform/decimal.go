package transform

import (
	"math/big"
	"strings"
)

// dec is an exact decimal: unscaled / 10^scale. The arithmetic follows Java's BigDecimal,
// which Flink CDC uses for DECIMAL: + and - at the larger scale, * at the sum of the
// scales, / at the dividend's scale rounded towards zero (RoundingMode.DOWN).
type dec struct {
	u     big.Int
	scale int
}

var bigTen = big.NewInt(10)

func pow10(n int) *big.Int {
	return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
}

// parseDec parses decimal text (-?digits[.digits]); ok is false for anything else.
func parseDec(s string) (d dec, ok bool) {
	neg := strings.HasPrefix(s, "-")
	if neg || strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return d, false
	}
	for _, c := range intPart + frac {
		if c < '0' || c > '9' {
			return d, false
		}
	}
	if _, ok := d.u.SetString(intPart+frac, 10); !ok {
		return d, false
	}
	if neg {
		d.u.Neg(&d.u)
	}
	d.scale = len(frac)
	return d, true
}

func decInt(i int64) dec {
	var d dec
	d.u.SetInt64(i)
	return d
}

// rescale returns d at scale s (s >= d.scale: exact).
func (d *dec) rescaled(s int) *big.Int {
	if s == d.scale {
		return &d.u
	}
	return new(big.Int).Mul(&d.u, pow10(s-d.scale))
}

func decAdd(a, b *dec, sub bool) dec {
	s := max(a.scale, b.scale)
	var r dec
	r.scale = s
	if sub {
		r.u.Sub(a.rescaled(s), b.rescaled(s))
	} else {
		r.u.Add(a.rescaled(s), b.rescaled(s))
	}
	return r
}

func decMul(a, b *dec) dec {
	var r dec
	r.u.Mul(&a.u, &b.u)
	r.scale = a.scale + b.scale
	return r
}

// decDiv is BigDecimal.divide(b, RoundingMode.DOWN): the result has a's scale. ok is false
// when b is zero.
func decDiv(a, b *dec) (dec, bool) {
	if b.u.Sign() == 0 {
		return dec{}, false
	}
	var r dec
	r.scale = a.scale
	num := new(big.Int).Mul(&a.u, pow10(b.scale))
	r.u.Quo(num, &b.u) // truncates towards zero
	return r, true
}

func decCmp(a, b *dec) int {
	s := max(a.scale, b.scale)
	return a.rescaled(s).Cmp(b.rescaled(s))
}

// setScale returns d at scale s, rounding by mode: 'h' half up (away from zero at .5),
// 'c' ceiling, 'f' floor.
func (d *dec) setScale(s int, mode byte) dec {
	var r dec
	r.scale = s
	if s >= d.scale {
		r.u.Set(d.rescaled(s))
		return r
	}
	div := pow10(d.scale - s)
	q, m := new(big.Int).QuoRem(&d.u, div, new(big.Int))
	if m.Sign() != 0 {
		switch mode {
		case 'h':
			twice := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
			if twice.Cmp(div) >= 0 {
				q.Add(q, big.NewInt(int64(d.u.Sign())))
			}
		case 'c':
			if d.u.Sign() > 0 {
				q.Add(q, big.NewInt(1))
			}
		case 'f':
			if d.u.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			}
		}
	}
	r.u.Set(q)
	return r
}

// appendText appends d as plain decimal text at its scale ("-0.50"); a negative scale is
// written as an integer.
func (d *dec) appendText(dst []byte) []byte {
	if d.scale < 0 {
		v := new(big.Int).Mul(&d.u, pow10(-d.scale))
		return v.Append(dst, 10)
	}
	digits := new(big.Int).Abs(&d.u).String()
	if d.u.Sign() < 0 {
		dst = append(dst, '-')
	}
	if d.scale == 0 {
		return append(dst, digits...)
	}
	if len(digits) <= d.scale {
		digits = strings.Repeat("0", d.scale-len(digits)+1) + digits
	}
	k := len(digits) - d.scale
	dst = append(dst, digits[:k]...)
	dst = append(dst, '.')
	return append(dst, digits[k:]...)
}

func (d *dec) float() float64 {
	f, _ := new(big.Rat).SetFrac(&d.u, pow10(max(d.scale, 0))).Float64()
	if d.scale < 0 {
		f *= float64(pow10(-d.scale).Int64())
	}
	return f
}
