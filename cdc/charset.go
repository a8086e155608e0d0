package cdc

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/encoding/unicode/utf32"
)

// binaryCollation is the id of the "binary" collation: BINARY, VARBINARY and BLOB columns.
const binaryCollation = 63

// knownCollations maps the collation ids that are the same on MySQL and MariaDB to their
// character set. The source completes it from information_schema.COLLATIONS on connect.
var knownCollations = map[uint64]string{
	1: "big5", 3: "dec8", 4: "cp850", 5: "latin1", 6: "hp8", 7: "koi8r", 8: "latin1", 9: "latin2",
	10: "swe7", 11: "ascii", 12: "ujis", 13: "sjis", 14: "cp1251", 15: "latin1", 16: "hebrew",
	18: "tis620", 19: "euckr", 20: "latin7", 21: "latin2", 22: "koi8u", 23: "cp1251", 24: "gb2312",
	25: "greek", 26: "cp1250", 27: "latin2", 28: "gbk", 29: "cp1257", 30: "latin5", 31: "latin1",
	32: "armscii8", 33: "utf8mb3", 34: "cp1250", 35: "ucs2", 36: "cp866", 37: "keybcs2",
	38: "macce", 39: "macroman", 40: "cp852", 41: "latin7", 42: "latin7", 43: "macce",
	44: "cp1250", 45: "utf8mb4", 46: "utf8mb4", 47: "latin1", 48: "latin1", 49: "latin1",
	50: "cp1251", 51: "cp1251", 52: "cp1251", 53: "macroman", 54: "utf16", 55: "utf16",
	56: "utf16le", 57: "cp1256", 58: "cp1257", 59: "cp1257", 60: "utf32", 61: "utf32",
	62: "utf16le", 63: "binary", 64: "armscii8", 65: "ascii", 66: "cp1250", 67: "cp1256",
	68: "cp866", 69: "dec8", 70: "greek", 71: "hebrew", 72: "hp8", 73: "keybcs2", 74: "koi8r",
	75: "koi8u", 77: "latin2", 78: "latin5", 79: "latin7", 80: "cp850", 81: "cp852", 82: "swe7",
	83: "utf8mb3", 84: "big5", 85: "euckr", 86: "gb2312", 87: "gbk", 88: "sjis", 89: "tis620",
	90: "ucs2", 91: "ujis", 92: "geostd8", 93: "geostd8", 94: "latin1", 95: "cp932", 96: "cp932",
	97: "eucjpms", 98: "eucjpms", 99: "cp1250", 248: "gb18030", 249: "gb18030", 250: "gb18030",
}

// charsetFor returns the character set of a collation id, or "" when unknown.
func charsetFor(collations map[uint64]string, id uint64) string {
	if cs, ok := collations[id]; ok {
		return cs
	}
	if id >= 192 && id < 248 || id >= 576 && id < 672 {
		// MySQL and MariaDB number their UCA and MariaDB-specific utf8 collations in these ranges.
		if id < 224 {
			return "utf8mb3"
		}
		return "utf8mb4"
	}
	return knownCollations[id]
}

// decoder turns the bytes of a column's character set into UTF-8.
type decoder interface {
	decode(b []byte) ([]byte, error)
}

// decoderFor returns the decoder of a character set, or nil when the bytes are already
// UTF-8 (utf8mb3, utf8mb4, ascii) or binary.
func decoderFor(charset string) (decoder, error) {
	switch cs := strings.ToLower(charset); cs {
	case "", "utf8", "utf8mb3", "utf8mb4", "binary", "ascii":
		return nil, nil
	case "latin1":
		return latin1Decoder{}, nil
	default:
		enc := xtextEncodings[cs]
		if enc == nil {
			return nil, fmt.Errorf("character set %s is not supported", charset)
		}
		return xtextDecoder{enc}, nil
	}
}

var xtextEncodings = map[string]encoding.Encoding{
	"latin2": charmap.ISO8859_2, "latin5": charmap.ISO8859_9, "latin7": charmap.ISO8859_13,
	"greek": charmap.ISO8859_7, "hebrew": charmap.ISO8859_8, "cp1250": charmap.Windows1250,
	"cp1251": charmap.Windows1251, "cp1256": charmap.Windows1256, "cp1257": charmap.Windows1257,
	"cp850": charmap.CodePage850, "cp852": charmap.CodePage852, "cp866": charmap.CodePage866,
	"koi8r": charmap.KOI8R, "koi8u": charmap.KOI8U, "macroman": charmap.Macintosh,
	"tis620": charmap.Windows874, "gbk": simplifiedchinese.GBK, "gb2312": simplifiedchinese.GBK,
	"gb18030": simplifiedchinese.GB18030, "big5": traditionalchinese.Big5,
	"sjis": japanese.ShiftJIS, "cp932": japanese.ShiftJIS, "ujis": japanese.EUCJP,
	"eucjpms": japanese.EUCJP, "euckr": korean.EUCKR,
	"utf16":   unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM),
	"ucs2":    unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM),
	"utf16le": unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM),
	"utf32":   utf32.UTF32(utf32.BigEndian, utf32.IgnoreBOM),
}

type xtextDecoder struct{ enc encoding.Encoding }

func (d xtextDecoder) decode(b []byte) ([]byte, error) {
	return d.enc.NewDecoder().Bytes(b)
}

// latin1Table is MySQL's latin1: Windows-1252, except that the five bytes 1252 leaves
// undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) map to the C1 controls of the same number.
var latin1Table = func() (t [128]rune) {
	for i := range t {
		t[i] = charmap.Windows1252.DecodeByte(byte(0x80 + i))
		if t[i] == utf8.RuneError {
			t[i] = rune(0x80 + i)
		}
	}
	return t
}()

type latin1Decoder struct{}

func (latin1Decoder) decode(b []byte) ([]byte, error) {
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return b, nil
	}
	out := make([]byte, 0, len(b)+len(b)/2)
	for _, c := range b {
		if c < 0x80 {
			out = append(out, c)
			continue
		}
		out = utf8.AppendRune(out, latin1Table[c-0x80])
	}
	return out, nil
}
