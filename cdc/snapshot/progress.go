package snapshot

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/change"
)

// Progress is what a snapshot has finished: each chunk with its key range and watermarks. It
// is stored by the runner as JSON next to the position and passed back as Config.Resume after
// a restart; it also builds the [Handoff]. It grows by one entry per chunk (about 150 bytes),
// and is no longer needed once the binlog stream has passed [Handoff.Done].
type Progress struct {
	// Chunks are the finished chunks, in the order they were emitted.
	Chunks []DoneChunk `json:"chunks,omitempty"`
	// Done is set when every chunk of every table is finished.
	Done bool `json:"done,omitempty"`
	// Since is a binlog position (cdc.Position text) at or before the high watermark of every
	// chunk that may have been emitted after the last one of Chunks (emitted, but not stored
	// before a crash). A run resumed from this progress reads the binlog from Since for each
	// chunk it reads, and emits a tombstone for every key of the chunk deleted or moved out
	// since then: an earlier run may have emitted that key.
	Since string `json:"since,omitempty"`
	// Tables is the captured set: every table the snapshot covers, each Done once read
	// whole, and the tables the stream captures from their CREATE TABLE. It is null until
	// the snapshot has listed its tables, and in progress stored by an older ingest (see
	// [Progress.Migrated]); an empty list is a snapshot that matched no table.
	Tables []TableState `json:"tables"`
	// ListedAt is the binlog position (cdc.Position text) read just before the snapshot
	// listed its tables: where the stream starts when no chunk gave a low watermark (no
	// table matched), so that a table created afterwards is met from its CREATE TABLE.
	ListedAt string `json:"listed_at,omitempty"`
}

// DoneChunk is one finished chunk.
type DoneChunk struct {
	DB    string `json:"db"`
	Table string `json:"table"`
	// Lo and Hi are the chunk's bounds (exclusive, inclusive; absent when unbounded).
	Lo Bound `json:"lo,omitempty"`
	Hi Bound `json:"hi,omitempty"`
	// Low and High are the chunk's watermarks in cdc.Position text form: the rows emitted
	// are the state at High.
	Low  string `json:"low"`
	High string `json:"high"`
	// Rows is the number of rows emitted.
	Rows int64 `json:"rows"`
}

// TableID returns the chunk's table.
func (d DoneChunk) TableID() change.TableID { return change.TableID{DB: d.DB, Table: d.Table} }

// Start returns the smallest low watermark of the finished chunks: where the binlog stream
// starts after the snapshot. ok is false when there are none.
func (p Progress) Start() (pos binlogpos.Position, ok bool, err error) {
	for _, d := range p.Chunks {
		low, err := binlogpos.ParsePosition(d.Low)
		if err != nil {
			return binlogpos.Position{}, false, fmt.Errorf("chunk %s: low watermark: %w", d.chunk(), err)
		}
		if !ok {
			pos, ok = low, true
			continue
		}
		c, comparable := low.Compare(pos)
		if !comparable {
			return binlogpos.Position{}, false, fmt.Errorf("chunk %s: low watermark %s cannot be ordered with %s", d.chunk(), low, pos)
		}
		if c < 0 {
			pos = low
		}
	}
	return pos, ok, nil
}

func (d DoneChunk) chunk() Chunk { return Chunk{Table: d.TableID(), Lo: d.Lo, Hi: d.Hi} }

// tokenPrefix starts every progress token; no binlog position text starts with it.
const tokenPrefix = "snapshot:"

// IsToken reports whether a batch Position is a snapshot progress token rather than a
// binlog position.
func IsToken(pos []byte) bool { return bytes.HasPrefix(pos, []byte(tokenPrefix)) }

// ledger records the chunks a run emits, in emission order, and answers ProgressAt. It also
// follows the pieces being read, to compute each token's Since.
type ledger struct {
	run       string
	baseSince binlogpos.Position // from Config.Resume; zero when none
	baseDone  bool               // Config.Resume was Done
	mu        sync.Mutex
	base      []DoneChunk // from Config.Resume
	done      []DoneChunk // emitted by this run; token n covers done[:n]
	// chunks is base then done, append-only: a progress shares a prefix of it (capped,
	// never written again) instead of copying every chunk for every token.
	chunks   []DoneChunk
	since    []binlogpos.Position
	end      int                        // token of the end marker, 0 until every chunk is emitted
	inflight map[int]binlogpos.Position // pieces begun and not emitted: their low watermark once known
	next     int
	tables   []TableState // the tables listed (setTables), or Config.Resume's; nil until known; replaced, never written in place
	doneView []TableState // tables with each table of the snapshot Done (withTables), built once per tables
	listedAt string       // Progress.ListedAt
}

func newLedger(resume *Progress) *ledger {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	l := &ledger{run: hex.EncodeToString(b), inflight: map[int]binlogpos.Position{}}
	if resume != nil {
		l.base = append([]DoneChunk(nil), resume.Chunks...)
		l.chunks = append([]DoneChunk(nil), resume.Chunks...)
		l.baseSince, _ = binlogpos.ParsePosition(resume.Since)
		l.baseDone = resume.Done
		l.tables = slices.Clone(resume.Tables)
		l.listedAt = resume.ListedAt
	}
	return l
}

// setTables records the tables the snapshot covers and the position read before listing
// them. A resumed progress keeps its earlier ListedAt.
func (l *ledger) setTables(ids []change.TableID, listedAt binlogpos.Position) {
	l.mu.Lock()
	defer l.mu.Unlock()
	tables := make([]TableState, len(ids))
	for i, id := range ids {
		tables[i] = TableState{DB: id.DB, Table: id.Table}
	}
	l.tables, l.doneView = tables, nil
	if l.listedAt == "" && !listedAt.IsZero() {
		l.listedAt = listedAt.String()
	}
}

// tableIDs returns the tables the snapshot covers, nil when not known (before Run listed
// them, in a progress of an older format).
func (l *ledger) tableIDs() []change.TableID {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tables == nil {
		return nil
	}
	return Progress{Tables: l.tables}.TableIDs()
}

// withTables completes p with the captured set, each table of the snapshot Done when p is.
// Every progress of a run shares one slice of the set (capped: an append copies it) until
// the set changes, so that a progress per chunk costs no copy of a set of thousands of
// tables; a holder that changes an element must clone the slice first.
func (l *ledger) withTables(p Progress) Progress {
	if l.tables != nil {
		n := len(l.tables)
		p.Tables = l.tables[:n:n]
		if p.Done {
			if l.doneView == nil {
				l.doneView = make([]TableState, n)
				for i, t := range l.tables {
					t.Done = t.Done || t.Snapshotted()
					l.doneView[i] = t
				}
			}
			p.Tables = l.doneView[:n:n]
		}
	}
	p.ListedAt = l.listedAt
	return p
}

// begin registers a piece about to take its low watermark.
func (l *ledger) begin() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	l.inflight[l.next] = binlogpos.Position{}
	return l.next
}

// abandon forgets a piece that failed and will be read again under another id.
func (l *ledger) abandon(id int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.inflight, id)
}

// setLow records a piece's low watermark.
func (l *ledger) setLow(id int, low binlogpos.Position) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inflight[id] = low
}

// add records an emitted piece and returns its token. The token's Since is the earliest of
// the piece's high watermark and the low watermarks of the pieces still in flight: a piece
// emitted later either is in flight now or takes its low watermark after now, so after this
// piece's high.
func (l *ledger) add(id int, d DoneChunk, high binlogpos.Position) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.inflight, id)
	since := high
	for _, low := range l.inflight {
		since = earliest(since, low)
	}
	l.done = append(l.done, d)
	l.chunks = append(l.chunks, d)
	l.since = append(l.since, earliest(since, l.baseSince))
	return l.token(len(l.done))
}

// earliest returns the earlier of two positions, ignoring zero ones.
func earliest(a, b binlogpos.Position) binlogpos.Position {
	if a.IsZero() {
		return b
	}
	if c, ok := b.Compare(a); !b.IsZero() && ok && c < 0 {
		return b
	}
	return a
}

// finish records that every chunk is emitted and returns the end marker's token.
func (l *ledger) finish() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.end = len(l.done) + 1
	return l.token(l.end)
}

func (l *ledger) token(n int) []byte {
	return []byte(tokenPrefix + l.run + ":" + strconv.Itoa(n))
}

// at returns the progress a token stands for.
func (l *ledger) at(token []byte) (Progress, error) {
	run, n, err := parseToken(token)
	if err != nil {
		return Progress{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if run != l.run || n > len(l.done)+1 || (n == len(l.done)+1 && l.end != n) {
		return Progress{}, fmt.Errorf("snapshot: progress token %q is not one of this run", token)
	}
	k := min(n, len(l.done))
	m := len(l.base) + k
	p := Progress{Chunks: l.chunks[:m:m], Done: l.end != 0 && n >= l.end}
	since := l.baseSince
	if k > 0 {
		since = l.since[k-1]
	}
	if !since.IsZero() {
		p.Since = since.String()
	}
	return l.withTables(p), nil
}

// all returns everything finished so far.
func (l *ledger) all() Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := len(l.chunks)
	return l.withTables(Progress{Chunks: l.chunks[:m:m], Done: l.baseDone || l.end != 0})
}

func parseToken(token []byte) (string, int, error) {
	rest, ok := bytes.CutPrefix(token, []byte(tokenPrefix))
	run, num, ok2 := bytes.Cut(rest, []byte(":"))
	n, err := strconv.Atoi(string(num))
	if !ok || !ok2 || err != nil || n <= 0 {
		return "", 0, errors.New("snapshot: malformed progress token " + strconv.Quote(string(token)))
	}
	return string(run), n, nil
}
