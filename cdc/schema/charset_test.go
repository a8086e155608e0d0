package schema

import "testing"

func TestMultiByteCorrections(t *testing.T) {
	n := 0
	for _, fixes := range mbmaps {
		n += len(fixes)
	}
	if n != 6031 {
		t.Errorf("%d corrections, want the 6031 TestMultiByteMatchesServer found", n)
	}
	tests := []struct{ charset, in, want string }{
		{"sjis", "a\x81\x5f\x93\xfa", "a\\日"},           // 0x815F is MariaDB's backslash, Go's fullwidth one
		{"cp932", "\xf0\x40x\xf0\x41", "\ue000x\ue001"}, // the user-defined area is the Private Use Area
		{"big5", "\xa1\x45\xa4\x40", "\u2022一"},         // MariaDB's bullet, Go's hyphenation point
		{"ujis", "\xa1\xc0\x8f\xa2\xb7", "\\~"},         // a two-byte and a three-byte (JIS X 0212) correction
		{"eucjpms", "\xf5\xa1\xa4\xa2", "\ue000\u3042"}, // PUA, then Hiragana a (no correction)
		{"sjis", "\x93\xfa\x81", "日\ufffd"},             // a lead byte at the end
		{"gbk", "\xd6\xd0\xce\xc4", "中文"},               // no corrections: plain x/text
	}
	for _, tc := range tests {
		dec, err := decoderFor(tc.charset)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dec.decode([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s %x: got %q (%v), want %q", tc.charset, tc.in, got, err, tc.want)
		}
	}
}

func TestParseMBMapsErrors(t *testing.T) {
	for _, text := range []string{"big5 A1", "big5 A145", "nosuch A145 2022", "big5 A145 zz", "big5 A145 2022 0",
		"big5 A145 10FFFF 2", "big5 A145 2022 1 1"} {
		if _, err := parseMBMaps(text); err == nil {
			t.Errorf("%q: want an error", text)
		}
	}
	m, err := parseMBMaps("# x\nsjis 815F 005C\ncp932 F040 E000 3\n")
	if err != nil || m["sjis"][0x815f] != '\\' || m["cp932"][0xf042] != 0xe002 || len(m["cp932"]) != 3 {
		t.Errorf("got %v %v", m, err)
	}
}
