package chaos

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestQuoteJSON(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:       `"plain"`,
		`a"b\c`:       `"a\"b\\c"`,
		"\b\t\n\f\r":  `"\b\t\n\f\r"`,
		"\x01\x1f":    `"\u0001\u001F"`,
		"é🚀漢":         `"é🚀漢"`,
		"<&>\u2028'":  "\"<&>\u2028'\"",
		"\x7f":        "\"\x7f\"",
		"":            `""`,
		`d"q\`:        `"d\"q\\"`,
		"tab\tin the": `"tab\tin the"`,
	} {
		if got := string(QuoteJSON(in)); got != want {
			t.Errorf("QuoteJSON(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestRenderValue(t *testing.T) {
	for _, c := range []struct {
		typ, raw, want string
		null           bool
	}{
		{typ: "int", raw: "-42", want: "-42"},
		{typ: "bigint", raw: "9007199254740993", want: "9007199254740993"},
		{typ: "decimal", raw: "4.50", want: "4.50"},
		{typ: "decimal", raw: "-0.05", want: "-0.05"},
		{typ: "varchar", raw: "a\"b", want: `"a\"b"`},
		{typ: "datetime", raw: "2024-02-29 13:14:15.120", want: `"2024-02-29 13:14:15.12"`},
		{typ: "datetime", raw: "2024-02-29 13:14:15.000", want: `"2024-02-29 13:14:15"`},
		{typ: "datetime", raw: "2024-02-29 13:14:15", want: `"2024-02-29 13:14:15"`},
		{typ: "datetime", raw: "0000-00-00 00:00:00.000", want: "null"},
		{typ: "datetime", raw: "2024-00-15 00:00:00", want: "null"},
		{typ: "int", null: true, want: "null"},
	} {
		var raw []byte
		if !c.null {
			raw = []byte(c.raw)
		}
		got, err := RenderValue(c.typ, raw)
		if err != nil || string(got) != c.want {
			t.Errorf("RenderValue(%s, %q) = %s, %v; want %s", c.typ, c.raw, got, err, c.want)
		}
	}
	if _, err := RenderValue("json", []byte("{}")); err == nil {
		t.Error("RenderValue accepted a type the checker does not know")
	}
}

// testChecker is a checker without a Kafka client, fed by hand.
func testChecker(topic string) *Checker {
	return &Checker{topics: []string{topic}, next: map[string]map[int32]int64{topic: {}},
		keys: map[string]map[string]*history{topic: {}}, baseline: map[string]*baseline{}}
}

// feed adds records to c: "key=value" with "key=" for a tombstone, all in partition p.
func feed(c *Checker, topic string, p int32, recs ...string) {
	for i, r := range recs {
		k, v, _ := strings.Cut(r, "=")
		rec := &kgo.Record{Topic: topic, Partition: p, Offset: int64(i), Key: []byte(k)}
		if v != "" {
			rec.Value = []byte(v)
		}
		c.add(rec)
	}
}

var testColumns = []Column{{"id", "int"}, {"v", "varchar"}, {"version", "bigint"}, {"x1", "int"}}

// table renders rows given as raw column values (nil for NULL).
func table(t *testing.T, rows ...[]string) *Table {
	t.Helper()
	tab := &Table{Columns: testColumns, Key: []string{"id"}, Rows: map[string]Row{}}
	for _, r := range rows {
		raw := make([]sql.RawBytes, len(r))
		for i, v := range r {
			if v != "NULL" {
				raw[i] = sql.RawBytes(v)
			}
		}
		row, err := renderRow(testColumns, tab.Key, raw)
		if err != nil {
			t.Fatal(err)
		}
		tab.Rows[string(row.Key)] = row
	}
	return tab
}

func compare(c *Checker, topic string, tab *Table) *Report {
	rep := &Report{Bad: c.bad}
	c.compareTable(rep, topic, tab, CompareOptions{Optional: OptionalColumn})
	return rep
}

func TestCheckerAgrees(t *testing.T) {
	c := testChecker("t")
	feed(c, "t", 0,
		`{"id":1}={"id":1,"v":"a","version":1}`,           // before x1 was added
		`{"id":2}={"id":2,"v":"b","version":1,"x1":7}`,    // after
		`{"id":2}={"id":2,"v":"b\"2","version":2,"x1":7}`, // updated
		`{"id":3}={"id":3,"v":null,"version":1,"x1":7}`,   //
		`{"id":3}=`, // deleted
		`{"id":4}={"id":4,"v":"moved","version":5,"x1":7}`,  // a primary-key change
		`{"id":5}={"id":5,"v":"gone","version":1,"x9":"z"}`, // x9 dropped since
	)
	rep := compare(c, "t", table(t,
		[]string{"1", "a", "1", "7"},
		[]string{"2", `b"2`, "2", "7"},
		[]string{"4", "moved", "5", "7"},
		[]string{"5", "gone", "1", "7"},
	))
	if err := rep.Err(NoDuplicates); err != nil {
		t.Fatal(err)
	}
}

func TestCheckerFindsWrongState(t *testing.T) {
	c := testChecker("t")
	feed(c, "t", 0,
		`{"id":1}={"id":1,"v":"old","version":1,"x1":7}`, // a stale value
		`{"id":3}={"id":3,"v":"c","version":1,"x1":7}`,   // deleted in the table, no tombstone
		`{"id":4}={"id":4,"version":1,"x1":7}`,           // a column that must be there is missing
		`{"id":5}={"id":5,"x1":7,"v":"e","version":1}`,   // columns out of order
		`{"id":6}={"id":7,"v":"f","version":1,"x1":7}`,   // the value is another key's
	)
	feed(c, "t", 1, `{"id":1}={"id":1,"v":"new","version":2,"x1":7}`) // key 1 in two partitions
	rep := compare(c, "t", table(t,
		[]string{"1", "newer", "3", "7"},
		[]string{"2", "b", "1", "7"}, // never written
		[]string{"4", "d", "1", "7"},
		[]string{"5", "e", "1", "7"},
		[]string{"6", "f", "1", "7"},
	))
	if rep.Different.N != 3 || rep.Missing.N != 2 || rep.Extra.N != 1 || rep.Split.N != 1 || rep.Bad.N != 1 {
		t.Fatalf("report %s, split %d, bad %d:\n%v", rep, rep.Split.N, rep.Bad.N, rep.Err(NoDuplicates))
	}
}

func TestCheckerDuplicatesAndLostChanges(t *testing.T) {
	c := testChecker("t")
	c.baseline["t"] = &baseline{versions: map[string]int64{`{"id":1}`: 2, `{"id":2}`: 1}, maxID: 2}
	feed(c, "t", 0,
		`{"id":1}={"id":1,"v":"a","version":2,"x1":7}`,
		`{"id":1}={"id":1,"v":"a","version":3,"x1":7}`,
		`{"id":1}={"id":1,"v":"a","version":3,"x1":7}`, // a duplicate
		`{"id":1}={"id":1,"v":"a","version":5,"x1":7}`, // version 4 lost
		`{"id":2}={"id":2,"v":"b","version":1,"x1":7}`,
		`{"id":2}=`,
		`{"id":2}=`, // a duplicate tombstone
		`{"id":9}={"id":9,"v":"n","version":1,"x1":7}`, // created after the baseline
		`{"id":9}={"id":9,"v":"n","version":3,"x1":7}`, // version 2 lost
	)
	rep := compare(c, "t", table(t, []string{"1", "a", "5", "7"}, []string{"9", "n", "3", "7"}))
	if !rep.Equal() || rep.Duplicates.N != 2 || rep.LostChanges != 2 || rep.Lost.N != 2 {
		t.Fatalf("report %s:\n%v", rep, rep.Err(NoDuplicates))
	}
	if rep.Err(AllowDuplicates) == nil {
		t.Error("lost changes are a problem even when duplicates are allowed")
	}
}
