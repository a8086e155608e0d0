package route

import (
	"errors"
	"testing"
)

func TestFieldError(t *testing.T) {
	base := errors.New("is empty")
	tests := []struct {
		err  *FieldError
		want string
	}{
		{&FieldError{Block: "route", Index: 2, Field: "sink-table", Err: base}, "route[2].sink-table: is empty"},
		{&FieldError{Block: "source", Index: -1, Field: "tables", Err: base}, "source.tables: is empty"},
	}
	for _, tc := range tests {
		if tc.err.Error() != tc.want || !errors.Is(tc.err, base) {
			t.Errorf("Error() = %q, want %q (and to wrap the cause)", tc.err.Error(), tc.want)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{`a\.b`: `"a\.b"`, `a"b`: `"a\"b"`, "a\nb": `"a\nb"`, "库": `"库"`} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}
