package snapshot

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"strings"
)

// The chunk key order of MariaDB's UUID, INET4 and INET6 columns (the server's "fixed
// binary types"), whose values are the text the server shows (see package cdc's
// fixedbin.go).
//
// An INET4 or INET6 orders by its bytes. A UUID orders by the bytes the server stores: for a
// UUID of version 1 to 5 whose variant bit is set (byte 6 in 0x01…0x5f, byte 8 ≥ 0x80), the
// five groups of the text in reverse order (node, clock sequence, time-high, time-mid,
// time-low), so that time-based UUIDs sort by time; every other UUID in the order of its
// text. Both orders were checked against ORDER BY and range conditions on MariaDB 10.11
// (fixedbin_integration_test.go). (A UUID written as a 16-byte binary string is stored as
// given, and may then sit where the server's own comparisons do not expect it; values
// written as text or by UUID() never do.)

// compareFixedBin orders two texts of a UUID (typ keyUUID) or INET column as the server
// does. A text that does not parse (never sent by the server) sorts by its bytes, after the
// others.
func compareFixedBin(typ keyType, a, b []byte) int {
	ka, okA := fixedBinOrder(typ, a)
	kb, okB := fixedBinOrder(typ, b)
	switch {
	case okA && okB:
		return bytes.Compare(ka, kb)
	case okA != okB:
		return boolInt(okB) - boolInt(okA)
	}
	return bytes.Compare(a, b)
}

// fixedBinOrder returns the bytes whose order is the server's order of the value.
func fixedBinOrder(typ keyType, text []byte) ([]byte, bool) {
	if typ == keyUUID {
		return uuidOrder(text)
	}
	a, err := netip.ParseAddr(string(text))
	if err != nil {
		return nil, false
	}
	if a.Is4() {
		b := a.As4()
		return b[:], true
	}
	b := a.As16()
	return b[:], true
}

// uuidOrder returns the server's storage bytes of a UUID text.
func uuidOrder(text []byte) ([]byte, bool) {
	b, err := hex.DecodeString(strings.ReplaceAll(string(text), "-", ""))
	if err != nil || len(b) != 16 {
		return nil, false
	}
	if b[6] == 0 || b[6] >= 0x60 || b[8]&0x80 == 0 {
		return b, true
	}
	out := make([]byte, 0, 16)
	for _, g := range [...][2]int{{10, 16}, {8, 10}, {6, 8}, {4, 6}, {0, 4}} {
		out = append(out, b[g[0]:g[1]]...)
	}
	return out, true
}
