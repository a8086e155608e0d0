package cdc

import (
	"errors"
	"strings"
	"testing"
)

// TestRefuse: Error problems make a terminal PreflightError naming each fix, warnings alone
// pass, and a server that could not be reached is retryable.
func TestRefuse(t *testing.T) {
	warn := Problem{Severity: Warning, Check: "binlog_row_metadata", Message: "set it"}
	format := Problem{Severity: Error, Check: "binlog_format", Message: "SET GLOBAL binlog_format = 'ROW'"}
	pos := Problem{Severity: Error, Check: "position", Message: "the stored position x is beyond"}
	if err := Refuse("db:3306", []Problem{warn}); err != nil {
		t.Fatalf("a warning refused: %v", err)
	}
	err := Refuse("db:3306", []Problem{warn, format, pos})
	var pe *PreflightError
	if !errors.As(err, &pe) || IsRetryable(err) || len(pe.Problems) != 2 || !pe.Has("position") || pe.Has("binlog_row_metadata") {
		t.Fatalf("Refuse = %#v", err)
	}
	for _, want := range []string{"db:3306", format.Message, pos.Message} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	err = Refuse("db:3306", []Problem{{Severity: Error, Check: "connect", Message: "connection refused"}})
	if !IsRetryable(err) {
		t.Fatalf("a connect problem: %v, want retryable", err)
	}
}
