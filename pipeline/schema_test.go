package pipeline

import (
	"bufio"
	"encoding/json"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestEveryOptionHonoured walks the option schema (schema.go) and fails for an option that
// no code reads and that docs/pipeline.md does not describe: every option's field must be
// read by the code that applies it (outside this package, or by a method of the model), or
// the option must say in the schema why ingest already behaves as it asks (asIs); and the
// documentation must name every option either way.
func TestEveryOptionHonoured(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the module")
	}
	doc, err := os.ReadFile("../docs/pipeline.md")
	if err != nil {
		t.Fatal(err)
	}
	read := fieldsRead(t)
	for _, o := range schemaOptions() {
		if !strings.Contains(string(doc), "`"+o.key+"`") {
			t.Errorf("%s: docs/pipeline.md does not describe it (no `%s`)", o.path, o.key)
		}
		switch {
		case o.asIs != "":
		case !read[o.field]:
			t.Errorf("%s: no code reads %s; apply the option where it matters, or say in schema.go why ingest already does what it asks (asIs)", o.path, o.field)
		}
	}
}

// schemaOption is one option of the schema with the model field it sets.
type schemaOption struct {
	path  string // "source.port"
	key   string // "port"
	field string // "Source.Port": the type that declares the field, and the field
	asIs  string
}

// schemaOptions returns every option of every block with its field.
func schemaOptions() []schemaOption {
	var (
		src Source
		snk Sink
		rt  Route
		tf  Transform
		st  Settings
	)
	blocks := []struct {
		path  string
		model any // pointer to the struct the options bind
		opts  []option
	}{
		{"source", &src, sourceOptions(&src)},
		{"sink", &snk, sinkOptions(&snk)},
		{"route[]", &rt, routeOptions(&rt)},
		{"transform[]", &tf, transformOptions(&tf)},
		{"pipeline", &st, settingsOptions(&st)},
	}
	var all []schemaOption
	for _, b := range blocks {
		fields := fieldAddrs(reflect.ValueOf(b.model).Elem())
		for _, o := range b.opts {
			all = append(all, schemaOption{path: b.path + "." + o.key, key: o.key, field: fields[boundPointer(o.val)], asIs: o.asIs})
		}
	}
	return all
}

// fieldAddrs maps the address of every field of the struct v, nested structs included, to
// "Type.Field".
func fieldAddrs(v reflect.Value) map[uintptr]string {
	m := make(map[uintptr]string)
	for i := range v.NumField() {
		f := v.Field(i)
		m[f.Addr().Pointer()] = v.Type().Name() + "." + v.Type().Field(i).Name
		if f.Kind() == reflect.Struct && v.Type().Field(i).Type.PkgPath() == v.Type().PkgPath() {
			for k, name := range fieldAddrs(f) {
				if _, ok := m[k]; !ok || k != f.Addr().Pointer() {
					m[k] = name
				}
			}
		}
	}
	return m
}

// boundPointer returns the field pointer a value binds: its first pointer field.
func boundPointer(val value) uintptr {
	v := reflect.ValueOf(val)
	for i := range v.NumField() {
		if v.Field(i).Kind() == reflect.Pointer {
			return v.Field(i).Pointer()
		}
	}
	panic("value binds no field: " + v.Type().String())
}

// goPackage is what go list says of a package.
type goPackage struct {
	ImportPath, Dir, Export string
	GoFiles                 []string
	Module                  *struct{ Path string }
}

// fieldsRead type-checks the module's packages (their non-test files) and returns the
// fields of this package's types that they select, as "Type.Field": everywhere outside
// this package, and here in the methods of the model types only (the loader sets fields,
// it does not apply them).
func fieldsRead(t *testing.T) map[string]bool {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,Module", "./...")
	cmd.Dir = ".."
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []goPackage
	exports := make(map[string]string)
	dec := json.NewDecoder(bufio.NewReader(strings.NewReader(string(out))))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Path == "github.com/ingestkit/ingest" {
			pkgs = append(pkgs, p)
		}
	}
	const self = "github.com/ingestkit/ingest/pipeline"
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })
	read := make(map[string]bool)
	for _, p := range pkgs {
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Selections: make(map[*ast.SelectorExpr]*types.Selection)}
		if _, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("type-check %s: %v", p.ImportPath, err)
		}
		inModelMethod := modelMethodRanges(files)
		for sel, s := range info.Selections {
			if s.Kind() != types.FieldVal || p.ImportPath == self && !inModelMethod(sel.Pos()) {
				continue
			}
			recv := s.Recv()
			if ptr, ok := recv.(*types.Pointer); ok {
				recv = ptr.Elem()
			}
			if named, ok := recv.(*types.Named); ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == self {
				read[named.Obj().Name()+"."+sel.Sel.Name] = true
			}
		}
	}
	return read
}

// modelMethods are the types of model.go whose methods count as readers of their fields.
var modelMethods = map[string]bool{"Source": true, "Sink": true, "Aliyun": true, "KafkaOptions": true, "Settings": true, "Route": true, "Transform": true}

// modelMethodRanges returns whether a position is inside a method of a model type.
func modelMethodRanges(files []*ast.File) func(token.Pos) bool {
	var ranges [][2]token.Pos
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || len(fd.Recv.List) == 0 {
				continue
			}
			typ := fd.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok && modelMethods[id.Name] {
				ranges = append(ranges, [2]token.Pos{fd.Pos(), fd.End()})
			}
		}
	}
	return func(p token.Pos) bool {
		for _, r := range ranges {
			if r[0] <= p && p < r[1] {
				return true
			}
		}
		return false
	}
}
