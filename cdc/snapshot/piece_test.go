package snapshot

import "testing"

// TestPieceRows: a piece of a table of wide rows holds about pieceBytes of rows, never fewer
// than minPieceRows rows nor more than the limit.
func TestPieceRows(t *testing.T) {
	for _, tc := range []struct {
		avgRow int64
		limit  int
		want   int
	}{
		{0, 16192, 16192},               // unknown size: the limit
		{200, 16192, 16192},             // narrow rows: the limit
		{10 << 10, 16192, 409},          // 10 KiB rows: 4 MiB of them
		{1 << 20, 16192, minPieceRows},  // 1 MiB rows: 4
		{64 << 20, 16192, minPieceRows}, // rows over pieceBytes: still minPieceRows
		{1 << 20, 2, 2},                 // a limit below minPieceRows holds
		{pieceBytes / 100, 100, 100},    // exactly the limit
		{pieceBytes/100 + 1, 100, 99},   // just over
	} {
		tb := &table{avgRow: tc.avgRow}
		if got := tb.pieceRows(tc.limit); got != tc.want {
			t.Errorf("avg row %d, limit %d: %d rows per piece, want %d", tc.avgRow, tc.limit, got, tc.want)
		}
	}
}
