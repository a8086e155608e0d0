package snapshot

import "testing"

func TestCompareFixedBin(t *testing.T) {
	tests := []struct {
		typ  keyType
		a, b string
		want int
	}{
		// Version 1, variant 1: swapped, so the node (last group) decides first.
		{keyUUID, "ffffffff-ffff-1fff-8fff-000000000000", "00000000-0000-1000-8000-000000000001", -1},
		// Version 4 swaps too; version 6, 0 and variant 0 keep the text order.
		{keyUUID, "ffffffff-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000001", -1},
		{keyUUID, "ffffffff-0000-6000-8000-000000000000", "00000000-0000-6000-8000-000000000001", 1},
		{keyUUID, "ffffffff-0000-0000-8000-000000000000", "00000000-0000-0000-8000-000000000001", 1},
		{keyUUID, "ffffffff-0000-1000-0000-000000000000", "00000000-0000-1000-0000-000000000001", 1},
		// A swapped one against one in text order: their stored bytes.
		{keyUUID, "11223344-5555-3d49-db27-00a26122e6b8", "a08ea17a-9308-8070-fb39-00727398889c", -1},
		{keyUUID, "6ccd780c-baba-1026-9564-5b8c656024db", "6ccd780c-baba-1026-9564-5b8c656024db", 0},
		{keyInet, "10.0.0.2", "9.255.255.255", 1},
		{keyInet, "::ffff:1.2.3.4", "::1.2.3.5", 1},
		{keyInet, "2001:db8::1", "2001:db8::", 1},
		{keyInet, "::", "::1", -1},
		{keyInet, "x", "::", 1},
	}
	for _, tc := range tests {
		if got := compareFixedBin(tc.typ, []byte(tc.a), []byte(tc.b)); got != tc.want {
			t.Errorf("%s vs %s: got %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := compareFixedBin(tc.typ, []byte(tc.b), []byte(tc.a)); got != -tc.want {
			t.Errorf("%s vs %s: got %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}

func TestNewKeyColumnFixedBin(t *testing.T) {
	for typ, param := range map[string]string{"uuid": "CAST(? AS UUID)", "inet4": "CAST(? AS INET4)", "inet6": "CAST(? AS INET6)"} {
		kc, err := newKeyColumn(columnFacts{Name: "k", DataType: typ, ColumnType: typ}, 0)
		if err != nil || kc.param != param {
			t.Errorf("%s: %+v %v", typ, kc, err)
		}
	}
}
