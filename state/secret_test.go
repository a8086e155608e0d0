package state

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/secrets"
)

// readDir returns the text of every file of dir.
func readDir(t *testing.T, dir string) string {
	t.Helper()
	var all strings.Builder
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	return all.String()
}

func TestSecretIdentityAndCheckpointAreHidden(t *testing.T) {
	const host, db = "db-7Qx91.internal", "shop_7Qx91"
	sc := secrets.NewScrubber()
	sc.Add("host", host)
	sc.Add("db", db)
	id := Identity{Pipeline: "p", Source: host + ":3307", Tables: db + `.\.*`}
	dir := t.TempDir()
	s, err := OpenSecret(dir, id, sc)
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"tables":["` + db + `.orders"]}`)
	if err := s.Save(Checkpoint{Position: "bin.000001:4", Schema: schema}); err != nil {
		t.Fatal(err)
	}
	cp, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if string(cp.Schema) != string(schema) {
		t.Errorf("schema read back = %s, want %s", cp.Schema, schema)
	}
	s.Close()
	if text := readDir(t, dir); strings.Contains(text, "7Qx91") || !strings.Contains(text, "sha256:") {
		t.Errorf("state files:\n%s", text)
	}
	// Reopened with the same values: the same identity.
	if s, err = OpenSecret(dir, id, sc); err != nil {
		t.Fatalf("reopen: %v", err)
	}
	s.Close()
	// Another secret host: refused, without either value.
	other := secrets.NewScrubber()
	other.Add("host", "db-other.internal")
	other.Add("db", db)
	_, err = OpenSecret(dir, Identity{Pipeline: "p", Source: "db-other.internal:3307", Tables: id.Tables}, other)
	var mm *MismatchError
	if !errors.As(err, &mm) || strings.Contains(err.Error(), "internal") || !strings.Contains(err.Error(), "another source") {
		t.Errorf("other host: %v", err)
	}
}

func TestPlainIdentityIsMigrated(t *testing.T) {
	const host = "db-7Qx91.internal"
	id := Identity{Pipeline: "p", Source: host + ":3307", Tables: "app.t"}
	dir := t.TempDir()
	s, err := Open(dir, id) // as written before secrets were hashed
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	sc := secrets.NewScrubber()
	sc.Add("host", host)
	if s, err = OpenSecret(dir, id, sc); err != nil {
		t.Fatalf("open an identity stored in plain: %v", err)
	}
	s.Close()
	if text := readDir(t, dir); strings.Contains(text, host) {
		t.Errorf("the plain host is still stored:\n%s", text)
	}
	if s, err = OpenSecret(dir, id, sc); err != nil {
		t.Fatalf("open the migrated identity: %v", err)
	}
	s.Close()
}
