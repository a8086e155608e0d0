package schema

import (
	"bytes"
	"math"
	"testing"
)

// leN is le with the size first.
func leN(size int, n uint64) []byte {
	b := make([]byte, size)
	for i := range size {
		b[i] = byte(n >> (8 * i))
	}
	return b
}

// binDate builds a binary DATE/DATETIME/TIMESTAMP of the given length (0, 4, 7 or 11).
func binDate(n, y, mo, d, h, mi, s, us int) []byte {
	b := append(leN(2, uint64(y)), byte(mo), byte(d), byte(h), byte(mi), byte(s))
	b = append(b, leN(4, uint64(us))...)
	return b[:n]
}

// binTime builds a binary TIME of the given length (0, 8 or 12).
func binTime(n int, neg bool, days, h, m, s, us int) []byte {
	b := []byte{0}
	if neg {
		b[0] = 1
	}
	b = append(append(b, leN(4, uint64(days))...), byte(h), byte(m), byte(s))
	return append(b, leN(4, uint64(us))...)[:n]
}

// TestFromBinary checks every fixed form against the text the text protocol sends for the
// same value: FromBinary must equal FromText of that text, and BinaryText must render it.
func TestFromBinary(t *testing.T) {
	tests := []struct {
		name string
		col  *Column
		in   []byte
		text string // what the text protocol sends; "" when BinaryText does not apply
		want string
	}{
		{"tinyint", infoCol(t, "tinyint", "tinyint(4)", "", 0, 0), []byte{0x80}, "-128", "int:-128"},
		{"tinyint unsigned", infoCol(t, "tinyint", "tinyint(3) unsigned", "", 0, 0), []byte{0xff}, "255", "uint:255"},
		{"tinyint(1)", infoCol(t, "tinyint", "tinyint(1)", "", 0, 0), []byte{5}, "5", "bool:true"},
		{"smallint", infoCol(t, "smallint", "smallint(6)", "", 0, 0), leN(2, 0x8000), "-32768", "int:-32768"},
		{"smallint unsigned", infoCol(t, "smallint", "smallint(5) unsigned", "", 0, 0), leN(2, 0xffff), "65535", "uint:65535"},
		{"mediumint", infoCol(t, "mediumint", "mediumint(9)", "", 0, 0), leN(4, 0xff800000), "-8388608", "int:-8388608"},
		{"mediumint unsigned", infoCol(t, "mediumint", "mediumint(8) unsigned", "", 0, 0), leN(4, 0xffffff), "16777215", "uint:16777215"},
		{"int", infoCol(t, "int", "int(11)", "", 0, 0), leN(4, 0x80000000), "-2147483648", "int:-2147483648"},
		{"int unsigned", infoCol(t, "int", "int(10) unsigned", "", 0, 0), leN(4, 0xffffffff), "4294967295", "uint:4294967295"},
		{"bigint", infoCol(t, "bigint", "bigint(20)", "", 0, 0), leN(8, 1<<63), "-9223372036854775808", "int:-9223372036854775808"},
		{"bigint unsigned", infoCol(t, "bigint", "bigint(20) unsigned", "", 0, 0), leN(8, math.MaxUint64), "18446744073709551615", "uint:18446744073709551615"},
		{"year", infoCol(t, "year", "year(4)", "", 0, 0), leN(2, 2024), "2024", "int:2024"},
		{"year zero", infoCol(t, "year", "year(4)", "", 0, 0), leN(2, 0), "0000", "int:0"},
		{"float", infoCol(t, "float", "float", "", 0, 0), leN(4, uint64(math.Float32bits(123.456789))), "", "float32:123.45679"},
		{"float as double", infoCol(t, "float", "float", "", 0, 0), leN(8, math.Float64bits(float64(float32(123.456789)))), "", "float32:123.45679"},
		{"double", infoCol(t, "double", "double", "", 0, 0), leN(8, math.Float64bits(2.718281828459045)), "", "float64:2.718281828459045"},
		{"date", infoCol(t, "date", "date", "", 0, 0), binDate(4, 2024, 2, 29, 0, 0, 0, 0), "2024-02-29", "date:2024-02-29"},
		{"date zero", infoCol(t, "date", "date", "", 0, 0), nil, "0000-00-00", "null:"},
		{"datetime", infoCol(t, "datetime", "datetime", "", 0, 0), binDate(7, 2024, 2, 29, 13, 14, 15, 0), "2024-02-29 13:14:15", "datetime:2024-02-29 13:14:15.000000"},
		{"datetime midnight", infoCol(t, "datetime", "datetime", "", 0, 0), binDate(4, 2024, 2, 29, 0, 0, 0, 0), "2024-02-29 00:00:00", "datetime:2024-02-29 00:00:00.000000"},
		{"datetime(6)", infoCol(t, "datetime", "datetime(6)", "", 6, 0), binDate(11, 2024, 2, 29, 13, 14, 15, 123456), "2024-02-29 13:14:15.123456", "datetime:2024-02-29 13:14:15.123456"},
		{"datetime(6) whole second", infoCol(t, "datetime", "datetime(6)", "", 6, 0), binDate(7, 1000, 1, 1, 0, 0, 1, 0), "1000-01-01 00:00:01.000000", "datetime:1000-01-01 00:00:01.000000"},
		{"datetime zero", infoCol(t, "datetime", "datetime", "", 0, 0), nil, "0000-00-00 00:00:00", "null:"},
		{"datetime zero month", infoCol(t, "datetime", "datetime(6)", "", 6, 0), binDate(7, 2024, 0, 15, 10, 0, 0, 0), "2024-00-15 10:00:00.000000", "null:"},
		{"timestamp(3)", infoCol(t, "timestamp", "timestamp(3)", "", 3, 0), binDate(11, 2024, 1, 2, 3, 4, 5, 678000), "2024-01-02 03:04:05.678", "timestamp:2024-01-02 03:04:05.678000Z"},
		{"timestamp zero", infoCol(t, "timestamp", "timestamp", "", 0, 0), nil, "0000-00-00 00:00:00", "null:"},
		{"time negative", infoCol(t, "time", "time", "", 0, 0), binTime(8, true, 34, 22, 59, 59, 0), "-838:59:59", "time:-838:59:59.000000"},
		{"time(3)", infoCol(t, "time", "time(3)", "", 3, 0), binTime(12, false, 4, 4, 0, 0, 500000), "100:00:00.500", "time:100:00:00.500000"},
		{"time negative fraction", infoCol(t, "time", "time(6)", "", 6, 0), binTime(12, true, 0, 0, 0, 0, 1), "-00:00:00.000001", "time:-00:00:00.000001"},
		{"time zero", infoCol(t, "time", "time", "", 0, 0), nil, "00:00:00", "time:00:00:00.000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := tt.col.FromBinary(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := DescribeValue(v); got != tt.want {
				t.Errorf("FromBinary(% x) = %s, want %s", tt.in, got, tt.want)
			}
			if tt.text == "" {
				return
			}
			text, err := tt.col.BinaryText(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(text) != tt.text {
				t.Errorf("BinaryText(% x) = %q, want %q", tt.in, text, tt.text)
			}
			fromText, err := tt.col.FromText([]byte(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			if fromText.Kind != v.Kind || fromText.Num != v.Num || !bytes.Equal(fromText.Bytes, v.Bytes) {
				t.Errorf("FromText(%q) = %s, FromBinary = %s", tt.text, DescribeValue(fromText), DescribeValue(v))
			}
		})
	}
}

func TestFromBinaryErrors(t *testing.T) {
	tests := []struct {
		name string
		col  *Column
		in   []byte
	}{
		{"int of 3 bytes", infoCol(t, "int", "int(11)", "", 0, 0), []byte{1, 2, 3}},
		{"double of 4 bytes", infoCol(t, "double", "double", "", 0, 0), leN(4, 0)},
		{"date of 5 bytes", infoCol(t, "date", "date", "", 0, 0), make([]byte, 5)},
		{"datetime hour 24", infoCol(t, "datetime", "datetime", "", 0, 0), binDate(7, 2024, 1, 1, 24, 0, 0, 0)},
		{"time of 7 bytes", infoCol(t, "time", "time", "", 0, 0), make([]byte, 7)},
		{"time minute 60", infoCol(t, "time", "time", "", 0, 0), binTime(8, false, 0, 0, 60, 0, 0)},
		{"varchar", infoCol(t, "varchar", "varchar(10)", "utf8mb4", 0, 0), []byte("abc")},
		{"decimal", infoCol(t, "decimal", "decimal(5,2)", "", 2, 0), []byte("4.50")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if v, err := tt.col.FromBinary(tt.in); err == nil {
				t.Errorf("FromBinary(% x) = %s, want an error", tt.in, DescribeValue(v))
			}
			if _, err := tt.col.BinaryText(tt.in); err == nil {
				t.Errorf("BinaryText(% x) gave no error", tt.in)
			}
		})
	}
}

// FuzzFromBinary checks that any bytes either fail or decode to what the text they render
// as decodes to.
func FuzzFromBinary(f *testing.F) {
	cols := []*Column{}
	for _, c := range []struct {
		dataType, columnType string
		scale                int
	}{
		{"int", "int(11)", 0}, {"bigint", "bigint(20) unsigned", 0}, {"year", "year(4)", 0},
		{"date", "date", 0}, {"datetime", "datetime(6)", 6}, {"timestamp", "timestamp(2)", 2},
		{"time", "time(4)", 4}, {"time", "time", 0}, {"tinyint", "tinyint(1)", 0},
	} {
		col, err := columnFromInfo(InfoColumn{Name: "c", DataType: c.dataType, ColumnType: c.columnType, Scale: c.scale},
			Options{TinyInt1AsBool: true})
		if err != nil {
			f.Fatal(err)
		}
		cols = append(cols, &col)
	}
	f.Add(uint8(4), binDate(11, 2024, 2, 29, 13, 14, 15, 123456))
	f.Add(uint8(6), binTime(12, true, 34, 22, 59, 59, 999999))
	f.Add(uint8(0), leN(4, 7))
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		col := cols[int(which)%len(cols)]
		v, err := col.FromBinary(b)
		if err != nil {
			return
		}
		text, err := col.BinaryText(b)
		if err != nil {
			t.Fatalf("FromBinary(% x) = %s but BinaryText fails: %v", b, DescribeValue(v), err)
		}
		fromText, err := col.FromText(text)
		if err != nil {
			t.Fatalf("BinaryText(% x) = %q, which FromText refuses: %v", b, text, err)
		}
		if fromText.Kind != v.Kind || fromText.Num != v.Num || !bytes.Equal(fromText.Bytes, v.Bytes) {
			t.Fatalf("% x: FromBinary %s, FromText(%q) %s", b, DescribeValue(v), text, DescribeValue(fromText))
		}
	})
}
