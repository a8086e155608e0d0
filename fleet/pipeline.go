package fleet

import (
	"sync"
	"time"

	"github.com/ingestkit/ingest/progress"
)

// Phase is where an owned pipeline is.
type Phase string

// The phases of an owned pipeline.
const (
	PhaseStarting  Phase = "starting"  // assigned; fencing, reading its position, connecting
	PhaseSnapshot  Phase = "snapshot"  // reading the snapshot
	PhaseStreaming Phase = "streaming" // following the binlog
	PhaseFailed    Phase = "failed"    // its last run failed; restarted after RestartWait
	PhaseStopping  Phase = "stopping"  // revoked or draining: storing its position
)

// PipelineStatus is the state of an owned pipeline, as /status shows it.
type PipelineStatus struct {
	Name  string    `json:"name"`
	Phase Phase     `json:"phase"`
	Since time.Time `json:"since"` // when it was assigned to this worker
	// Running is when its current run reached the snapshot or the stream; zero before.
	Running    time.Time `json:"running,omitzero"`
	LagSeconds float64   `json:"lag_seconds"`
	Position   string    `json:"position,omitempty"`
	Records    int64     `json:"records"` // acknowledged by Kafka in the current run
	Restarts   int       `json:"restarts"`
	LastError  string    `json:"last_error,omitempty"`
}

// tracker keeps one owned pipeline's status. It is the run's progress.Display.
type tracker struct {
	mu   sync.Mutex
	st   PipelineStatus
	snap bool // the current run is in its snapshot
	log  progress.Display
}

func newTracker(name string, log progress.Display) *tracker {
	return &tracker{st: PipelineStatus{Name: name, Phase: PhaseStarting, Since: time.Now()}, log: log}
}

func (t *tracker) status() PipelineStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st
}

func (t *tracker) update(f func(*PipelineStatus)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(&t.st)
}

// running marks the run as past its start.
func (t *tracker) running(p Phase) {
	if t.st.Phase == PhaseStopping {
		return
	}
	if t.st.Running.IsZero() {
		t.st.Running = time.Now()
	}
	t.st.Phase = p
}

// Table implements progress.Display.
func (t *tracker) Table(tb progress.Table) {
	t.mu.Lock()
	t.snap = true
	t.running(PhaseSnapshot)
	t.mu.Unlock()
	t.log.Table(tb)
}

// SnapshotDone implements progress.Display.
func (t *tracker) SnapshotDone() {
	t.mu.Lock()
	t.snap = false
	t.running(PhaseStreaming)
	t.mu.Unlock()
	t.log.SnapshotDone()
}

// Status implements progress.Display.
func (t *tracker) Status(s progress.Status) {
	t.mu.Lock()
	if !t.snap {
		t.running(PhaseStreaming)
	}
	t.st.LagSeconds, t.st.Records = s.Lag.Seconds(), s.Records
	if s.Position != "" {
		t.st.Position = s.Position
	}
	t.mu.Unlock()
	t.log.Status(s)
}

// Close implements progress.Display: the run ended (the tracker serves the next one).
func (t *tracker) Close() {
	t.mu.Lock()
	t.snap = false
	t.mu.Unlock()
}
