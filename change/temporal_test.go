package change

import "testing"

func TestTemporalRoundTrip(t *testing.T) {
	tests := []struct {
		name                   string
		y, mo, d, h, mi, s, us int
	}{
		{"min", 1, 1, 1, 0, 0, 0, 0},
		{"leap", 2024, 2, 29, 13, 14, 15, 123456},
		{"max", 9999, 12, 31, 23, 59, 59, 999999},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := DateTimeValue(tc.y, tc.mo, tc.d, tc.h, tc.mi, tc.s, tc.us)
			y, mo, d := v.Date()
			h, mi, s, us := v.Clock()
			if got := [7]int{y, mo, d, h, mi, s, us}; got != [7]int{tc.y, tc.mo, tc.d, tc.h, tc.mi, tc.s, tc.us} {
				t.Fatalf("DateTime round trip: got %v", got)
			}
			dv := DateValue(tc.y, tc.mo, tc.d)
			if y, mo, d := dv.Date(); [3]int{y, mo, d} != [3]int{tc.y, tc.mo, tc.d} {
				t.Fatalf("Date round trip: got %d-%d-%d", y, mo, d)
			}
		})
	}
}

func TestZeroDatesAreNull(t *testing.T) {
	for _, v := range []Value{DateValue(0, 0, 0), DateValue(2024, 0, 15), DateTimeValue(2024, 1, 0, 1, 2, 3, 0), TimestampValue(0)} {
		if !v.IsNull() {
			t.Errorf("got kind %v, want null", v.Kind)
		}
	}
}
