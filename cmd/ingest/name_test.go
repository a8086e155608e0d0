package main

import (
	"strings"
	"testing"
)

// TestValidateRefusesPathNames: a pipeline.name that would put the state outside its own
// directory under .ingest/ is refused by validate (exit 2) with the position and the fix.
func TestValidateRefusesPathNames(t *testing.T) {
	for _, name := range []string{"../x", "..", "a/b"} {
		t.Run(name, func(t *testing.T) {
			p := writeFile(t, "pipeline.yaml", goodPipeline+"pipeline:\n  name: "+name+"\n", 0o644)
			code, _, stderr := runCLI(t, "validate", p)
			if code != exitInvalid || !strings.Contains(stderr, "pipeline.name") || !strings.Contains(stderr, "printable characters other than") {
				t.Fatalf("exit %d, want %d with the pipeline.name error:\n%s", code, exitInvalid, stderr)
			}
		})
	}
}
