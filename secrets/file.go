package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"gopkg.in/yaml.v3"
)

// LoadSecretsFile reads a secrets file: a YAML map of secret names to
// values, as given with --secrets. It refuses a file that group or others
// may read or write, because the values are credentials. The returned Map's
// hints name the file.
func LoadSecretsFile(path string) (*Map, error) {
	if err := checkPrivate(path); err != nil {
		return nil, err
	}
	values, err := readMapFile(path)
	if err != nil {
		return nil, err
	}
	return &Map{Values: values, HintFunc: func(name string) string {
		return fmt.Sprintf("add %q to the secrets file %s", name, path)
	}}, nil
}

// LoadVarsFile reads a vars file: a YAML map of variable names to values,
// as given with --vars.
func LoadVarsFile(path string) (*Map, error) {
	values, err := readMapFile(path)
	if err != nil {
		return nil, err
	}
	return &Map{Values: values, HintFunc: func(name string) string {
		return fmt.Sprintf("add %q to the vars file %s", name, path)
	}}, nil
}

// ParseVarFlags parses --var flags of the form NAME=VALUE. A later flag for
// the same name wins.
func ParseVarFlags(flags []string) (*Map, error) {
	values := make(map[string]string, len(flags))
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("--var %q: want NAME=VALUE", f)
		}
		if !ValidName(name) {
			return nil, fmt.Errorf(`--var %q: invalid name; names are letters, digits, ".", "-" and "_"`, name)
		}
		values[name] = value
	}
	return &Map{Values: values, HintFunc: func(name string) string {
		return "pass --var " + name + "=VALUE"
	}}, nil
}

// checkPrivate refuses a file whose mode lets group or others read or
// write it. Windows has no such mode bits, so nothing is checked there.
func checkPrivate(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("secrets file: %w", err)
	}
	if runtime.GOOS == "windows" {
		return nil
	}
	if perm := fi.Mode().Perm(); perm&0o066 != 0 {
		return fmt.Errorf("secrets file %s can be read or written by group or others (mode %04o); run chmod 600 %s", path, perm, path)
	}
	return nil
}

// readMapFile reads a YAML map of names to scalar values. Errors carry the
// file and line but never a value.
func readMapFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return map[string]string{}, nil
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d:%d: want a map of names to values", path, root.Line, root.Column)
	}
	values := make(map[string]string, len(root.Content)/2)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if err := checkEntry(k, v, values); err != nil {
			return nil, fmt.Errorf("%s:%d:%d: %w", path, k.Line, k.Column, err)
		}
		values[k.Value] = v.Value
		if v.Tag == "!!null" {
			values[k.Value] = ""
		}
	}
	return values, nil
}

func checkEntry(k, v *yaml.Node, seen map[string]string) error {
	if k.Kind != yaml.ScalarNode || !ValidName(k.Value) {
		return errors.New(`invalid name; names are letters, digits, ".", "-" and "_"`)
	}
	if _, dup := seen[k.Value]; dup {
		return fmt.Errorf("%q is defined twice", k.Value)
	}
	if v.Kind != yaml.ScalarNode {
		return fmt.Errorf("the value of %q must be a string", k.Value)
	}
	return nil
}
