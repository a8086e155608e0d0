package history

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestHistoryParts: a history split into its tables' parts joins back into the same
// history, and the keys keep tables apart whatever their names hold.
func TestHistoryParts(t *testing.T) {
	history := []byte(`{"format":1,"tables":[{"db":"a.b","table":"c","versions":[]},{"db":"a","table":"b.c","versions":[]},{"db":"x/y","table":"t","versions":[{"at":"f:4","shape":null}]}]}`)
	parts, err := Split(history)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, p := range parts {
		if strings.Contains(p.Key, "/") || strings.Count(p.Key, ".") != 1 || keys[p.Key] {
			t.Errorf("key %q", p.Key)
		}
		keys[p.Key] = true
	}
	var a, b any
	_ = json.Unmarshal(history, &a)
	if err := json.Unmarshal(Join(parts), &b); err != nil {
		t.Fatal(err)
	}
	if x, y := mustJSON(a), mustJSON(b); x != y {
		t.Errorf("joined %s, want %s", y, x)
	}
	if _, err := Split([]byte(`{"format":9}`)); err == nil {
		t.Error("no error for an unknown format")
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
