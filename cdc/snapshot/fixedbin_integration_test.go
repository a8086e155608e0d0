//go:build integration

package snapshot

import (
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/internal/testenv"
)

// TestFixedBinOrderMatchesServer checks the chunk key order of UUID, INET4 and INET6 against
// the server: neighbours in its ORDER BY (through the primary key and through a sort) compare
// the same way in Go, and the range conditions of a chunk (k > CAST(? AS type), k <= …)
// select exactly the values Go places above or below each bound.
func TestFixedBinOrderMatchesServer(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		_, db := srv.Database(t)
		rnd := rand.New(rand.NewPCG(5, 6))
		for _, tc := range []struct {
			typ  string
			kt   keyType
			size int
		}{{"UUID", keyUUID, 16}, {"INET4", keyInet, 4}, {"INET6", keyInet, 16}} {
			t.Run(tc.typ, func(t *testing.T) {
				testenv.Exec(t, db, "DROP TABLE IF EXISTS o", "CREATE TABLE o (k "+tc.typ+" NOT NULL PRIMARY KEY, c "+tc.typ+")")
				var vals []string
				for i := range 1500 {
					b := make([]byte, tc.size)
					for j := range b {
						b[j] = byte(rnd.UintN(256))
					}
					if tc.size == 16 {
						if i%3 == 0 { // shared leading bytes: later groups decide
							copy(b, "\x11\x22\x33\x44\x55")
						}
						b[6] = byte(i%16)<<4 | b[6]&0x0f // every version nibble
						b[8] = byte(i/16%16)<<4 | b[8]&0x0f
						if i%5 == 0 {
							b[6] = 0
						}
						if tc.kt == keyUUID && b[6]&byte(-int8(b[8]))&0x80 != 0 {
							b[8] |= 0x81 // the server refuses these UUIDs (version ≥ 8 with variant 0)
						}
					}
					vals = append(vals, "'"+fixedBinText(tc.kt, b)+"'") // as text: binary input is taken as the stored form
				}
				rows := make([]string, len(vals))
				for i, v := range vals {
					rows[i] = "(" + v + "," + v + ")"
				}
				testenv.Exec(t, db, "INSERT IGNORE INTO o VALUES "+strings.Join(rows, ","))
				for _, col := range []string{"k", "c"} {
					texts := queryTexts(t, db, "SELECT CAST("+col+" AS CHAR) FROM o ORDER BY "+col)
					for i := 1; i < len(texts); i++ {
						if c := compareFixedBin(tc.kt, []byte(texts[i-1]), []byte(texts[i])); c >= 0 {
							t.Fatalf("ORDER BY %s: %s before %s, Go compares %d", col, texts[i-1], texts[i], c)
						}
					}
				}
				all := queryTexts(t, db, "SELECT CAST(k AS CHAR) FROM o")
				for i := 0; i < 60; i++ {
					bound := all[rnd.IntN(len(all))]
					want := 0
					for _, v := range all {
						if compareFixedBin(tc.kt, []byte(v), []byte(bound)) > 0 {
							want++
						}
					}
					for _, q := range []string{"SELECT COUNT(*) FROM o WHERE k > CAST(? AS " + tc.typ + ")",
						"SELECT COUNT(*) FROM o WHERE c > CAST(? AS " + tc.typ + ")",
						"SELECT " + fmt.Sprint(len(all)) + " - COUNT(*) FROM o WHERE k <= CAST(? AS " + tc.typ + ")"} {
						var got int
						if err := db.QueryRow(q, bound).Scan(&got); err != nil {
							t.Fatal(err)
						}
						if got != want {
							t.Errorf("%s with %s: %d rows, Go places %d above", q, bound, got, want)
						}
					}
				}
			})
		}
	})
}

// fixedBinText writes b as a text the server reads as the value of those bytes.
func fixedBinText(typ keyType, b []byte) string {
	if typ == keyUUID {
		h := hex.EncodeToString(b)
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	a, _ := netip.AddrFromSlice(b)
	return a.String()
}

func queryTexts(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
