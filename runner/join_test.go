package runner

import (
	"maps"
	"testing"

	"github.com/ingestkit/ingest/cdc/snapshot"
	"github.com/ingestkit/ingest/change"
)

func TestJoinCandidates(t *testing.T) {
	id := func(table string) change.TableID { return change.TableID{DB: "d", Table: table} }
	p := &snapshot.Progress{Done: true, Tables: []snapshot.TableState{
		{DB: "d", Table: "done", Done: true},
		{DB: "d", Table: "cut"}, // its join was interrupted
		{DB: "d", Table: "created", From: "f:4"},
		{DB: "d", Table: "keyless", From: "f:4", Skipped: snapshot.SkippedNoKey},
	}}
	oldSelection := func(_, table string) bool { return table != "grew" && table != "asked" }
	tests := []struct {
		name      string
		old       func(db, table string) bool
		requested []change.TableID
		want      map[change.TableID]string
	}{
		{"nothing changed", nil, nil, map[change.TableID]string{id("cut"): joinInterrupted}},
		{"pattern grew", oldSelection, nil, map[change.TableID]string{id("cut"): joinInterrupted, id("grew"): joinPatternGrew,
			id("asked"): joinPatternGrew}},
		{"requested", nil, []change.TableID{id("done"), id("created"), id("keyless"), id("asked"), id("cut")},
			map[change.TableID]string{id("cut"): joinRequested, id("done"): joinRequested, id("created"): joinRequested,
				id("keyless"): joinRequested, id("asked"): joinRequested}},
	}
	listed := []change.TableID{id("done"), id("cut"), id("created"), id("keyless"), id("grew"), id("asked")}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids, why := joinCandidates(p, listed, tc.old, tc.requested)
			if !maps.Equal(why, tc.want) || len(ids) != len(tc.want) {
				t.Errorf("joins %v, why %v; want %v", ids, why, tc.want)
			}
		})
	}
}
