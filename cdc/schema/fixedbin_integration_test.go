//go:build integration

package schema

import (
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"github.com/ingestkit/ingest/internal/testenv"
)

// fixedBinSamples returns n values of size bytes: random, with runs of zero groups and the
// IPv4-mapped and -compatible prefixes, and with every UUID version and variant nibble the
// server accepts.
func fixedBinSamples(n, size int) [][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	var out [][]byte
	for i := range n {
		b := make([]byte, size)
		for j := range b {
			b[j] = byte(r.UintN(256))
		}
		if size == 16 {
			for g := range 8 { // zero some groups
				if r.UintN(3) == 0 {
					b[2*g], b[2*g+1] = 0, 0
				}
			}
			switch i % 7 {
			case 0:
				copy(b, make([]byte, 10))
				b[10], b[11] = 0xff, 0xff
			case 1:
				copy(b, make([]byte, 12))
			}
			b[6] = byte(i%16)<<4 | b[6]&0x0f
			b[8] = byte(i/16%16)<<4 | b[8]&0x0f
			if b[6]&byte(-int8(b[8]))&0x80 != 0 { // the server refuses these UUIDs
				b[8] |= 0x81
			}
		}
		out = append(out, b)
	}
	return out
}

// TestFixedBinMatchesServer stores bytes in UUID, INET4 and INET6 columns and checks that
// the text ingest renders from the bytes is the text the server shows.
func TestFixedBinMatchesServer(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		_, db := srv.Database(t)
		testenv.Exec(t, db, "CREATE TABLE f (u UUID, i4 INET4, i6 INET6)")
		for _, tc := range []struct {
			col  string
			cl   Class
			size int
		}{{"u", ClassUUID, 16}, {"i4", ClassInet4, 4}, {"i6", ClassInet6, 16}} {
			for _, b := range fixedBinSamples(600, tc.size) {
				var text string
				err := db.QueryRow("SELECT CAST(CAST(UNHEX(?) AS "+map[string]string{"u": "UUID", "i4": "INET4", "i6": "INET6"}[tc.col]+") AS CHAR)",
					hex.EncodeToString(b)).Scan(&text)
				if err != nil {
					t.Fatalf("%s %x: %v", tc.col, b, err)
				}
				if got := string(appendFixedBin(nil, tc.cl, b)); got != text {
					t.Errorf("%s %x: ingest renders %s, the server %s", tc.col, b, got, text)
				}
				if back, ok := parseFixedBin(tc.cl, []byte(text)); !ok || hex.EncodeToString(back) != hex.EncodeToString(b) {
					t.Errorf("%s %s: reads back as %x", tc.col, text, back)
				}
			}
		}
	})
}
