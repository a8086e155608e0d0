package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ingestkit/ingest/cdc"
	"github.com/ingestkit/ingest/cdc/snapshot"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/route"
	"github.com/ingestkit/ingest/secrets"
	"github.com/ingestkit/ingest/state"
	"github.com/ingestkit/ingest/upsert"
)

// Report is what `ingest plan` finds online, without writing anything.
type Report struct {
	Tables         []PlannedTable `json:"tables"`
	TopicsToCreate []string       `json:"topics_to_create"`
	Start          string         `json:"start"`
	Problems       []string       `json:"problems"`
	Warnings       []string       `json:"warnings"`

	changeLog bool // type kafka: topics are created with cleanup.policy=delete (kafka.go)
}

// PlannedTable is one matched table.
type PlannedTable struct {
	Table         string   `json:"table"`
	Key           []string `json:"key,omitempty"`
	KeyFrom       string   `json:"key_from,omitempty"` // "primary key" or "transform"
	Topics        []string `json:"topics"`
	EstimatedRows int64    `json:"estimated_rows"`
	Problem       string   `json:"problem,omitempty"`
}

// Plan connects to the source and the cluster and reports what apply would do.
func Plan(ctx context.Context, def *pipeline.Definition, opts Options) (*Report, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if opts.StateDir == "" {
		opts.StateDir = DefaultStateDir(def.Pipeline.Name)
	}
	rt, err := newRouting(def)
	if err != nil {
		return nil, err
	}
	src, err := sourceConfig(def, rt, discardLogger())
	if err != nil {
		return nil, err
	}
	rep := &Report{Problems: []string{}, Warnings: []string{}, TopicsToCreate: []string{}}
	for _, p := range cdc.Preflight(ctx, src) {
		rep.Problems = append(rep.Problems, p.String())
	}
	if err := rep.addTables(ctx, src, rt, snapshotCheck(def, src)); err != nil {
		rep.Problems = append(rep.Problems, "error: tables: "+err.Error())
	}
	rep.addCollisions(rt)
	if err := rep.addTopics(ctx, def); err != nil {
		rep.Problems = append(rep.Problems, "error: kafka: "+err.Error())
	}
	rep.Start = startReason(def, opts.StateDir)
	return rep, nil
}

// snapshotCheck returns the configuration to check each table's chunk key with, or nil if
// the startup mode takes no snapshot.
func snapshotCheck(def *pipeline.Definition, src cdc.Config) *snapshot.Config {
	s := def.Source
	if s.StartupMode != pipeline.StartupInitial && s.StartupMode != pipeline.StartupSnapshot {
		return nil
	}
	return &snapshot.Config{Addr: src.Addr, TinyInt1AsNumber: src.TinyInt1AsNumber, Keys: src.Keys, ChunkKey: chunkKeys(&s)}
}

func (rep *Report) addTables(ctx context.Context, src cdc.Config, rt *routing, snap *snapshot.Config) error {
	db, err := cdc.Open(src)
	if err != nil {
		return err
	}
	defer db.Close()
	tables, err := cdc.ListTables(ctx, db, rt.filter.Match)
	if err != nil {
		return err
	}
	rep.Tables = make([]PlannedTable, 0, len(tables))
	for _, ti := range tables {
		pt := PlannedTable{Table: ti.ID.String(), Topics: rt.topics(ti.ID), EstimatedRows: ti.EstimatedRows}
		t, err := cdc.DescribeTable(ctx, db, ti.ID, cdc.DescribeOptions{TinyInt1AsNumber: src.TinyInt1AsNumber, Keys: src.Keys})
		var nopk *cdc.NoPrimaryKeyError
		switch {
		case errors.As(err, &nopk):
			pt.Problem = "no primary key: add a transform with primary-keys for " + ti.ID.String() +
				" (or a primary key to the table); it cannot be written as upserts without one"
			rep.Problems = append(rep.Problems, "error: "+ti.ID.String()+": "+pt.Problem)
		case err != nil:
			pt.Problem = err.Error()
			rep.Problems = append(rep.Problems, "error: "+ti.ID.String()+": "+err.Error())
		case t != nil:
			pt.Key, pt.KeyFrom = keyNames(t.Schema), "primary key"
			if _, ok := src.Keys(ti.ID.DB, ti.ID.Table); ok {
				pt.KeyFrom = "transform"
			}
			if snap == nil {
				break
			}
			if err := snapshot.CheckTable(ctx, db, *snap, ti.ID); err != nil {
				pt.Problem = "snapshot: " + strings.TrimPrefix(err.Error(), "table "+ti.ID.String()+": ")
				rep.Problems = append(rep.Problems, "error: "+ti.ID.String()+": "+pt.Problem)
			}
		}
		rep.Tables = append(rep.Tables, pt)
	}
	if len(tables) == 0 {
		rep.Warnings = append(rep.Warnings, "no table matches source.tables; nothing would be written")
	}
	return nil
}

func keyNames(s *change.Schema) []string {
	names := make([]string, len(s.Key))
	for i, k := range s.Key {
		names[i] = s.Columns[k].Name
	}
	return names
}

func (rep *Report) addCollisions(rt *routing) {
	ids := make([]route.TableID, len(rep.Tables))
	for i, t := range rep.Tables {
		db, tbl, _ := strings.Cut(t.Table, ".")
		ids[i] = route.TableID{DB: db, Table: tbl}
	}
	for _, c := range rt.table.Collisions(ids) {
		names := make([]string, len(c.Sources))
		for i, s := range c.Sources {
			names[i] = s.String()
		}
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("topic %s receives %s: records with equal keys from different tables overwrite each other; "+
			"make the keys disjoint or route the tables to separate topics", c.Topic, strings.Join(names, ", ")))
	}
}

// addTopics lists the cluster's topics and notes the missing ones.
func (rep *Report) addTopics(ctx context.Context, def *pipeline.Definition) error {
	rep.changeLog = def.Sink.IsKafka()
	want := map[string]bool{}
	for _, t := range rep.Tables {
		for _, topic := range t.Topics {
			want[topic] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	if def.Sink.Aliyun.Enabled() {
		return rep.addApsaraTopics(ctx, def, want)
	}
	p, err := upsert.ParseProperties(secrets.RevealMap(def.Sink.Properties))
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(p.ClientOpts()...)
	if err != nil {
		return err
	}
	defer cl.Close()
	existing, err := kadm.NewClient(cl).ListTopics(ctx)
	if err != nil {
		return fmt.Errorf("list topics: %w", err)
	}
	for topic := range want {
		if !existing.Has(topic) {
			rep.TopicsToCreate = append(rep.TopicsToCreate, topic)
		}
	}
	sort.Strings(rep.TopicsToCreate)
	if len(rep.TopicsToCreate) > 0 && !def.Sink.TopicAutoCreate {
		rep.Problems = append(rep.Problems, "error: topics missing and sink.topic.auto-create is false: "+
			strings.Join(rep.TopicsToCreate, ", ")+"; create them ("+rep.topicKind()+") or turn auto-create on")
	}
	return nil
}

// startReason says where apply would start, and why.
func startReason(def *pipeline.Definition, dir string) string {
	if def.Sink.DeliveryGuarantee == pipeline.DeliveryExactlyOnce {
		return "from the position committed in Kafka with the last transaction of " + def.Pipeline.Name +
			" if there is one, else as scan.startup.mode " + def.Source.StartupMode.String() + " says"
	}
	_, cp, err := state.Peek(dir)
	switch {
	case err != nil:
		return "unknown: " + err.Error()
	case cp != nil && cp.Position != "":
		return "from the stored position " + cp.Position + " (state " + dir + ")"
	}
	mode := def.Source.StartupMode
	why := "no stored state in " + dir + ", so scan.startup.mode " + mode.String() + ": "
	switch mode {
	case pipeline.StartupInitial:
		return why + "an initial snapshot of the tables, then the binlog"
	case pipeline.StartupSnapshot:
		return why + "an initial snapshot of the tables only"
	case pipeline.StartupEarliestOffset:
		return why + "the oldest binlog on the server"
	case pipeline.StartupSpecificOffset:
		return why + "the given offset"
	case pipeline.StartupTimestamp:
		return why + "the first binlog event at or after the given time"
	}
	return why + "the server's current binlog position"
}

// WriteText writes the report for a terminal.
func (rep *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Tables (%d matched):\n", len(rep.Tables))
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, t := range rep.Tables {
		key := "key (" + strings.Join(t.Key, ", ") + ")"
		if t.KeyFrom == "transform" {
			key += " from transform"
		}
		if len(t.Key) == 0 {
			key = "NO KEY"
		}
		fmt.Fprintf(tw, "  %s\t%s\t~%d rows\t-> %s\n", t.Table, key, t.EstimatedRows, strings.Join(t.Topics, ", "))
	}
	tw.Flush()
	for _, t := range rep.Tables {
		if t.Problem != "" {
			fmt.Fprintf(&b, "  %s: %s\n", t.Table, t.Problem)
		}
	}
	b.WriteString("Topics to create (" + rep.topicKind() + "):")
	if len(rep.TopicsToCreate) == 0 {
		b.WriteString(" none")
	}
	b.WriteString("\n")
	for _, t := range rep.TopicsToCreate {
		fmt.Fprintf(&b, "  %s\n", t)
	}
	fmt.Fprintf(&b, "Start: %s\n", rep.Start)
	list := func(title string, items []string) {
		fmt.Fprintf(&b, "%s:", title)
		if len(items) == 0 {
			b.WriteString(" none")
		}
		b.WriteString("\n")
		for _, p := range items {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	list("Problems", rep.Problems)
	list("Warnings", rep.Warnings)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
