// Command matrixreport reads the test2json events of a `go test -json` run (the file that
// gotestsum's --jsonfile writes, as make test does) and prints, for each source server of the
// test matrix (internal/testenv/matrix.go), how many of its runs passed, failed and were
// skipped in each package, naming the failed ones. It exits 1 when a run failed or when a
// server of the matrix had no passing run at all, so that a server which silently dropped out
// of the matrix cannot go unnoticed.
//
// Usage: go run ./internal/matrixreport < test.json
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/ingestkit/ingest/internal/testenv"
)

// event is the part of a test2json event that the report reads.
type event struct {
	Action  string
	Package string
	Test    string
}

// tally is what one server's runs did in one package.
type tally struct {
	passed, skipped int
	failed          []string
}

func main() {
	servers := testenv.Servers()
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.Name
	}
	runs, err := read(os.Stdin, names)
	if err != nil {
		fmt.Fprintln(os.Stderr, "matrixreport:", err)
		os.Exit(2)
	}
	if !report(os.Stdout, names, runs) {
		os.Exit(1)
	}
}

// read tallies the final action of each matrix run: a test whose name has a server's name as
// one of its elements, counted at that element (subtests below it are part of the run).
func read(r io.Reader, servers []string) (map[string]map[string]*tally, error) {
	runs := map[string]map[string]*tally{} // server → package → tally
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			continue // a line of build output, not an event
		}
		if e.Test == "" || (e.Action != "pass" && e.Action != "fail" && e.Action != "skip") {
			continue
		}
		srv, ok := matrixRun(e.Test, servers)
		if !ok {
			continue
		}
		if runs[srv] == nil {
			runs[srv] = map[string]*tally{}
		}
		t := runs[srv][e.Package]
		if t == nil {
			t = &tally{}
			runs[srv][e.Package] = t
		}
		switch e.Action {
		case "pass":
			t.passed++
		case "skip":
			t.skipped++
		default:
			t.failed = append(t.failed, e.Test)
		}
	}
	return runs, sc.Err()
}

// matrixRun says whether test is a matrix run itself (its last element names a server), and
// which server's.
func matrixRun(test string, servers []string) (string, bool) {
	elems := strings.Split(test, "/")
	last := elems[len(elems)-1]
	for _, s := range servers {
		if last == s {
			return s, true
		}
	}
	return "", false
}

// report prints the table and says whether every server passed with no failure.
func report(w io.Writer, servers []string, runs map[string]map[string]*tally) bool {
	ok := true
	fmt.Fprintln(w, "== test matrix: runs per source server")
	for _, srv := range servers {
		pkgs := make([]string, 0, len(runs[srv]))
		for p := range runs[srv] {
			pkgs = append(pkgs, p)
		}
		sort.Strings(pkgs)
		passed := 0
		for _, p := range pkgs {
			t := runs[srv][p]
			passed += t.passed
			fmt.Fprintf(w, "%-14s %-48s %3d passed %3d failed %3d skipped\n", srv, p, t.passed, len(t.failed), t.skipped)
			for _, f := range t.failed {
				fmt.Fprintf(w, "%-14s   FAIL %s\n", srv, f)
				ok = false
			}
		}
		if passed == 0 {
			fmt.Fprintf(w, "%-14s no passing run: the server dropped out of the matrix (is it up? scripts/services status)\n", srv)
			ok = false
		}
	}
	return ok
}
