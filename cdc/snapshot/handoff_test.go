package snapshot

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/change"
)

func pos(off uint32) binlogpos.Position { return binlogpos.Position{File: "bin.000001", Offset: off} }

// testProgress: chunks (-∞,10] high 500, (10,20] high 300, (20,+∞] high 900; lows 100, 50, 700.
func testProgress() Progress {
	return Progress{Done: true, Chunks: []DoneChunk{
		{DB: "d", Table: "t", Lo: bound("20"), Low: pos(700).String(), High: pos(900).String()},
		{DB: "d", Table: "t", Hi: bound("10"), Low: pos(100).String(), High: pos(500).String()},
		{DB: "d", Table: "t", Lo: bound("10"), Hi: bound("20"), Low: pos(50).String(), High: pos(300).String()},
	}}
}

func row(id int64) change.Row { return change.Row{change.IntValue(id), change.IntValue(0)} }

func TestHandoffSkip(t *testing.T) {
	h, err := newHandoff(t.Context(), testProgress(), []*table{intTable()})
	if err != nil {
		t.Fatal(err)
	}
	if h.Start().String() != pos(50).String() {
		t.Errorf("start %v, want the smallest low watermark", h.Start())
	}
	id := change.TableID{DB: "d", Table: "t"}
	for _, c := range []struct {
		id   int64
		at   uint32
		skip bool
	}{
		{5, 500, true}, {5, 501, false}, {10, 499, true}, {11, 300, true}, {20, 301, false},
		{21, 899, true}, {21, 900, true}, {1 << 40, 901, false}, {-1 << 40, 120, true},
	} {
		if got, err := h.Skip(t.Context(), id, row(c.id), pos(c.at)); err != nil || got != c.skip {
			t.Errorf("Skip(id %d at %d) = %v, want %v", c.id, c.at, got, c.skip)
		}
	}
	if skip, _ := h.Skip(t.Context(), change.TableID{DB: "d", Table: "other"}, row(5), pos(1)); skip {
		t.Error("a table outside the snapshot is never skipped")
	}
	if h.Done(pos(899)) || !h.Done(pos(900)) {
		t.Error("Done must turn true at the largest high watermark")
	}
}

func TestHandoffFilterKeyChange(t *testing.T) {
	tbl := intTable()
	h, err := newHandoff(t.Context(), testProgress(), []*table{tbl})
	if err != nil {
		t.Fatal(err)
	}
	s := tbl.desc.Schema
	s.Table = change.TableID{DB: "d", Table: "t"}
	up := func(from, to int64) change.Change {
		return change.Change{Schema: s, Op: change.Update, Before: row(from), After: row(to)}
	}
	// At 400: chunk (-∞,10] (high 500) reflects it, chunk (10,20] (high 300) does not.
	b, err := h.Filter(t.Context(), change.Batch{End: true, Changes: []change.Change{up(5, 15), up(15, 5), up(3, 4), up(12, 13)}}, pos(400))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"insert 15", "delete 15", "update 12->13"}
	if len(b.Changes) != len(want) {
		t.Fatalf("kept %d changes: %+v", len(b.Changes), b.Changes)
	}
	for i, c := range b.Changes {
		var got string
		switch c.Op {
		case change.Insert:
			got = "insert " + itoa(c.After[0].Int())
		case change.Delete:
			got = "delete " + itoa(c.Before[0].Int())
		case change.Update:
			got = "update " + itoa(c.Before[0].Int()) + "->" + itoa(c.After[0].Int())
		}
		if got != want[i] {
			t.Errorf("change %d: %s, want %s", i, got, want[i])
		}
	}
	if !b.End {
		t.Error("Filter must keep the batch's End")
	}
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

func TestHandoffRejectsHoles(t *testing.T) {
	p := testProgress()
	p.Chunks = p.Chunks[1:] // (20,+∞] missing
	if _, err := newHandoff(t.Context(), p, []*table{intTable()}); err == nil {
		t.Fatal("a key space not covered must be an error")
	}
}

func TestProgressJSON(t *testing.T) {
	p := testProgress()
	p.Chunks[0].Lo = Bound{[]byte{0, 0xff, 'a'}, []byte{}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q Progress
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	if string(q.Chunks[0].Lo[0]) != "\x00\xffa" || q.Chunks[0].Lo[1] == nil || q.Chunks[1].Lo != nil || !q.Done {
		t.Errorf("round trip: %s -> %+v", b, q)
	}
	start, ok, err := q.Start()
	if err != nil || !ok || start.String() != pos(50).String() {
		t.Errorf("Start = %v, %v, %v", start, ok, err)
	}
}

func TestLedgerTokens(t *testing.T) {
	l := newLedger(&Progress{Chunks: []DoneChunk{{Table: "base"}}})
	t1 := l.add(l.begin(), DoneChunk{Table: "a"}, pos(10))
	t2 := l.add(l.begin(), DoneChunk{Table: "b"}, pos(20))
	if !IsToken(t1) || IsToken([]byte("file=x:4")) {
		t.Fatal("IsToken")
	}
	p, err := l.at(t1)
	if err != nil || len(p.Chunks) != 2 || p.Chunks[1].Table != "a" || p.Done {
		t.Errorf("at(t1) = %+v, %v", p, err)
	}
	end := l.finish()
	if p, err := l.at(end); err != nil || len(p.Chunks) != 3 || !p.Done {
		t.Errorf("at(end) = %+v, %v", p, err)
	}
	if p, _ := l.at(t2); p.Done {
		t.Error("a chunk's token is not the end")
	}
	l = newLedger(nil)
	a, b := l.begin(), l.begin()
	l.setLow(a, pos(5))
	l.setLow(b, pos(7))
	late := l.begin() // its low is read after b is emitted: after b's high
	if p, _ := l.at(l.add(b, DoneChunk{}, pos(9))); p.Since != pos(5).String() {
		t.Errorf("since %s, want the low of the piece in flight", p.Since)
	}
	l.setLow(late, pos(11))
	if p, _ := l.at(l.add(a, DoneChunk{}, pos(12))); p.Since != pos(11).String() {
		t.Errorf("since %s, want 11", p.Since)
	}
	other := newLedger(nil)
	if _, err := other.at(t1); err == nil {
		t.Error("a token of another run must be refused")
	}
}
