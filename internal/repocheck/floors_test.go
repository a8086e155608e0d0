package repocheck

import (
	"fmt"
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ingestkit/ingest"

// cdcFloors are the floors of the source, drawn in cdc/doc.go: a package may import only
// packages of lower floors. Packages on one floor do not import each other.
var cdcFloors = map[string]int{
	"cdc/binlogpos": 1, // positions and GTID sets
	"cdc/schema":    1, // columns, tables and the decoding of their values
	"cdc/history":   2, // DDL and the schema history
	"cdc/binlog":    3, // the binlog reader
	"cdc":           4, // the source: connection, checks, reconnects
	"cdc/snapshot":  5, // the snapshot, which composes the source's parts
}

// belowCDC are the packages of this module outside cdc that cdc's packages may import: the
// neutral change model and internal helpers. Everything else of the module stands above cdc.
func belowCDC(pkg string) bool {
	return pkg == "change" || strings.HasPrefix(pkg, "internal/")
}

// floorViolations returns the imports that break the floors: imports maps each package of
// cdc (relative to the module) to the module packages it imports, tests included.
func floorViolations(floors map[string]int, imports map[string][]string) []string {
	var bad []string
	for pkg, imps := range imports {
		floor, ok := floors[pkg]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s has no floor: add it to cdcFloors (internal/repocheck/floors_test.go) and to cdc/doc.go", pkg))
			continue
		}
		for _, imp := range imps {
			if imp == pkg {
				continue
			}
			f, isCDC := floors[imp]
			switch {
			case !isCDC && !belowCDC(imp):
				bad = append(bad, fmt.Sprintf("%s imports %s, which stands above cdc", pkg, imp))
			case isCDC && f >= floor:
				bad = append(bad, fmt.Sprintf("%s (floor %d) imports %s (floor %d): a package imports only lower floors", pkg, floor, imp, f))
			}
		}
	}
	slices.Sort(bad)
	return bad
}

func TestFloorViolations(t *testing.T) {
	floors := map[string]int{"cdc/low": 1, "cdc/low2": 1, "cdc/high": 2}
	tests := []struct {
		name    string
		imports map[string][]string
		want    int
	}{
		{"downward", map[string][]string{"cdc/high": {"cdc/low", "change", "internal/fault"}, "cdc/low": nil}, 0},
		{"upward", map[string][]string{"cdc/low": {"cdc/high"}}, 1},
		{"same floor", map[string][]string{"cdc/low": {"cdc/low2"}}, 1},
		{"above cdc", map[string][]string{"cdc/high": {"runner"}}, 1},
		{"no floor", map[string][]string{"cdc/new": nil}, 1},
		{"a test of its own package", map[string][]string{"cdc/low": {"cdc/low"}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := floorViolations(floors, tc.imports); len(got) != tc.want {
				t.Errorf("got %d violations %q, want %d", len(got), got, tc.want)
			}
		})
	}
}

// TestCDCFloors fails when a package of cdc imports one on its own floor or above (tests and
// integration tests included), or when a new package of cdc has no floor.
func TestCDCFloors(t *testing.T) {
	root := repoRoot(t)
	ctx := build.Default
	ctx.BuildTags = []string{"integration"}
	imports := map[string][]string{}
	err := filepath.WalkDir(filepath.Join(root, "cdc"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		p, err := ctx.ImportDir(path, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		rel, _ := filepath.Rel(root, path)
		var own []string
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			if after, ok := strings.CutPrefix(imp, module+"/"); ok {
				own = append(own, after)
			}
		}
		imports[filepath.ToSlash(rel)] = own
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < len(cdcFloors) {
		t.Fatalf("found %d packages under cdc, want at least the %d of cdcFloors", len(imports), len(cdcFloors))
	}
	for _, v := range floorViolations(cdcFloors, imports) {
		t.Error(v)
	}
}
