package snapshot

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/change"
)

// TableState is one table of a pipeline's captured set, stored in [Progress.Tables]: a
// table the snapshot covers (Done once it has read the whole table), one the binlog stream
// captures from its CREATE TABLE without a snapshot (From set;
// scan.binlog.newly-added-table.enabled), or, for a pipeline without a snapshot (a startup
// mode other than initial and snapshot), one that matched when it first started (Stream).
// A table that matches the pattern but is not in the set is not captured at all.
type TableState struct {
	DB    string `json:"db"`
	Table string `json:"table"`
	// Done is set once the snapshot has read the whole table.
	Done bool `json:"done,omitempty"`
	// From is the binlog position (cdc.Position text) from which the stream captures a
	// table the snapshot did not read: the end of its CREATE TABLE statement. Empty for
	// the tables of the snapshot.
	From string `json:"from,omitempty"`
	// Stream is set for the tables of a pipeline without a snapshot that matched when it
	// first started: the stream captures them from its start position.
	Stream bool `json:"stream,omitempty"`
	// Skipped, when set, says why a table created after the start (From set) is not
	// captured after all: "no-key", it had no key at its first rows. The stream leaves its
	// rows out, for good.
	Skipped string `json:"skipped,omitempty"`
}

// SkippedNoKey is TableState.Skipped of a table created without a key that had none at its
// first rows.
const SkippedNoKey = "no-key"

// ID returns the table.
func (t TableState) ID() change.TableID { return change.TableID{DB: t.DB, Table: t.Table} }

// Snapshotted reports whether the table belongs to the snapshot (rather than to the
// stream from its CREATE or from the start).
func (t TableState) Snapshotted() bool { return t.From == "" && !t.Stream }

// HasTables reports whether the progress records its captured set. A progress stored by
// an ingest before the set was recorded (format of version 0) has none.
func (p Progress) HasTables() bool { return p.Tables != nil }

// TableIDs returns the tables the snapshot covers: those of Tables without From, or, for a
// progress without Tables (an older format), the tables of its chunks.
func (p Progress) TableIDs() []change.TableID {
	var ids []change.TableID
	if p.HasTables() {
		for _, t := range p.Tables {
			if t.Snapshotted() {
				ids = append(ids, t.ID())
			}
		}
		return ids
	}
	for _, c := range p.Chunks {
		if id := c.TableID(); !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, compareIDs)
	return ids
}

// Migrated returns the progress in the current format: a progress without Tables (stored
// by an older ingest) gets the tables of its chunks, done when the progress is Done. The
// string says what was done, for the log ("" when nothing was).
func (p Progress) Migrated() (Progress, string) {
	if p.HasTables() {
		return p, ""
	}
	ids := p.TableIDs()
	p.Tables = make([]TableState, 0, len(ids))
	for _, id := range ids {
		p.Tables = append(p.Tables, TableState{DB: id.DB, Table: id.Table, Done: p.Done})
	}
	if !p.Done {
		return p, "the stored snapshot progress has no table list (an older format); the resumed snapshot lists the tables again"
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = id.String()
	}
	what := "none"
	if len(names) > 0 {
		what = strings.Join(names, ", ")
	}
	msg := "the stored snapshot progress has no table list (an older format); taking the tables of its chunks as the snapshot's: " + what
	if p.ListedAt == "" && len(p.Chunks) == 0 {
		msg += "; it stores no hand-off position either, so the stream starts at the server's current position"
	}
	return p, msg
}

// Compact returns what stays stored once the stream has passed the hand-off: the captured
// set and the hand-off position, without the chunks. Its size grows with the number of
// tables, not of chunks.
func (p Progress) Compact() Progress {
	return Progress{Done: p.Done, Tables: slices.Clone(p.Tables), ListedAt: p.ListedAt}
}

// HandoffPosition returns where the stream starts after the finished snapshot: the
// smallest low watermark of its chunks, or, with no chunk at all (no table matched), the
// position read when the snapshot listed its tables. ok is false when neither is known (a
// progress of an older format that covered no table).
func (p Progress) HandoffPosition() (binlogpos.Position, bool, error) {
	if pos, ok, err := p.Start(); ok || err != nil {
		return pos, ok, err
	}
	if p.ListedAt == "" {
		return binlogpos.Position{}, false, nil
	}
	pos, err := binlogpos.ParsePosition(p.ListedAt)
	if err != nil {
		return binlogpos.Position{}, false, fmt.Errorf("snapshot: hand-off position: %w", err)
	}
	return pos, true, nil
}

func compareIDs(a, b change.TableID) int {
	if c := strings.Compare(a.DB, b.DB); c != 0 {
		return c
	}
	return strings.Compare(a.Table, b.Table)
}
