package schema

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/encoding/unicode/utf32"
)

// The multi-byte character sets decode with golang.org/x/text, corrected where MariaDB maps
// a character otherwise (mbmaps.txt): big5, sjis, ujis, and the user-defined areas of cp932
// and eucjpms, which MariaDB maps to the Private Use Area.

var xtextEncodings = map[string]encoding.Encoding{
	"gbk": simplifiedchinese.GBK, "gb2312": simplifiedchinese.GBK,
	"gb18030": simplifiedchinese.GB18030, "big5": traditionalchinese.Big5,
	"sjis": japanese.ShiftJIS, "cp932": japanese.ShiftJIS, "ujis": japanese.EUCJP,
	"eucjpms": japanese.EUCJP, "euckr": korean.EUCKR,
	"utf16":   unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM),
	"ucs2":    unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM),
	"utf16le": unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM),
	"utf32":   utf32.UTF32(utf32.BigEndian, utf32.IgnoreBOM),
}

// seqLens give the byte length of the character a byte starts, in the sets that have
// corrections (MariaDB's ctype-*.c: the lead bytes of each set).
var seqLens = map[string]func(b byte) int{
	"big5":    func(b byte) int { return 1 + b2i(b >= 0xa1 && b <= 0xf9) },
	"gb2312":  func(b byte) int { return 1 + b2i(b >= 0xa1 && b <= 0xf7) },
	"gbk":     func(b byte) int { return 1 + b2i(b >= 0x81 && b <= 0xfe) },
	"euckr":   func(b byte) int { return 1 + b2i(b >= 0x81 && b <= 0xfe) },
	"sjis":    sjisLen,
	"cp932":   sjisLen,
	"ujis":    eucJPLen,
	"eucjpms": eucJPLen,
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func sjisLen(b byte) int { return 1 + b2i(b >= 0x81 && b <= 0x9f || b >= 0xe0 && b <= 0xfc) }

func eucJPLen(b byte) int {
	switch {
	case b == 0x8f:
		return 3
	case b == 0x8e || b >= 0xa1 && b <= 0xfe:
		return 2
	}
	return 1
}

// mbmapsText holds the corrections (see its header); TestMultiByteMatchesServer
// (charset_integration_test.go) writes it from the server.
//
//go:embed mbmaps.txt
var mbmapsText string

var mbmaps = func() map[string]map[uint32]rune {
	m, err := parseMBMaps(mbmapsText)
	if err != nil {
		panic("cdc: mbmaps.txt: " + err.Error())
	}
	return m
}()

func parseMBMaps(text string) (map[string]map[uint32]rune, error) {
	m := map[string]map[uint32]rune{}
	for i, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 || len(f) > 4 || seqLens[f[0]] == nil || len(f[1]) < 4 || len(f[1]) > 6 {
			return nil, fmt.Errorf("line %d: want a set with corrections, 2 or 3 bytes, a code point and a count", i+1)
		}
		seq, err1 := strconv.ParseUint(f[1], 16, 32)
		r, err2 := strconv.ParseUint(f[2], 16, 32)
		count := uint64(1)
		var err3 error
		if len(f) == 4 {
			count, err3 = strconv.ParseUint(f[3], 10, 16)
		}
		if err1 != nil || err2 != nil || err3 != nil || count == 0 || r+count > 0x110000 {
			return nil, fmt.Errorf("line %d: bad numbers", i+1)
		}
		if m[f[0]] == nil {
			m[f[0]] = map[uint32]rune{}
		}
		for k := range count {
			m[f[0]][uint32(seq+k)] = rune(r + k)
		}
	}
	return m, nil
}

// mbDecoder decodes with x/text and the server's corrections.
type mbDecoder struct {
	enc    encoding.Encoding
	fixes  map[uint32]rune
	seqLen func(byte) int
}

func (d mbDecoder) decode(b []byte) ([]byte, error) {
	var out []byte
	start := 0 // of the bytes not yet decoded
	for i := 0; i < len(b); {
		n := d.seqLen(b[i])
		if n == 1 || i+n > len(b) {
			i++
			continue
		}
		var key uint32
		for _, c := range b[i : i+n] {
			key = key<<8 | uint32(c)
		}
		if r, ok := d.fixes[key]; ok {
			run, err := d.enc.NewDecoder().Bytes(b[start:i])
			if err != nil {
				return nil, err
			}
			out = append(append(out, run...), string(r)...)
			start = i + n
		}
		i += n
	}
	if start == 0 {
		return d.enc.NewDecoder().Bytes(b)
	}
	tail, err := d.enc.NewDecoder().Bytes(b[start:])
	return append(out, tail...), err
}
