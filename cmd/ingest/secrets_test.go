package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestShortSecretWarning: a secret too short to be masked in output is named in a warning
// by every command that loads the pipeline; a long one is not.
func TestShortSecretWarning(t *testing.T) {
	pipeline := writeFile(t, "pipeline.yaml", strings.Replace(goodPipeline, "username: cdc", "username: ${secret_values.short}", 1), 0o644)
	for _, tc := range []struct {
		value string
		warn  bool
	}{{"ab", true}, {"abc", true}, {"abcd", false}} {
		env := func(k string) (string, bool) {
			if k == "INGEST_SECRET_SHORT" {
				return tc.value, true
			}
			return testEnv(k)
		}
		for _, cmd := range [][]string{{"validate", pipeline}, {"plan", pipeline, "--offline"}} {
			var out, errOut bytes.Buffer
			if code := run(context.Background(), cmd, &out, &errOut, env); code != exitOK {
				t.Fatalf("%v: exit %d\n%s", cmd, code, errOut.String())
			}
			warned := strings.Contains(errOut.String(), "secret ${secret_values.short} is shorter than 4 characters")
			if warned != tc.warn {
				t.Errorf("%v with a %d-character secret: warned %v, want %v\n%s", cmd, len(tc.value), warned, tc.warn, errOut.String())
			}
		}
	}
}
