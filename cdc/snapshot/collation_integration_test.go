//go:build integration

package snapshot

import (
	"cmp"
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/internal/testenv"
)

// TestCollationsMatchServer orders random texts of tricky characters (case, accents, ß,
// spaces and tabs at the end, characters beyond U+FFFF, a combining accent) on the server
// and with the collation the snapshot reads from it: every pair of neighbours in the
// server's order must compare the same way in Go (through their weight strings, for the UCA
// collations).
func TestCollationsMatchServer(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		_, db := srv.Database(t)
		alphabet := []string{"a", "A", "b", "B", "z", "e", "é", "É", "ê", "s", "S", "ß", " ", "\t", "!", "~", "0", "ÿ",
			"Ω", "ω", "ǅ", "ı", "日", "\u00a0", "\u0301", "😀", "😃", "ä", "æ", "l", "·", "ж", "€", "ñ", "ø", "å"}
		for _, coll := range []string{"utf8mb4_general_ci", "utf8mb4_general_nopad_ci", "utf8mb3_general_ci",
			"latin1_swedish_ci", "utf8mb4_bin", "utf8mb4_nopad_bin", "ascii_general_ci",
			"utf8mb4_uca1400_ai_ci", "utf8mb4_uca1400_nopad_ai_ci", "utf8mb4_unicode_ci", "utf8mb4_unicode_520_nopad_ci",
			"utf8mb3_unicode_ci", "utf8mb4_german2_ci", "utf8mb4_uca1400_swedish_ai_ci",
			"latin1_german2_ci", "latin1_german1_ci", "latin1_danish_ci", "latin1_spanish_ci", "latin1_general_cs", "latin1_bin", "latin1_nopad_bin"} {
			t.Run(coll, func(t *testing.T) {
				c, err := loadCollation(context.Background(), db, "test", coll)
				if err != nil {
					t.Fatal(err)
				}
				w := newWeigher(db)
				compare := func(a, b string) int {
					if !c.server {
						return c.compare([]byte(a), []byte(b))
					}
					wa, err1 := w.weigh(t.Context(), c, []byte(a))
					wb, err2 := w.weigh(t.Context(), c, []byte(b))
					if err1 != nil || err2 != nil {
						t.Fatal(err1, err2)
					}
					return c.compareWeights(wa, wb)
				}
				charset, _, _ := strings.Cut(coll, "_")
				testenv.Exec(t, db, "DROP TABLE IF EXISTS w", "CREATE TABLE w (s VARCHAR(20) CHARACTER SET "+charset+" COLLATE "+coll+" NOT NULL)")
				rnd := rand.New(rand.NewPCG(3, uint64(len(coll))))
				var texts []any
				for len(texts) < 3000 {
					var b strings.Builder
					for range rnd.IntN(6) {
						b.WriteString(alphabet[rnd.IntN(len(alphabet))])
					}
					if s := b.String(); representable(coll, s) {
						texts = append(texts, s)
					}
				}
				q := "INSERT INTO w VALUES " + strings.TrimSuffix(strings.Repeat("(?),", len(texts)), ",")
				if _, err := db.Exec(q, texts...); err != nil {
					t.Fatal(err)
				}
				rows, err := db.Query("SELECT CONVERT(s USING utf8mb4), DENSE_RANK() OVER (ORDER BY s) FROM w ORDER BY s")
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var prev string
				var prevRank, checked int
				for rows.Next() {
					var s string
					var rank int
					if err := rows.Scan(&s, &rank); err != nil {
						t.Fatal(err)
					}
					if prevRank > 0 {
						if got, want := compare(prev, s), cmp.Compare(prevRank, rank); got != want {
							t.Errorf("compare(%q, %q) = %d, the server orders them %d", prev, s, got, want)
						}
						checked++
					}
					prev, prevRank = s, rank
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				if checked < 2000 {
					t.Errorf("only %d neighbours compared", checked)
				}
			})
		}
	})
}
