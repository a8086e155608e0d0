package snapshot

import (
	"database/sql/driver"
	"testing"

	"github.com/ingestkit/ingest/change"
)

// TestArenaRelease checks that rows keep their bytes until release, that a released arena's
// blocks come back zeroed to the next arena, and that oversized rows get blocks of their own.
func TestArenaRelease(t *testing.T) {
	a := &arena{}
	dest := []driver.Value{[]byte("abc"), int64(7), nil}
	cols := make([][]byte, len(dest))
	a.copyRaw(dest, cols)
	row := a.row(len(dest))
	row[0] = change.StringValue(cols[0])
	if string(cols[0]) != "abc" || cols[1] != nil || cols[2] != nil {
		t.Fatalf("copyRaw: %q", cols)
	}
	dest[0].([]byte)[0] = 'X' // the driver reuses its buffer
	if string(row[0].Bytes) != "abc" {
		t.Fatalf("the row aliases the driver's buffer: %q", row[0].Bytes)
	}
	if len(a.byteBlocks) != 1 || len(a.valueBlocks) != 1 {
		t.Fatalf("blocks taken: %d byte, %d value", len(a.byteBlocks), len(a.valueBlocks))
	}
	a.release()
	if a.bytes != nil || a.values != nil || a.byteBlocks != nil {
		t.Fatal("release left blocks in the arena")
	}
	b := &arena{}
	for _, v := range b.row(arenaValues) {
		if v.Kind != change.Null || v.Bytes != nil {
			t.Fatalf("a reused value block is not zero: %+v", v)
		}
	}
	big := &arena{}
	big.copyRaw([]driver.Value{make([]byte, arenaBytes+1)}, make([][]byte, 1))
	big.row(arenaValues + 1)
	if len(big.byteBlocks) != 0 || len(big.valueBlocks) != 0 {
		t.Fatal("an oversized row took a pooled block")
	}
}
