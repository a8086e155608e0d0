package upsert

import (
	"math"
	"testing"
)

// The wants are what ECMAScript's Number.prototype.toString prints (node -p), for float32
// inputs applied to Math.fround's shortest float32 digits.
func TestAppendFloat(t *testing.T) {
	tests := []struct {
		name string
		f    float64
		bits int
		want string
	}{
		{"zero", 0, 64, "0"},
		{"negative zero", math.Copysign(0, -1), 64, "0"},
		{"one", 1, 64, "1"},
		{"minus one", -1, 64, "-1"},
		{"tenth", 0.1, 64, "0.1"},
		{"e", 2.718281828459045, 64, "2.718281828459045"},
		{"hundred", 100, 64, "100"},
		{"fraction", 123.456, 64, "123.456"},
		{"1e-6 plain", 1e-6, 64, "0.000001"},
		{"1e-7 exponent", 1e-7, 64, "1e-7"},
		{"1.5e-7", 1.5e-7, 64, "1.5e-7"},
		{"small plain", 0.000001234, 64, "0.000001234"},
		{"small exponent", 1.234e-7, 64, "1.234e-7"},
		{"negative small", -0.0000015, 64, "-0.0000015"},
		{"1e20 plain", 1e20, 64, "100000000000000000000"},
		{"big plain", 1.2345678901234568e20, 64, "123456789012345680000"},
		{"1e21 exponent", 1e21, 64, "1e+21"},
		{"1.5e21", 1.5e21, 64, "1.5e+21"},
		{"2^53+1", 9007199254740993, 64, "9007199254740992"},
		{"max", math.MaxFloat64, 64, "1.7976931348623157e+308"},
		{"min subnormal", 5e-324, 64, "5e-324"},
		{"min normal", 2.2250738585072014e-308, 64, "2.2250738585072014e-308"},
		{"nan", math.NaN(), 64, "null"},
		{"inf", math.Inf(1), 64, "null"},
		{"-inf", math.Inf(-1), 64, "null"},

		{"f32 pi", float64(float32(3.14159)), 32, "3.14159"},
		{"f32 2^24", float64(float32(16777216)), 32, "16777216"},
		{"f32 2^24+1", float64(float32(16777217)), 32, "16777216"},
		{"f32 tenth", float64(float32(0.1)), 32, "0.1"},
		{"f32 1.1", float64(float32(1.1)), 32, "1.1"},
		{"f32 1e-7", float64(float32(1e-7)), 32, "1e-7"},
		{"f32 1e21", float64(float32(1e21)), 32, "1e+21"},
		{"f32 max", float64(float32(math.MaxFloat32)), 32, "3.4028235e+38"},
		{"f32 min subnormal", float64(math.SmallestNonzeroFloat32), 32, "1e-45"},
		{"f32 negative", float64(float32(-2.5)), 32, "-2.5"},
		{"f32 1e20", float64(float32(1e20)), 32, "100000000000000000000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(appendFloat(nil, tc.f, tc.bits)); got != tc.want {
				t.Errorf("appendFloat(%v, %d) = %s, want %s", tc.f, tc.bits, got, tc.want)
			}
		})
	}
}
