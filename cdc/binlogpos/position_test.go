package binlogpos

import (
	"reflect"
	"testing"
)

func TestPositionStringRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		pos  Position
		text string
	}{
		{name: "zero", pos: Position{}, text: ""},
		{name: "file", pos: Position{File: "mariadb-bin.000003", Offset: 2689}, text: "file=mariadb-bin.000003:2689"},
		{
			name: "mariadb",
			pos:  Position{File: "mariadb-bin.000003", Offset: 4, MariaDB: []GTID{{0, 1, 29}, {7, 1, 1}}},
			text: "file=mariadb-bin.000003:4;mariadb-gtid=0-1-29,7-1-1",
		},
		{
			name: "mysql",
			pos:  Position{MySQL: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7"},
			text: "mysql-gtid=3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.pos.String(); got != tc.text {
				t.Fatalf("String() = %q, want %q", got, tc.text)
			}
			back, err := ParsePosition(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.pos) {
				t.Fatalf("ParsePosition(%q) = %#v, want %#v", tc.text, back, tc.pos)
			}
		})
	}
}

func TestParsePositionShortForms(t *testing.T) {
	tests := []struct {
		in   string
		want Position
	}{
		{"mariadb-bin.000001:4", Position{File: "mariadb-bin.000001", Offset: 4}},
		{"7-1-1, 0-2-28", Position{MariaDB: []GTID{{0, 2, 28}, {7, 1, 1}}}},
		{"3E11FA47-71CA-11E1-9E33-C80AA9429562:3-5:1-2:9", Position{MySQL: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:9"}},
		{"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-3:blue:1-2", Position{MySQL: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-3,3e11fa47-71ca-11e1-9e33-c80aa9429562:blue:1-2"}},
	}
	for _, tc := range tests {
		got, err := ParsePosition(tc.in)
		if err != nil {
			t.Fatalf("ParsePosition(%q): %v", tc.in, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParsePosition(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

func TestParsePositionErrors(t *testing.T) {
	for _, in := range []string{
		"file=", "file=:4", "file=a:-1", "file=a:4;file=b:5", "mariadb-gtid=0-1-1,0-2-2",
		"mariadb-gtid=", "x=1", "file=a:4;", "0-1", "mysql-gtid=zz:1", "file=a:01",
	} {
		if p, err := ParsePosition(in); err == nil {
			t.Errorf("ParsePosition(%q) = %#v, want an error", in, p)
		}
	}
}

func TestPositionCompare(t *testing.T) {
	mk := func(s string) Position {
		p, err := ParsePosition(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		a, b   string
		c      int
		wantOK bool
	}{
		{"mariadb-bin.000002:4", "mariadb-bin.000010:4", -1, true},
		{"mariadb-bin.000002:900", "mariadb-bin.000002:4", 1, true},
		{"0-1-5,7-1-1", "0-2-5,7-1-1", 0, true},
		{"0-1-6,7-1-1", "0-2-5", 1, true},
		{"0-1-6", "0-1-5,7-1-1", 0, false},
		{"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-3", 1, true},
		{"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", "mariadb-bin.000002:4", 0, false},
	}
	for _, tc := range tests {
		c, ok := mk(tc.a).Compare(mk(tc.b))
		if c != tc.c || ok != tc.wantOK {
			t.Errorf("Compare(%s, %s) = %d, %v; want %d, %v", tc.a, tc.b, c, ok, tc.c, tc.wantOK)
		}
	}
	if !mk("0-1-6").After(mk("0-1-5")) || mk("0-1-5").After(mk("0-1-5")) {
		t.Error("After disagrees with Compare")
	}
}

// TestCompareBinlogFiles checks that binlog file names are ordered by the number of their
// extension, never as strings, and that names of different logs are not ordered at all.
func TestCompareBinlogFiles(t *testing.T) {
	tests := []struct {
		a, b string
		c    int
		ok   bool
	}{
		{"mariadb-bin.000010", "mariadb-bin.000009", 1, true},
		{"mariadb-bin.000009", "mariadb-bin.000010", -1, true},
		{"mariadb-bin.1000000", "mariadb-bin.999999", 1, true},
		{"mariadb-bin.000002", "mariadb-bin.2", 0, true},
		{"mariadb-bin.000002", "mariadb-bin.000002", 0, true},
		{"nosuch.000001", "mariadb-bin.000001", 0, false},
		{"mariadb-bin.000001", "mariadb-bin.index", 0, false},
		{"a.b.000003", "a.b.000012", -1, true},
	}
	for _, tc := range tests {
		c, ok := CompareBinlogFiles(tc.a, tc.b)
		if c != tc.c || ok != tc.ok {
			t.Errorf("compareBinlogFiles(%s, %s) = %d, %v; want %d, %v", tc.a, tc.b, c, ok, tc.c, tc.ok)
		}
	}
	// Through Position: the offset only counts within one file.
	p := Position{File: "mariadb-bin.000010", Offset: 4}
	q := Position{File: "mariadb-bin.000009", Offset: 90000}
	if c, ok := p.Compare(q); c != 1 || !ok {
		t.Errorf("%s vs %s = %d, %v; want 1, true", p, q, c, ok)
	}
	if _, ok := (Position{File: "nosuch.000001", Offset: 4}).Compare(q); ok {
		t.Error("positions in binlogs of different names compare as ordered")
	}
}

func TestWithGTID(t *testing.T) {
	set := []GTID{{0, 1, 5}, {7, 1, 1}}
	got := WithGTID(WithGTID(WithGTID(set, GTID{0, 2, 6}), GTID{3, 1, 1}), GTID{9, 1, 1})
	want := []GTID{{0, 2, 6}, {3, 1, 1}, {7, 1, 1}, {9, 1, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if set[0] != (GTID{0, 1, 5}) {
		t.Fatal("withGTID modified its input")
	}
}

func FuzzParsePosition(f *testing.F) {
	for _, s := range []string{
		"", "file=mariadb-bin.000003:2689;mariadb-gtid=0-1-29,7-1-1", "a:1", "0-1-2",
		"mysql-gtid=3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7-9:tag:3",
		"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", "file=x=y:0;mysql-gtid=3e11fa47-71ca-11e1-9e33-c80aa9429562:1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePosition(s)
		if err != nil {
			return
		}
		text := p.String()
		q, err := ParsePosition(text)
		if err != nil {
			t.Fatalf("ParsePosition(%q) (from %q): %v", text, s, err)
		}
		if !reflect.DeepEqual(p, q) || q.String() != text {
			t.Fatalf("round trip of %q: %#v then %#v", s, p, q)
		}
	})
}
