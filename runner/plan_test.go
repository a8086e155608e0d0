package runner

import (
	"testing"

	"github.com/ingestkit/ingest/cdc"
)

// TestAddPreflight: preflight warnings are listed under Warnings, errors under Problems, and a
// failed connection marks the source unreachable (its other failures are not listed again).
func TestAddPreflight(t *testing.T) {
	cases := []struct {
		name                  string
		problem               cdc.Problem
		problems, warnings    int
		unreachable, hasError bool
	}{
		{"warning", cdc.Problem{Severity: cdc.Warning, Check: "binlog_row_metadata", Message: "m"}, 0, 1, false, false},
		{"error", cdc.Problem{Severity: cdc.Error, Check: "binlog_format", Message: "m"}, 1, 0, false, true},
		{"connect", cdc.Problem{Severity: cdc.Error, Check: "connect", Message: "m"}, 1, 0, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := &Report{}
			rep.addPreflight(c.problem)
			if len(rep.Problems) != c.problems || len(rep.Warnings) != c.warnings ||
				rep.unreachable != c.unreachable || rep.HasErrors() != c.hasError {
				t.Errorf("problems %q, warnings %q, unreachable %v, HasErrors %v", rep.Problems, rep.Warnings,
					rep.unreachable, rep.HasErrors())
			}
		})
	}
}
