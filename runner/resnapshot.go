package runner

import (
	"fmt"
	"strings"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/route"
)

// ResnapshotTables checks tables ("db.table") for a re-snapshot request of pipeline def
// (state.RequestResnapshot): each must be one that source.tables captures. A running `ingest
// apply` takes the request within seconds (it starts again from its stored position), a
// stopped pipeline at its next start; the tables are snapshotted with the lock-free method
// of the initial snapshot, and the keys that their topics hold and the tables no longer
// have get tombstones (runner/join.go, upsert/clear.go).
func ResnapshotTables(def *pipeline.Definition, tables []string) ([]change.TableID, error) {
	filter, err := route.NewFilter(def.Source.Tables, def.Source.Exclude)
	if err != nil {
		return nil, err
	}
	ids := make([]change.TableID, 0, len(tables))
	for _, name := range tables {
		db, table, ok := strings.Cut(name, ".")
		if !ok || db == "" || table == "" {
			return nil, fmt.Errorf("table %q: want db.table", name)
		}
		if !filter.Match(db, table) {
			return nil, fmt.Errorf("table %s: source.tables does not capture it, so it has nothing to snapshot again", name)
		}
		ids = append(ids, change.TableID{DB: db, Table: table})
	}
	return ids, nil
}
