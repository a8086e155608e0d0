package main

import (
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	servers := []string{"mariadb-10.11", "mariadb-11.4"}
	ev := func(action, pkg, test string) string {
		return `{"Action":"` + action + `","Package":"` + pkg + `","Test":"` + test + `"}` + "\n"
	}
	tests := []struct {
		name   string
		events string
		ok     bool
		want   []string // lines the report must hold
	}{
		{
			name: "both pass",
			events: ev("pass", "p/cdc", "TestA/mariadb-10.11") + ev("pass", "p/cdc", "TestA/mariadb-11.4") +
				ev("pass", "p/cdc", "TestA/mariadb-11.4/sub") + ev("pass", "p/cdc", "TestA") + "build output\n",
			ok:   true,
			want: []string{"mariadb-10.11  p/cdc", "1 passed   0 failed", "mariadb-11.4   p/cdc"},
		},
		{
			name:   "a failed run is named",
			events: ev("pass", "p/cdc", "TestA/mariadb-10.11") + ev("fail", "p/runner", "TestB/x/mariadb-11.4") + ev("pass", "p/cdc", "TestA/mariadb-11.4"),
			want:   []string{"FAIL TestB/x/mariadb-11.4"},
		},
		{
			name:   "a server with no run",
			events: ev("pass", "p/cdc", "TestA/mariadb-10.11") + ev("skip", "p/cdc", "TestA/mariadb-11.4"),
			want:   []string{"mariadb-11.4   no passing run", "1 skipped"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runs, err := read(strings.NewReader(tc.events), servers)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			if ok := report(&out, servers, runs); ok != tc.ok {
				t.Errorf("report ok = %v, want %v\n%s", ok, tc.ok, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
