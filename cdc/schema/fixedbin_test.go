package schema

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"testing"
)

func TestAppendInet6(t *testing.T) {
	tests := []struct{ hex, want string }{
		{"00000000000000000000000000000000", "::"},
		{"00000000000000000000000000000001", "::1"},
		{"00000000000000000000000000010203", "::0.1.2.3"},
		{"00000000000000000000000001020304", "::1.2.3.4"},
		{"00000000000000000000ffff01020304", "::ffff:1.2.3.4"},
		{"00000000000000000000fffe01020304", "::fffe:102:304"},
		{"0000000000000000ffff000001020304", "::ffff:0:102:304"},
		{"20010db8000000000000000000000001", "2001:db8::1"},
		{"20010db8000000010000000000000001", "2001:db8:0:1::1"},
		{"00010000000200030004000500060007", "1::2:3:4:5:6:7"},
		{"00010000000000020000000000000003", "1:0:0:2::3"},
		{"00010000000000020000000000030000", "1::2:0:0:3:0"},
		{"00010000000000000000000000000000", "1::"},
		{"ffffffffffffffffffffffffffffffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		{"00000000000000000000000000000102", "::102"},
	}
	for _, tc := range tests {
		b, _ := hex.DecodeString(tc.hex)
		if got := string(appendInet6(nil, b)); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.hex, got, tc.want)
		}
	}
}

func TestAppendUUIDInet4(t *testing.T) {
	b, _ := hex.DecodeString("6ccd780cbaba102695645b8c656024db")
	if got := string(appendUUID(nil, b)); got != "6ccd780c-baba-1026-9564-5b8c656024db" {
		t.Errorf("uuid: got %s", got)
	}
	if got := string(appendInet4(nil, []byte{255, 0, 10, 1})); got != "255.0.10.1" {
		t.Errorf("inet4: got %s", got)
	}
}

// FuzzFixedBin checks that the text of any 16 bytes reads back as those bytes, as INET6 and
// as UUID, and that an INET6 text is an address Go reads the same.
func FuzzFixedBin(f *testing.F) {
	f.Add(make([]byte, 16))
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x01\x02\x03\x04"))
	f.Add([]byte("\x00\x01\x00\x00\x00\x02\x00\x03\x00\x04\x00\x05\x00\x06\x00\x07"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != 16 {
			return
		}
		for _, cl := range []Class{ClassInet6, ClassUUID} {
			text := appendFixedBin(nil, cl, b)
			back, ok := parseFixedBin(cl, text)
			if !ok || !bytes.Equal(back, b) {
				t.Fatalf("%s %x: text %s reads back as %x (%v)", cl, b, text, back, ok)
			}
		}
		text := appendInet6(nil, b)
		a, err := netip.ParseAddr(string(text))
		if err != nil || a.As16() != [16]byte(b) {
			t.Fatalf("%x: %s is %v (%v)", b, text, a, err)
		}
	})
}

func TestParseCharmapsErrors(t *testing.T) {
	row := "0000 0001 0002 0003 0004 0005 0006 0007 0008 0009 000A 000B 000C 000D 000E 000F\n"
	full := ""
	for range 16 {
		full += row
	}
	for name, text := range map[string]string{
		"short":        "x\n" + row,
		"long":         "x\n" + full + row,
		"no name":      row,
		"bad point":    "x\n" + full[:len(full)-5] + "zzzz\n",
		"surrogate":    "x\n" + full[:len(full)-5] + "D800\n",
		"short inside": "x\n" + row + "y\n" + full,
	} {
		if _, err := parseCharmaps(text); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	m, err := parseCharmaps("# c\nx\n" + full[:len(full)-5] + "----\n")
	if err != nil || m["x"].runes[255] != 0xfffd || m["x"].ascii {
		t.Errorf("good table: %v %v", m, err)
	}
}
