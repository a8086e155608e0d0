package snapshot

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/ingestkit/ingest/change"
)

// writePacket writes p through w in pieces of at most step bytes, as go-mysql's reader does.
func writePacket(w *packetWriter, p []byte, step int) []byte {
	w.begin()
	for len(p) > 0 {
		n := min(step, len(p))
		_, _ = w.Write(p[:n])
		p = p[n:]
	}
	return w.packet()
}

// TestPacketWriter checks that a packet stays contiguous and intact when it fills its block,
// that packets written earlier keep their bytes, and that discard drops only the last one.
func TestPacketWriter(t *testing.T) {
	tests := []struct {
		name        string
		size, step  int
		ownBlock    bool // the packet needs a block larger than the pooled ones
		blocksAfter int
	}{
		{"small", 100, 16 << 10, false, 1},
		{"crosses the end of the block", arenaBytes - 4, 16 << 10, false, 2},
		{"larger than a block", 3 * arenaBytes, 16 << 10, true, 2}, // one pooled block filled on the way
		{"in one write", 2 * arenaBytes, 2 * arenaBytes, true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &arena{}
			w := packetWriter{a: a}
			first := writePacket(&w, []byte("first packet"), 4)
			want := bytes.Repeat([]byte("0123456789abcdef"), tc.size/16+1)[:tc.size]
			got := writePacket(&w, want, tc.step)
			if !bytes.Equal(got, want) {
				t.Fatalf("packet of %d bytes came back as %d bytes", len(want), len(got))
			}
			if string(first) != "first packet" {
				t.Fatalf("the earlier packet changed: %q", first)
			}
			if len(a.byteBlocks) != tc.blocksAfter {
				t.Errorf("pooled blocks taken: %d, want %d", len(a.byteBlocks), tc.blocksAfter)
			}
			if own := cap(a.bytes) > arenaBytes; own != tc.ownBlock {
				t.Errorf("current block of %d bytes; own block %v, want %v", cap(a.bytes), own, tc.ownBlock)
			}
			w.discard()
			third := writePacket(&w, []byte("third"), 2)
			if string(third) != "third" || string(first) != "first packet" {
				t.Fatalf("after discard: %q, %q", first, third)
			}
			a.release()
		})
	}
}

// TestArenaRelease checks that a released arena's blocks come back zeroed to the next arena,
// and that oversized rows get value blocks of their own.
func TestArenaRelease(t *testing.T) {
	a := &arena{}
	w := packetWriter{a: a}
	writePacket(&w, []byte("abc"), 3)
	a.row(2)
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
	big.row(arenaValues + 1)
	if len(big.valueBlocks) != 0 {
		t.Fatal("an oversized row took a pooled block")
	}
}

// TestArenaDecode checks that NULL (nil) stays NULL, and that values go through the decoder
// of their wire form.
func TestArenaDecode(t *testing.T) {
	tbl := intTable() // two int columns
	minus42 := binary.LittleEndian.AppendUint64(nil, uint64(0xffffffffffffffd6))
	row, err := (&arena{}).decode(tbl, [][]byte{minus42, nil}, []wireForm{8, 8})
	if err != nil {
		t.Fatal(err)
	}
	if row[0].Kind != change.Int || row[0].Int() != -42 || !row[1].IsNull() {
		t.Fatalf("decoded %+v, want int -42 and NULL", row)
	}
	row, err = (&arena{}).decode(tbl, [][]byte{[]byte("-7"), []byte("8")}, []wireForm{wireText, wireText})
	if err != nil || row[0].Int() != -7 || row[1].Int() != 8 {
		t.Fatalf("decoded text %+v, %v; want -7 and 8", row, err)
	}
	if _, err := (&arena{}).decode(tbl, [][]byte{[]byte("x"), nil}, []wireForm{wireText, 8}); err == nil {
		t.Fatal("decoded a bad integer without an error")
	}
	if _, err := (&arena{}).decode(tbl, [][]byte{{1, 2}, nil}, []wireForm{2, 8}); err == nil {
		t.Fatal("decoded a binary value of the wrong size without an error")
	}
}
