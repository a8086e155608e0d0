//go:build integration

package snapshot

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/ingestkit/ingest/internal/testenv"
)

// TestWeighAll weighs 600 texts in batched queries (three of them) and checks each weight
// string against the server's for that text alone.
func TestWeighAll(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		_, db := srv.Database(t)
		c, err := loadCollation(t.Context(), db, "test", "utf8mb4_uca1400_ai_ci")
		if err != nil {
			t.Fatal(err)
		}
		var texts [][]byte
		for i := range 600 {
			texts = append(texts, fmt.Appendf(nil, "%sk%05d", []string{"ß", "ss", "SS", "é", ""}[i%5], i))
		}
		w := newWeigher(db)
		if err := w.weighAll(t.Context(), c, texts); err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			got, ok := w.cached(c, text)
			var want []byte
			if err := db.QueryRow("SELECT WEIGHT_STRING("+paramText(c.name)+")", string(text)).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if !ok || !bytes.Equal(got, want) {
				t.Fatalf("weight of %q: %X (cached %v), the server alone gives %X", text, got, ok, want)
			}
		}
	})
}
