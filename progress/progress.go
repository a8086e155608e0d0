// Package progress shows how a run is going: on a terminal, a bar per table during the
// snapshot (rows, estimate, rate, ETA) and a status line while streaming; elsewhere, plain
// log lines at an interval.
package progress

import (
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Display receives a run's progress. Implementations are safe for concurrent use.
type Display interface {
	// Table reports the snapshot progress of one table.
	Table(t Table)
	// SnapshotDone says the snapshot has finished.
	SnapshotDone()
	// Status reports the stream's state.
	Status(s Status)
	// Close removes what the display shows and stops its goroutines.
	Close()
}

// Table is the snapshot progress of one table.
type Table struct {
	Name     string
	Rows     int64 // rows read so far
	Estimate int64 // information_schema's estimate; 0 when unknown
}

// Status is the state of the stream.
type Status struct {
	Records  int64         // records acknowledged by Kafka since the start of the run
	Lag      time.Duration // how far the last processed binlog event is behind the clock
	Position string        // the last stored position
}

// Log is a Display for non-terminals: it logs the snapshot's tables and the stream's status
// at most every Every.
type Log struct {
	Logger *slog.Logger
	Every  time.Duration

	mu     sync.Mutex
	last   time.Time
	tables map[string]Table
	start  time.Time
}

// NewLog returns a Log display.
func NewLog(l *slog.Logger, every time.Duration) *Log {
	return &Log{Logger: l, Every: every, tables: map[string]Table{}, start: time.Now()}
}

// Table implements Display.
func (l *Log) Table(t Table) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tables[t.Name] = t
	if time.Since(l.last) < l.Every {
		return
	}
	l.last = time.Now()
	for _, t := range l.tables {
		rate := float64(t.Rows) / time.Since(l.start).Seconds()
		l.Logger.Info("snapshot progress", "table", t.Name, "rows", t.Rows, "estimate", t.Estimate,
			"rows_per_second", int64(rate), "eta", eta(t, rate))
	}
}

// SnapshotDone implements Display.
func (l *Log) SnapshotDone() {}

// Status implements Display.
func (l *Log) Status(s Status) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Since(l.last) < l.Every {
		return
	}
	l.last = time.Now()
	l.Logger.Info("streaming", "records", s.Records, "lag", s.Lag.Round(time.Millisecond).String(), "position", s.Position)
}

// Close implements Display.
func (l *Log) Close() {}

// eta is the time left for t at rate rows/s, or "" when it cannot be told.
func eta(t Table, rate float64) string {
	if rate <= 0 || t.Estimate <= t.Rows {
		return ""
	}
	return (time.Duration(float64(t.Estimate-t.Rows)/rate) * time.Second).Round(time.Second).String()
}

// statusLine renders s for the terminal's status line.
func statusLine(s Status) string {
	if s.Position == "" {
		s.Position = "(none stored yet)"
	}
	return fmt.Sprintf("streaming: %d records written, lag %s, position %s", s.Records, s.Lag.Round(time.Millisecond), s.Position)
}
