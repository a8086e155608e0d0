package upsert

import (
	"encoding/binary"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/ingestkit/ingest/change"
)

// FuzzEncode builds a row of arbitrary kinds and values from the input and checks that
// encoding never panics and that every key and value it returns is valid JSON.
func FuzzEncode(f *testing.F) {
	f.Add([]byte{}, "id", uint8(0))
	f.Add([]byte{byte(change.String), 3, 'a', '"', 0x01, byte(change.Int), 8, 1, 2, 3, 4, 5, 6, 7, 8}, "naïve\n", uint8(3))
	f.Add([]byte{byte(change.Decimal), 4, '-', '1', '.', '5', byte(change.JSON), 2, '{', '}'}, "k", uint8(1))
	f.Add([]byte{byte(change.Float64), 8, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1, byte(change.Timestamp), 8, 0x80, 0, 0, 0, 0, 0, 0, 0}, "t", uint8(7))
	f.Add([]byte{byte(change.String), 2, 0xff, 0xc3, byte(change.Time), 8, 0x80, 0, 0, 0, 0, 0, 0, 0}, "\xff", uint8(15))
	f.Fuzz(func(t *testing.T, data []byte, name string, opts uint8) {
		row := fuzzRow(data)
		if len(row) == 0 {
			row = change.Row{{}}
		}
		s := &change.Schema{Table: change.TableID{DB: "d", Table: "t"}, Key: []int{0}}
		for range row {
			s.Columns = append(s.Columns, change.Column{Name: name})
		}
		if len(row) > 1 {
			s.Key = append(s.Key, len(row)-1)
		}
		enc := NewEncoder(EncodeOptions{
			Timestamps: TimestampStandard(opts & 1), JSONAsObject: opts&2 != 0, DecimalAsString: opts&4 != 0,
			TableHeaders: opts&8 != 0, CustomHeaders: []Header{{Key: name, Value: name}},
		})
		for _, op := range []change.Op{change.Insert, change.Update, change.Delete} {
			msgs, err := enc.Encode(nil, &change.Change{Schema: s, Op: op, Before: row, After: row}, commitTime)
			if err != nil {
				continue // invalid decimal or JSON text is refused, not mangled
			}
			for _, m := range msgs {
				if !json.Valid(m.Key) {
					t.Fatalf("%v: invalid key %q", op, m.Key)
				}
				if m.Value != nil && !json.Valid(m.Value) {
					t.Fatalf("%v: invalid value %q", op, m.Value)
				}
			}
		}
	})
}

// fuzzRow reads values as kind byte, length byte, payload; numeric kinds take 8 bytes.
func fuzzRow(data []byte) change.Row {
	var row change.Row
	for len(data) >= 2 {
		kind := change.Kind(data[0] % 15)
		n := int(data[1])
		data = data[2:]
		if n > len(data) {
			n = len(data)
		}
		payload := data[:n]
		data = data[n:]
		v := change.Value{Kind: kind}
		switch kind {
		case change.Decimal, change.String, change.Bytes, change.JSON, change.Geometry:
			v.Bytes = payload
		default:
			var num [8]byte
			copy(num[:], payload)
			v.Num = binary.BigEndian.Uint64(num[:])
		}
		if kind == change.Date || kind == change.DateTime {
			// Keep the packed parts in range, as the constructors do.
			y, mo, d := int(v.Num%10000), int(v.Num>>14%12)+1, int(v.Num>>18%31)+1
			h, mi, s, us := int(v.Num>>23%24), int(v.Num>>28%60), int(v.Num>>34%60), int(v.Num>>40%1000000)
			if kind == change.Date {
				v = change.DateValue(y+1, mo, d)
			} else {
				v = change.DateTimeValue(y+1, mo, d, h, mi, s, us)
			}
		}
		row = append(row, v)
	}
	return row
}

// FuzzAppendString checks appendString, which skips plain bytes 8 at a time, against a
// rune-by-rune reading of its rules.
func FuzzAppendString(f *testing.F) {
	f.Add([]byte(`{"color":"green","tags":["a","t7"]}`))
	f.Add([]byte("naïve \x01\xff\xc3 text with a \\ and \"quotes\" past eight bytes"))
	f.Fuzz(func(t *testing.T, s []byte) {
		var want []byte
		want = append(want, '"')
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRune(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				want = append(want, "\uFFFD"...)
			case r < utf8.RuneSelf && escape[r] != 0:
				want = appendEscape(want, byte(r))
			default:
				want = append(want, s[i:i+size]...)
			}
			i += size
		}
		want = append(want, '"')
		if got := appendString([]byte("x"), s); string(got[1:]) != string(want) {
			t.Fatalf("appendString(%q) = %q, want %q", s, got[1:], want)
		}
	})
}
