package route

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Transform is the part of one item of the pipeline's transform block that
// this package uses.
type Transform struct {
	// SourceTable is a table pattern in [Selector] syntax.
	SourceTable string
	// PrimaryKeys, when not empty, are the columns that key the table's
	// records instead of its primary key. See [SplitKeys].
	PrimaryKeys []string
}

// KeyOverrides applies transform primary-keys. As in Flink CDC
// (its PreTransformOperator; docs/pipeline.md) the first
// transform whose source-table matches a table decides: when it has no
// primary-keys the table keeps its own key, even if a later transform that
// also matches has some.
//
// A KeyOverrides is immutable and safe for concurrent use.
type KeyOverrides struct {
	rules []keyRule
}

type keyRule struct {
	sel  *Selector
	keys []string
}

// NewKeyOverrides parses the transforms' source-table patterns and checks
// their key lists: an empty or repeated column name (in any case, as MySQL
// column names ignore case) is an error. Errors are [*FieldError]s.
func NewKeyOverrides(transforms []Transform) (*KeyOverrides, error) {
	k := &KeyOverrides{}
	for i, tr := range transforms {
		sel, err := ParseSelector(tr.SourceTable)
		if err != nil {
			return nil, fieldErr("transform", i, "source-table", err)
		}
		keys, err := checkKeys(tr.PrimaryKeys)
		if err != nil {
			return nil, fieldErr("transform", i, "primary-keys", err)
		}
		k.rules = append(k.rules, keyRule{sel: sel, keys: keys})
	}
	return k, nil
}

func checkKeys(keys []string) ([]string, error) {
	var out []string
	for _, key := range keys {
		if javaTrim(key) == "" {
			return nil, errors.New("has an empty column name; write column names separated by ','")
		}
		if slices.ContainsFunc(out, func(have string) bool { return strings.EqualFold(have, key) }) {
			return nil, fmt.Errorf("lists column %q twice", key)
		}
		out = append(out, key)
	}
	return out, nil
}

// PrimaryKeys returns the key columns that the first transform matching
// db.table sets, and false when that transform sets none or no transform
// matches, in which case the table's own primary key applies. The returned
// slice is the caller's.
func (k *KeyOverrides) PrimaryKeys(db, table string) ([]string, bool) {
	for _, r := range k.rules {
		if r.sel.Match(db, table) {
			return slices.Clone(r.keys), len(r.keys) > 0
		}
	}
	return nil, false
}

// SplitKeys splits a primary-keys option value the way Flink CDC's
// SchemaMetadataTransform does: on ',', each name trimmed, and a name quoted
// in backticks unquoted (a doubled backtick inside it becomes one). A value
// of only whitespace gives nil. Empty names are kept so that
// [NewKeyOverrides] can report them.
func SplitKeys(s string) []string {
	if javaTrim(s) == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	// Java's String.split drops trailing empty strings.
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	for i, p := range parts {
		parts[i] = unquoteColumn(javaTrim(p))
	}
	return parts
}

func unquoteColumn(s string) string {
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		return strings.ReplaceAll(s[1:len(s)-1], "``", "`")
	}
	return s
}
