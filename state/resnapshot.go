package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/ingestkit/ingest/change"
)

// A re-snapshot request (`ingest resnapshot`) names tables of a pipeline to snapshot again.
// It is a file of its own in the state directory, written without the directory's lock
// (which a running `ingest apply` holds), under a lock of its own so that a request added
// while the runner takes the previous one is not lost. The runner snapshots the tables at
// its next start (a running one restarts within seconds to do so) and removes them from the
// request once their new snapshot is stored as pending.
const (
	resnapshotFile = "resnapshot.json"
	resnapshotLock = "resnapshot.lock"
)

// requestedTable is a table of a re-snapshot request as the file holds it.
type requestedTable struct {
	DB    string `json:"db"`
	Table string `json:"table"`
}

type resnapshotRequest struct {
	Tables    []requestedTable `json:"tables"`
	Requested time.Time        `json:"requested"`
}

// RequestResnapshot adds tables to the re-snapshot request of the pipeline whose state is in
// dir, which must exist (the pipeline has run).
func RequestResnapshot(dir string, tables []change.TableID) error {
	if _, err := os.Stat(filepath.Join(dir, identityFile)); err != nil {
		return fmt.Errorf("state %s: no pipeline state here (has the pipeline run with this --state?): %w", dir, err)
	}
	return editRequest(dir, func(req *resnapshotRequest) {
		for _, id := range tables {
			if t := (requestedTable{DB: id.DB, Table: id.Table}); !slices.Contains(req.Tables, t) {
				req.Tables = append(req.Tables, t)
			}
		}
		req.Requested = time.Now().UTC()
	})
}

// ResnapshotRequested returns the tables that the re-snapshot request in dir names, none
// when there is no request.
func ResnapshotRequested(dir string) ([]change.TableID, error) {
	var req resnapshotRequest
	err := readJSON(filepath.Join(dir, resnapshotFile), &req)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("state %s: read %s: %w", dir, resnapshotFile, err)
	}
	ids := make([]change.TableID, len(req.Tables))
	for i, t := range req.Tables {
		ids[i] = change.TableID{DB: t.DB, Table: t.Table}
	}
	return ids, nil
}

// ResnapshotTaken removes tables from the re-snapshot request in the store's directory:
// their new snapshot is stored (pending, so an interrupted one is done again). The request
// file goes with its last table. Taking no table touches nothing.
func (s *Store) ResnapshotTaken(tables []change.TableID) error {
	if len(tables) == 0 {
		return nil
	}
	return editRequest(s.dir, func(req *resnapshotRequest) {
		req.Tables = slices.DeleteFunc(req.Tables, func(t requestedTable) bool {
			return slices.Contains(tables, change.TableID{DB: t.DB, Table: t.Table})
		})
	})
}

// editRequest changes the request file of dir under its lock; a request left without
// tables is removed.
func editRequest(dir string, edit func(*resnapshotRequest)) error {
	f, err := os.OpenFile(filepath.Join(dir, resnapshotLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("state %s: %w", dir, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("state %s: lock %s: %w", dir, resnapshotLock, err)
	}
	var req resnapshotRequest
	path := filepath.Join(dir, resnapshotFile)
	if err := readJSON(path, &req); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("state %s: read %s: %w", dir, resnapshotFile, err)
	}
	edit(&req)
	if len(req.Tables) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("state %s: %w", dir, err)
		}
		return nil
	}
	return writeJSON(dir, resnapshotFile, req)
}
