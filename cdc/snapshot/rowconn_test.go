package snapshot

import "testing"

func TestInterpolate(t *testing.T) {
	tests := []struct {
		query string
		args  []any
		want  string
	}{
		{"`id` > ? AND `id` <= ?", []any{int64(-5), int64(10)}, "`id` > -5 AND `id` <= 10"},
		{"`a?b` > ?", []any{uint64(18446744073709551615)}, "`a?b` > 18446744073709551615"},
		{"`k` > ?", []any{[]byte{0, 'x', 0xff}}, "`k` > X'0078ff'"},
		{"`k` > ?", []any{[]byte{}}, "`k` > X''"},
		{"`n` > CAST(? AS DECIMAL(5,2))", []any{"-1.50"}, "`n` > CAST(_utf8mb4 X'2d312e3530' AS DECIMAL(5,2))"},
		{"`s` > ?", []any{"it's \\ é"}, "`s` > _utf8mb4 X'69742773205c20c3a9'"},
	}
	for _, tc := range tests {
		got, err := interpolate(tc.query, tc.args)
		if err != nil || got != tc.want {
			t.Errorf("interpolate(%q, %v) = %q, %v; want %q", tc.query, tc.args, got, err, tc.want)
		}
	}
	for _, bad := range []struct {
		query string
		args  []any
	}{
		{"`a` > ? AND `a` <= ?", []any{int64(1)}},
		{"`a` > ?", []any{int64(1), int64(2)}},
		{"`a` > ?", []any{1.5}},
	} {
		if got, err := interpolate(bad.query, bad.args); err == nil {
			t.Errorf("interpolate(%q, %v) = %q, want an error", bad.query, bad.args, got)
		}
	}
}
