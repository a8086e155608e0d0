package runner

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/cdc/snapshot"
	"github.com/ingestkit/ingest/change"
)

func TestCaptureSet(t *testing.T) {
	match := func(db, table string) bool { return db == "d" }
	at := binlogpos.Position{File: "bin.000001", Offset: 700}
	created := change.TableID{DB: "d", Table: "n"}
	for _, c := range []struct {
		newly    bool
		captured bool   // created is captured once its CREATE TABLE is met
		warning  string // logged once for it
	}{
		{true, true, ""},
		{false, false, "set scan.binlog.newly-added-table.enabled: true"},
	} {
		log, buf := bufferLogger()
		s := newCaptureSet(match, c.newly, false, true, "STATE", log)
		s.reset(snapshot.Progress{Done: true, Tables: []snapshot.TableState{{DB: "d", Table: "a", Done: true}}})
		if !s.Match("d", "a") || s.Match("d", "n") || s.Match("other", "a") {
			t.Fatal("Match before the CREATE")
		}
		before, _ := s.encoded()
		s.created(created, at)
		s.created(created, at) // replayed after a reconnect
		s.uncaptured(created)
		s.created(change.TableID{DB: "other", Table: "x"}, at)
		if got := s.Match("d", "n"); got != c.captured {
			t.Errorf("newly %v: Match of the created table = %v", c.newly, got)
		}
		after, _ := s.encoded()
		var p snapshot.Progress
		if err := json.Unmarshal(after, &p); err != nil {
			t.Fatal(err)
		}
		want := []snapshot.TableState{{DB: "d", Table: "a", Done: true}}
		if c.captured {
			want = append(want, snapshot.TableState{DB: "d", Table: "n", From: at.String()})
		}
		if len(p.Tables) != len(want) || p.Tables[0] != want[0] || len(want) == 2 && p.Tables[1] != want[1] {
			t.Errorf("newly %v: stored set %s", c.newly, after)
		}
		if again, _ := s.encoded(); &again[0] != &after[0] {
			t.Error("the encoding is not reused while the set is unchanged")
		}
		if c.captured == (&before[0] == &after[0]) {
			t.Errorf("newly %v: the encoding changed %v", c.newly, !c.captured)
		}
		logs := buf.String()
		if n := strings.Count(logs, "level=WARN"); (c.warning == "") != (n == 0) || n > 1 {
			t.Errorf("newly %v: %d warnings:\n%s", c.newly, n, logs)
		}
		if c.warning != "" && (!strings.Contains(logs, "table d.n matches source.tables but is not captured") ||
			!strings.Contains(logs, c.warning) || !strings.Contains(logs, "run `ingest resnapshot` of the table")) {
			t.Errorf("newly %v: warning:\n%s", c.newly, logs)
		}
	}
	// With the option on, rows met without a CREATE TABLE (the table was there before the
	// stream's start) are not captured either, with the re-snapshot fix.
	log, buf := bufferLogger()
	s := newCaptureSet(match, true, false, true, "STATE", log)
	s.reset(snapshot.Progress{Done: true, Tables: []snapshot.TableState{}})
	s.uncaptured(created)
	s.uncaptured(created)
	if s.Match("d", "n") || strings.Count(buf.String(), "holds no CREATE TABLE of it") != 1 {
		t.Errorf("rows before the CREATE: Match %v, log:\n%s", s.Match("d", "n"), buf)
	}
}

// TestCaptureSetKeyless: a table created after the start without a key is decided at its
// first rows (skipped, or refused with keyless fail); a table of the snapshot without a key
// stops the pipeline as before; a skipped table created again is captured again.
func TestCaptureSetKeyless(t *testing.T) {
	match := func(db, table string) bool { return db == "d" }
	at := binlogpos.Position{File: "bin.000001", Offset: 700}
	n := change.TableID{DB: "d", Table: "n"}
	snap := change.TableID{DB: "d", Table: "a"}
	for _, strict := range []bool{false, true} {
		log, buf := bufferLogger()
		s := newCaptureSet(match, true, strict, true, "STATE", log)
		var skipped []change.TableID
		s.onSkip = func(id change.TableID) { skipped = append(skipped, id) }
		s.reset(snapshot.Progress{Done: true, Tables: []snapshot.TableState{{DB: "d", Table: "a", Done: true}}})
		if err := s.keyless(snap, false); !errors.As(err, new(*schema.NoPrimaryKeyError)) {
			t.Errorf("strict %v: a keyless table of the snapshot: %v", strict, err)
		}
		s.created(n, at)
		if err := s.keyless(n, false); err != nil || !s.Match("d", "n") {
			t.Errorf("strict %v: at the start a created table is decided later: %v, Match %v", strict, err, s.Match("d", "n"))
		}
		err := s.keyless(n, true)
		if strict {
			if !errors.As(err, new(*schema.NoPrimaryKeyError)) || !strings.Contains(err.Error(), "keyless: fail") || !s.Match("d", "n") {
				t.Errorf("strict: %v", err)
			}
			continue
		}
		if err != nil || s.Match("d", "n") || len(skipped) != 1 || skipped[0] != n {
			t.Fatalf("skip: %v, Match %v, skipped %v", err, s.Match("d", "n"), skipped)
		}
		if logs := buf.String(); strings.Count(logs, "level=WARN") != 1 || !strings.Contains(logs, "without a primary key") {
			t.Errorf("skip: log:\n%s", logs)
		}
		enc, _ := s.encoded()
		if !strings.Contains(string(enc), `"skipped":"no-key"`) {
			t.Errorf("skip: stored %s", enc)
		}
		s.uncaptured(n) // later rows: no second warning
		if strings.Count(buf.String(), "level=WARN") != 1 {
			t.Errorf("skip: warned again:\n%s", buf)
		}
		s.created(n, binlogpos.Position{File: "bin.000001", Offset: 900}) // dropped and created again
		if !s.Match("d", "n") {
			t.Error("a skipped table created again is not captured")
		}
	}
}
