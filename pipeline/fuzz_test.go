package pipeline

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary files to Parse. It must not panic; every error
// must have a position in the file; no secret value may appear in an
// error or in the plan unless the file itself contains it.
//
//	go test ./pipeline -run '^$' -fuzz FuzzLoad -fuzztime 60s
func FuzzLoad(f *testing.F) {
	for _, pattern := range []string{"../examples/*/pipeline.yaml", "testdata/bad/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte(minimal))
	f.Add([]byte(withSecrets))
	f.Add([]byte("source:\n  type: ${secret_values.mysql-password}\nsink:\n  type: ${secret_values.kafka-ak}\n"))
	f.Add([]byte(minimal + "route:\n  - source-table: ${secret_values.pattern-secret}\n    sink-table: a.${secret_values.kafka-ak}$1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		def, err := Parse("fuzz.yaml", data, testOptions())
		if err != nil {
			checkFuzzErrors(t, err)
			checkNoSecret(t, data, err.Error())
			return
		}
		var b strings.Builder
		if err := NewPlan(def).WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if err := NewPlan(def).WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		checkNoSecret(t, data, b.String())
	})
}

func checkFuzzErrors(t *testing.T, err error) {
	var errs Errors
	if !errors.As(err, &errs) || len(errs) == 0 {
		t.Fatalf("Parse returned %v (%T), want a non-empty Errors", err, err)
	}
	for _, e := range errs {
		if e.File != "fuzz.yaml" || e.Line < 1 || e.Col < 1 {
			t.Fatalf("error without a position: %#v", e)
		}
	}
}

// checkNoSecret fails when out shows a test secret's value that the input
// itself does not contain (in any case: names are upper-cased into
// environment variable names).
func checkNoSecret(t *testing.T, data []byte, out string) {
	in := bytes.ToLower(data)
	for _, v := range testSecrets {
		if strings.Contains(out, v) && !bytes.Contains(in, []byte(strings.ToLower(v))) {
			t.Fatalf("the value of a secret appears in the output:\n%s", out)
		}
	}
}
