package secrets

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// failing is a provider whose backend is down.
type failing struct{}

func (failing) Lookup(context.Context, string) (string, error) {
	return "", errors.New("kms: connection refused")
}

// counting counts lookups, to test the cache.
type counting struct {
	Map
	n int
}

func (c *counting) Lookup(ctx context.Context, name string) (string, error) {
	c.n++
	return c.Map.Lookup(ctx, name)
}

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func testResolver() *Resolver {
	file := &Map{Values: map[string]string{"db-pw": "pw-from-file", "both": "from-file"},
		HintFunc: func(n string) string { return `add "` + n + `" to the secrets file s.yaml` }}
	flags, _ := ParseVarFlags([]string{"host=from-flag", "port=1"})
	vars := &Map{Values: map[string]string{"host": "from-vars-file", "zone": "from-vars-file"}}
	e := env(map[string]string{
		"INGEST_SECRET_BOTH": "from-env", "INGEST_SECRET_KAFKA_AK": "ak-from-env",
		"INGEST_VAR_HOST": "from-env", "INGEST_VAR_ZONE": "from-env", "INGEST_VAR_REGION": "cn-hangzhou",
	})
	return NewResolver(
		[]Provider{file, NewEnv(SecretEnvPrefix, e)},
		[]Provider{flags, vars, NewEnv(VarEnvPrefix, e)},
	)
}

func TestExpand(t *testing.T) {
	cases := []struct {
		in, want string
		secret   bool
	}{
		{in: "plain", want: "plain"},
		{in: "", want: ""},
		{in: "$ and $$ and $x", want: "$ and $$ and $x"},
		{in: "$${literal}", want: "${literal}"},
		{in: "$$${host}", want: "$${host}"}, // "$" then "$${"
		{in: "${host}:${port}", want: "from-flag:1"},
		{in: "${zone}", want: "from-vars-file"},
		{in: "${region}", want: "cn-hangzhou"},
		{in: "pw=${secret_values.db-pw};", want: "pw=pw-from-file;", secret: true},
		{in: "${secret_values.both}", want: "from-file", secret: true},
		{in: "${secret_values.kafka-ak}", want: "ak-from-env", secret: true},
		{in: "${secret_values.kafka-ak}${host}", want: "ak-from-envfrom-flag", secret: true},
		{in: "${secret_values}", want: "", secret: false}, // a variable named secret_values
	}
	r := testResolver()
	for _, c := range cases {
		exp, err := r.Expand(context.Background(), c.in)
		if c.in == "${secret_values}" {
			if err == nil {
				t.Errorf("Expand(%q) succeeded", c.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("Expand(%q): %v", c.in, err)
			continue
		}
		if exp.Value.Reveal() != c.want || exp.Secret != c.secret {
			t.Errorf("Expand(%q) = %q secret=%v, want %q secret=%v", c.in, exp.Value.Reveal(), exp.Secret, c.want, c.secret)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"${secret_values.nope}", []string{
			`unresolved secret ${secret_values.nope}: add "nope" to the secrets file s.yaml or set INGEST_SECRET_NOPE`}},
		{"a${nope.var}b${x y}c${unclosed", []string{
			`unresolved variable ${nope.var}: pass --var nope.var=VALUE or set INGEST_VAR_NOPE_VAR`,
			`placeholder "${x y}" has an invalid name; names are letters, digits, ".", "-" and "_" (write $${ for a literal ${)`,
			`placeholder "${unclosed" has no closing "}" (write $${ for a literal ${)`}},
		{"${secret_values.}", []string{`placeholder "${secret_values.}" has an empty name`}},
	}
	r := testResolver()
	for _, c := range cases {
		exp, err := r.Expand(context.Background(), c.in)
		var pes PlaceholderErrors
		if !errors.As(err, &pes) {
			t.Fatalf("Expand(%q) error %v, want PlaceholderErrors", c.in, err)
		}
		if got := strings.Split(err.Error(), "\n"); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("Expand(%q) errors:\n%s\nwant:\n%s", c.in, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
		if exp.Value != "" {
			t.Errorf("Expand(%q) returned a value with an error", c.in)
		}
	}
	_, err := r.Expand(context.Background(), "x${a}${b}")
	var pes PlaceholderErrors
	if errors.As(err, &pes); len(pes) != 2 || pes[0].Ref.Offset != 1 || pes[1].Ref.Offset != 5 {
		t.Errorf("offsets of %v", pes)
	}
	if !errors.Is(err, ErrNotFound) {
		t.Error("not-found errors do not wrap ErrNotFound")
	}
}

// TestBackendFailureStops: a failing provider stops the lookup rather than
// falling back to a lower-priority value, and its error is reported.
func TestBackendFailureStops(t *testing.T) {
	r := NewResolver([]Provider{failing{}, &Map{Values: map[string]string{"pw": "fallback"}}}, nil)
	_, err := r.Expand(context.Background(), "${secret_values.pw}")
	if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "kms: connection refused") {
		t.Fatalf("err = %v, want the backend failure", err)
	}
	if strings.Contains(err.Error(), "fallback") {
		t.Error("the fallback value leaked into the error")
	}
}

func TestNoProviders(t *testing.T) {
	_, err := NewResolver(nil, nil).Expand(context.Background(), "${a}")
	if err == nil || err.Error() != "unresolved variable ${a}: no variable providers are configured" {
		t.Errorf("err = %v", err)
	}
}

func TestResolverCaches(t *testing.T) {
	c := &counting{Map: Map{Values: map[string]string{"pw": "x"}}}
	r := NewResolver([]Provider{c}, nil)
	for range 3 {
		if _, err := r.Expand(context.Background(), "${secret_values.pw}"); err != nil {
			t.Fatal(err)
		}
	}
	if s, err := r.Secret(context.Background(), "pw"); err != nil || s.Reveal() != "x" {
		t.Errorf("Secret = %v, %v", s, err)
	}
	if c.n != 1 {
		t.Errorf("%d lookups, want 1", c.n)
	}
}

func TestEnvName(t *testing.T) {
	cases := map[string]string{
		"mysql-password":  "MYSQL_PASSWORD",
		"kafka.bootstrap": "KAFKA_BOOTSTRAP",
		"a_b.c-d9":        "A_B_C_D9",
	}
	for in, want := range cases {
		if got := EnvName(in); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseVarFlags(t *testing.T) {
	m, err := ParseVarFlags([]string{"a=1", "b=x=y", "a=2", "c="})
	if err != nil {
		t.Fatal(err)
	}
	if m.Values["a"] != "2" || m.Values["b"] != "x=y" || m.Values["c"] != "" {
		t.Errorf("values = %v", m.Values)
	}
	for _, bad := range []string{"novalue", "bad name=1", "=1"} {
		if _, err := ParseVarFlags([]string{bad}); err == nil {
			t.Errorf("ParseVarFlags(%q) succeeded", bad)
		}
	}
}

func TestSecretsFilePermissions(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "secrets.yaml")
	if err := os.WriteFile(path, []byte("db-pw: "+value+"\nempty: ~\nnum: 42\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := LoadSecretsFile(path)
	if err != nil {
		t.Fatalf("0600: %v", err)
	}
	if m.Values["db-pw"] != value || m.Values["empty"] != "" || m.Values["num"] != "42" {
		t.Errorf("values = %v", m.Values)
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o620, 0o602, 0o644, 0o666} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadSecretsFile(path)
		if err == nil || !strings.Contains(err.Error(), "chmod 600 "+path) {
			t.Errorf("mode %04o: err = %v, want a chmod 600 hint", mode, err)
		}
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSecretsFile(path); err != nil {
		t.Errorf("0400: %v", err)
	}
	// A vars file is not secret: any mode will do.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadVarsFile(path); err != nil {
		t.Errorf("vars file 0644: %v", err)
	}
}

func TestSecretsFileErrors(t *testing.T) {
	cases := map[string]string{
		"list.yaml":      "- a\n- b\n",
		"nested.yaml":    "a:\n  b: c\n",
		"badname.yaml":   "a b: c\n",
		"duplicate.yaml": "a: " + value + "\na: " + value + "\n",
		"syntax.yaml":    "a: b\n  c: " + value + "\n",
	}
	dir := t.TempDir()
	for name, content := range cases {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadSecretsFile(path)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if strings.Contains(err.Error(), value) {
			t.Errorf("%s: the error shows a value: %v", name, err)
		}
	}
}
