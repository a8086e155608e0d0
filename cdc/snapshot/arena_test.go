package snapshot

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ingestkit/ingest/change"
)

// textRow parses values as go-mysql's client parses a text protocol row of columns of the
// given types; a nil value is NULL.
func textRow(t *testing.T, types []byte, values ...[]byte) []mysql.FieldValue {
	t.Helper()
	var packet []byte
	fields := make([]*mysql.Field, len(values))
	for i, v := range values {
		fields[i] = &mysql.Field{Type: types[i]}
		if v == nil {
			packet = append(packet, 0xfb)
			continue
		}
		packet = append(packet, mysql.PutLengthEncodedInt(uint64(len(v)))...)
		packet = append(packet, v...)
	}
	row, err := mysql.RowData(packet).ParseText(fields, nil)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// TestArenaRelease checks that rows keep their bytes until release, that a released arena's
// blocks come back zeroed to the next arena, and that oversized rows get blocks of their own.
func TestArenaRelease(t *testing.T) {
	a := &arena{}
	fields := textRow(t, []byte{mysql.MYSQL_TYPE_VAR_STRING}, []byte("abc"))
	cols := make([][]byte, len(fields))
	a.copyRaw(fields, cols)
	row := a.row(len(fields))
	row[0] = change.StringValue(cols[0])
	if string(cols[0]) != "abc" {
		t.Fatalf("copyRaw: %q", cols)
	}
	fields[0].AsString()[0] = 'X' // go-mysql reuses its buffers for the next row
	if string(row[0].Bytes) != "abc" {
		t.Fatalf("the row aliases go-mysql's buffer: %q", row[0].Bytes)
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
	big.copyRaw(textRow(t, []byte{mysql.MYSQL_TYPE_BLOB}, make([]byte, arenaBytes+1)), make([][]byte, 1))
	big.row(arenaValues + 1)
	if len(big.byteBlocks) != 0 || len(big.valueBlocks) != 0 {
		t.Fatal("an oversized row took a pooled block")
	}
}

// TestArenaDecode checks the conversion of each kind of field: NULL apart from empty text,
// and numbers as the decoders take them.
func TestArenaDecode(t *testing.T) {
	tbl := intTable() // two int columns
	fields := textRow(t, []byte{mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_LONG}, []byte("-42"), nil)
	cols := make([][]byte, 2)
	a := &arena{}
	a.copyRaw(fields, cols)
	row, err := a.decode(tbl, fields, cols)
	if err != nil {
		t.Fatal(err)
	}
	if row[0].Kind != change.Int || row[0].Int() != -42 || !row[1].IsNull() {
		t.Fatalf("decoded %+v, want int -42 and NULL", row)
	}
	text := textRow(t, []byte{mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_VAR_STRING}, []byte{}, nil)
	a.copyRaw(text, cols)
	if cols[0] == nil || len(cols[0]) != 0 || cols[1] != nil {
		t.Fatalf("copyRaw of empty and NULL text: %#v", cols)
	}
}
