package schema

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/ingestkit/ingest/change"
)

// MariaDB's UUID, INET4 and INET6 types are fixed-length binary values (the server's
// "fixed binary types") that a SELECT shows as text. The binlog carries their bytes (a
// MYSQL_TYPE_STRING of 16 or 4 bytes, trailing 0x00 stripped like BINARY's), a SELECT
// their text; both render as the text the server shows:
//
//   - UUID: 16 bytes in the order of the text (the binlog carries them so, whatever the
//     server's storage order), shown as lower-case hex 8-4-4-4-12;
//   - INET4: 4 bytes, shown as dotted decimal;
//   - INET6: 16 bytes, shown by the server's own rules (fixedBinText), which differ from
//     RFC 5952 in two ways: a single zero group is shortened too, and the last 32 bits of
//     an IPv4-compatible address (::a.b.c.d) are dotted like those of an IPv4-mapped one.

// fixedBinClass returns the class and byte length of a fixed binary type named by
// information_schema's DATA_TYPE.
func fixedBinClass(dataType string) (Class, int, bool) {
	switch dataType {
	case "uuid":
		return ClassUUID, 16, true
	case "inet4":
		return ClassInet4, 4, true
	case "inet6":
		return ClassInet6, 16, true
	}
	return 0, 0, false
}

// fixedBinFromBytes renders the bytes of a fixed binary value (the binlog's, padding
// stripped) as the server's text.
func (c *Column) fixedBinFromBytes(b []byte) (change.Value, error) {
	if len(b) > c.Length {
		return change.Value{}, fmt.Errorf("%d bytes for a %d-byte %s", len(b), c.Length, c.class)
	}
	return change.StringValue(appendFixedBin(nil, c.class, padBinary(b, c.Length))), nil
}

// fixedBinFromText reads the server's text of a fixed binary value and renders it again, so
// that the snapshot's value is the binlog's by construction.
func (c *Column) fixedBinFromText(text []byte) (change.Value, error) {
	b, ok := parseFixedBin(c.class, text)
	if !ok {
		return change.Value{}, fmt.Errorf("not a %s text", c.class)
	}
	return change.StringValue(appendFixedBin(nil, c.class, b)), nil
}

// appendFixedBin appends the server's text of a UUID, INET4 or INET6 of the right length.
func appendFixedBin(dst []byte, cl Class, b []byte) []byte {
	switch cl {
	case ClassUUID:
		return appendUUID(dst, b)
	case ClassInet4:
		return appendInet4(dst, b)
	}
	return appendInet6(dst, b)
}

// parseFixedBin reads the text of a UUID, INET4 or INET6 into its bytes.
func parseFixedBin(cl Class, text []byte) ([]byte, bool) {
	if cl == ClassUUID {
		return parseUUID(text)
	}
	a, err := netip.ParseAddr(string(text))
	switch {
	case err != nil || a.Zone() != "":
		return nil, false
	case cl == ClassInet4 && a.Is4():
		b := a.As4()
		return b[:], true
	case cl == ClassInet6 && !a.Is4():
		b := a.As16()
		return b[:], true
	}
	return nil, false
}

// appendUUID appends 16 bytes as lower-case hex in groups of 8, 4, 4, 4 and 12 digits.
func appendUUID(dst, b []byte) []byte {
	for i, group := range [...][2]int{{0, 4}, {4, 6}, {6, 8}, {8, 10}, {10, 16}} {
		if i > 0 {
			dst = append(dst, '-')
		}
		dst = hex.AppendEncode(dst, b[group[0]:group[1]])
	}
	return dst
}

// parseUUID reads 32 hex digits, in the 8-4-4-4-12 form or without dashes.
func parseUUID(text []byte) ([]byte, bool) {
	digits := make([]byte, 0, 32)
	switch len(text) {
	case 36:
		for i, c := range text {
			switch {
			case i == 8 || i == 13 || i == 18 || i == 23:
				if c != '-' {
					return nil, false
				}
			default:
				digits = append(digits, c)
			}
		}
	case 32:
		digits = append(digits, text...)
	default:
		return nil, false
	}
	b, err := hex.AppendDecode(nil, digits)
	return b, err == nil
}

func appendInet4(dst, b []byte) []byte {
	for i, x := range b[:4] {
		if i > 0 {
			dst = append(dst, '.')
		}
		dst = strconv.AppendUint(dst, uint64(x), 10)
	}
	return dst
}

// appendInet6 appends 16 bytes as the server shows an INET6 (MariaDB's Inet6::to_string):
// eight groups of lower-case hex without leading zeros; the first longest run of zero
// groups, even a single one, written as "::"; and when that run is the first five groups
// followed by ffff (IPv4-mapped) or the first six (IPv4-compatible), the last four bytes
// dotted as an IPv4 address.
func appendInet6(dst, b []byte) []byte {
	var words [8]uint16
	for i := range words {
		words[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	gapPos, gapLen := -1, 0
	for i := 0; i < 8; {
		if words[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && words[j] == 0 {
			j++
		}
		if j-i > gapLen {
			gapPos, gapLen = i, j-i
		}
		i = j
	}
	for i := 0; i < 8; i++ {
		switch {
		case i == gapPos:
			if i == 0 {
				dst = append(dst, ':')
			}
			dst = append(dst, ':')
			i += gapLen - 1
		case i == 6 && gapPos == 0 && (gapLen == 6 || gapLen == 5 && words[5] == 0xffff):
			return appendInet4(dst, b[12:])
		default:
			dst = strconv.AppendUint(dst, uint64(words[i]), 16)
			if i != 7 {
				dst = append(dst, ':')
			}
		}
	}
	return dst
}
