package repocheck

import (
	"bufio"
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pathRef matches what reads as a path in this repository: one or more directories and a
// file name with one of the extensions the repository's files have. The character before it is
// captured so that a URL, an absolute path or a longer word is not taken for one.
var pathRef = regexp.MustCompile(`(^|[^\w./~:@-])((?:\.\.?/)*(?:[\w-][\w.-]*/)+[\w.-]+\.(?:go|md|yaml|yml|sql|txt|golden|json|conf|png|mod|sum))([^\w/]|$)`)

// TestDocReferencesExist fails on a comment (in a .go file) or a markdown file that names a
// path like cdc/doc.go or docs/output.md that is not in the repository. A path is looked
// up from the repository's root and from the directory of the file that names it; a path
// whose first element has a dot in it (github.com/..., golang.org/x/...) is another module's.
func TestDocReferencesExist(t *testing.T) {
	root := repoRoot(t)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		var lines map[int]string
		switch filepath.Ext(path) {
		case ".go":
			lines = goComments(t, path)
		case ".md":
			lines = fileLines(t, path)
		default:
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		for n, line := range lines {
			for _, ref := range missingRefs(root, filepath.Dir(path), line) {
				t.Errorf("%s:%d: names %s, which is not in the repository; point at a file that is (docs/output.md, docs/pipeline.md...) or drop the reference", rel, n, ref)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// missingRefs returns the paths that line names and that exist neither under root nor under dir.
func missingRefs(root, dir, line string) []string {
	var missing []string
	for _, m := range pathRef.FindAllStringSubmatch(line, -1) {
		ref := m[2]
		if first, _, _ := strings.Cut(strings.TrimLeft(ref, "./"), "/"); strings.Contains(first, ".") {
			continue
		}
		if exists(filepath.Join(root, ref)) || exists(filepath.Join(dir, ref)) {
			continue
		}
		missing = append(missing, ref)
	}
	return missing
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// goComments returns the lines of the comments of a Go file, by line number.
func goComments(t *testing.T, path string) map[int]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	lines := map[int]string{}
	for _, g := range f.Comments {
		for _, c := range g.List {
			first := fset.Position(c.Slash).Line
			for i, l := range strings.Split(c.Text, "\n") {
				lines[first+i] = l
			}
		}
	}
	return lines
}

// fileLines returns the lines of a file, by line number.
func fileLines(t *testing.T, path string) map[int]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[int]string{}
	s := bufio.NewScanner(bytes.NewReader(b))
	s.Buffer(nil, 1<<20)
	for n := 1; s.Scan(); n++ {
		lines[n] = s.Text()
	}
	if err := s.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return lines
}

// repoRoot is the directory of the project's go.mod, above the test's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module github.com/ingestkit/ingest\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod of github.com/ingestkit/ingest above the test's directory")
		}
		dir = parent
	}
}
