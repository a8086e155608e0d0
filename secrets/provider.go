package secrets

import (
	"context"
	"errors"
	"os"
	"strings"
)

// ErrNotFound is returned (possibly wrapped) by a [Provider] that does not
// know a name. Any other error from a Provider is a backend failure.
var ErrNotFound = errors.New("not found")

// Provider looks up the value of a secret or variable by its name (for a
// secret, the NAME of ${secret_values.NAME}).
//
// Lookup returns an error wrapping [ErrNotFound] when the provider does not
// know the name, so that the next provider is asked, and any other error
// when its backend failed, which stops the lookup. Errors must not contain
// values. Implementations must be safe for concurrent use.
type Provider interface {
	Lookup(ctx context.Context, name string) (value string, err error)
}

// Hinter is implemented by providers that can tell a user how to supply a
// name they do not know, as in "set INGEST_SECRET_DB_PW". The hints of all
// the providers asked make up the message of an unresolved placeholder.
type Hinter interface {
	Hint(name string) string
}

// Map is a [Provider] over a fixed set of values, such as the --var flags
// or a secrets file.
type Map struct {
	// Values maps names to values.
	Values map[string]string
	// HintFunc, when set, is what [Map.Hint] returns.
	HintFunc func(name string) string
}

// Lookup returns the value of name, or [ErrNotFound].
func (m *Map) Lookup(_ context.Context, name string) (string, error) {
	if v, ok := m.Values[name]; ok {
		return v, nil
	}
	return "", ErrNotFound
}

// Hint returns HintFunc(name), or "" when HintFunc is nil.
func (m *Map) Hint(name string) string {
	if m.HintFunc == nil {
		return ""
	}
	return m.HintFunc(name)
}

// The environment variable prefixes that the ingest command uses.
const (
	// SecretEnvPrefix starts the environment variable of a secret:
	// INGEST_SECRET_DB_PW for ${secret_values.db-pw}.
	SecretEnvPrefix = "INGEST_SECRET_"
	// VarEnvPrefix starts the environment variable of a variable:
	// INGEST_VAR_KAFKA_BOOTSTRAP for ${kafka.bootstrap}.
	VarEnvPrefix = "INGEST_VAR_"
)

// Env is a [Provider] over environment variables named prefix + [EnvName].
type Env struct {
	prefix string
	lookup func(string) (string, bool)
}

// NewEnv returns a provider of the environment variables that start with
// prefix. lookup reads a variable; nil means [os.LookupEnv].
func NewEnv(prefix string, lookup func(key string) (string, bool)) *Env {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	return &Env{prefix: prefix, lookup: lookup}
}

// Lookup returns the value of the variable prefix + EnvName(name), or
// [ErrNotFound] when it is not set. A variable set to "" is found.
func (e *Env) Lookup(_ context.Context, name string) (string, error) {
	if v, ok := e.lookup(e.prefix + EnvName(name)); ok {
		return v, nil
	}
	return "", ErrNotFound
}

// Hint returns "set PREFIX_NAME".
func (e *Env) Hint(name string) string { return "set " + e.prefix + EnvName(name) }

// EnvName turns a placeholder name into the suffix of an environment
// variable: upper-cased, with every character other than an ASCII letter or
// digit turned into '_'. "kafka.bootstrap" gives "KAFKA_BOOTSTRAP". Names
// that differ only in such characters share a variable.
func EnvName(name string) string {
	b := []byte(strings.ToUpper(name))
	for i, c := range b {
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}
