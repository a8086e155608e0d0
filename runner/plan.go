package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ingestkit/ingest/cdc"
	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/history"
	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/cdc/snapshot"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/consumer"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/route"
	"github.com/ingestkit/ingest/secrets"
	"github.com/ingestkit/ingest/state"
	"github.com/ingestkit/ingest/transform"
	"github.com/ingestkit/ingest/upsert"
)

// Report is what `ingest plan` finds online, without writing anything. Problems are
// errors: each would stop apply or lose changes, and `ingest plan` exits 1 when there is
// one; Warnings are not.
type Report struct {
	Tables         []PlannedTable `json:"tables"`
	TopicsToCreate []string       `json:"topics_to_create"`
	Start          string         `json:"start"`
	Problems       []string       `json:"problems"`
	Warnings       []string       `json:"warnings"`

	unreachable bool // the source could not be connected to: its other checks are left out
	changeLog   bool // type kafka: topics are created with cleanup.policy=delete (kafka.go)
}

// PlannedTable is one matched table.
type PlannedTable struct {
	Table         string   `json:"table"`
	Key           []string `json:"key,omitempty"`
	KeyFrom       string   `json:"key_from,omitempty"` // "primary key" or "transform"
	Topics        []string `json:"topics"`
	EstimatedRows int64    `json:"estimated_rows"`
	Problem       string   `json:"problem,omitempty"`
	// Capture says, from the stored state, whether the table is captured, and why not.
	Capture string `json:"capture,omitempty"`

	columns []consumer.Column // as described, for the consumer DDL (ConsumerTopics)
	// Transform is what the transform rule that decides for the table writes, when the
	// rule has a projection, a filter or a converter.
	Transform *PlannedTransform `json:"transform,omitempty"`
}

// PlannedTransform is the transformed shape of a table.
type PlannedTransform struct {
	// Rule is the index of the transform item that decides (the first that matches).
	Rule int `json:"rule"`
	// Columns are the written columns as "name TYPE".
	Columns []string `json:"columns"`
	Key     []string `json:"key"`
	Filter  string   `json:"filter,omitempty"`
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
	from, server := storedSource(def, opts.StateDir)
	for _, p := range sourceChecks(ctx, src, from, server) {
		rep.addPreflight(p)
	}
	transforms, err := newTransforms(def)
	if err != nil {
		return nil, err
	}
	if err := rep.addTables(ctx, src, rt, transforms, snapshotCheck(def, src)); err != nil && !rep.unreachable {
		rep.Problems = append(rep.Problems, "error: tables: "+err.Error())
	}
	rep.addCollisions(rt)
	rep.addTimeWarnings(def)
	if err := rep.addTopics(ctx, def, opts.StateDir, stateSecrets(opts.Scrubber)); err != nil {
		rep.Problems = append(rep.Problems, "error: kafka: "+err.Error())
	}
	rep.addCapture(def, opts.StateDir)
	rep.Start = startWithKafka(ctx, def, opts, rep.Start)
	return rep, nil
}

// storedSource returns what the local state directory holds of the source, for plan to
// check as apply would: the stored stream position (at-least-once; exactly-once keeps it in
// Kafka) and the server identity. Unreadable state gives nothing; startReason reports it.
func storedSource(def *pipeline.Definition, dir string) (binlogpos.Position, string) {
	id, cp, err := state.Peek(dir)
	if err != nil {
		return binlogpos.Position{}, ""
	}
	var from binlogpos.Position
	if cp != nil && def.Sink.DeliveryGuarantee != pipeline.DeliveryExactlyOnce {
		from, _ = binlogpos.ParsePosition(cp.Position)
	}
	var server string
	if id != nil {
		server = id.Server
	}
	return from, server
}

// addPreflight files a finding of cdc.Preflight under Problems or Warnings by its severity.
// A failed connection is noted, so that the table listing's failure to connect too is not
// reported a second time.
func (rep *Report) addPreflight(p cdc.Problem) {
	if p.Severity == cdc.Warning {
		rep.Warnings = append(rep.Warnings, p.Check+": "+p.Message)
		return
	}
	rep.unreachable = rep.unreachable || p.Check == "connect"
	rep.Problems = append(rep.Problems, p.String())
}

// HasErrors reports whether the plan found a problem that would stop apply or lose changes.
func (rep *Report) HasErrors() bool { return len(rep.Problems) > 0 }

// snapshotCheck returns the configuration to check each table's chunk key with, or nil if
// the startup mode takes no snapshot.
func snapshotCheck(def *pipeline.Definition, src cdc.Config) *snapshot.Config {
	s := def.Source
	if s.StartupMode != pipeline.StartupInitial && s.StartupMode != pipeline.StartupSnapshot {
		return nil
	}
	return &snapshot.Config{Addr: src.Addr, TinyInt1AsNumber: src.TinyInt1AsNumber, Keys: src.Keys, ChunkKey: chunkKeys(&s)}
}

func (rep *Report) addTables(ctx context.Context, src cdc.Config, rt *routing, transforms *transform.Rules, snap *snapshot.Config) error {
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
		t, err := history.DescribeTable(ctx, db, ti.ID, history.DescribeOptions{TinyInt1AsNumber: src.TinyInt1AsNumber, Keys: src.Keys})
		var nopk *schema.NoPrimaryKeyError
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
			pt.columns = consumerColumns(t.Columns)
			if _, ok := src.Keys(ti.ID.DB, ti.ID.Table); ok {
				pt.KeyFrom = "transform"
			}
			if err := pt.addTransform(transforms, t.Schema); err != nil {
				pt.Problem = err.Error()
				rep.Problems = append(rep.Problems, "error: "+ti.ID.String()+": "+pt.Problem)
				break
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

// addTransform compiles the table's transform rule against its live shape.
func (pt *PlannedTable) addTransform(transforms *transform.Rules, s *change.Schema) error {
	p, err := transforms.Program(s)
	if err != nil || p == nil {
		return err
	}
	t := &PlannedTransform{Rule: transforms.Match(s.Table), Key: keyNames(p.Schema()), Filter: p.FilterText()}
	for _, c := range p.Columns() {
		t.Columns = append(t.Columns, c.Name+" "+c.Type.String())
	}
	pt.Transform = t
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

// addTopics lists the cluster's topics, notes the missing ones and checks the partition
// counts of the existing ones (against the state directory dir).
func (rep *Report) addTopics(ctx context.Context, def *pipeline.Definition, dir string, sec state.Secrets) error {
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
		return rep.addApsaraTopics(ctx, def, want, dir, sec)
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
	counts := map[string]int32{}
	for name, d := range existing {
		if d.Err == nil {
			counts[name] = int32(len(d.Partitions))
		}
	}
	rep.checkPartitions(counts, want, int32(def.Sink.TopicPartitions), dir, sec)
	if len(rep.TopicsToCreate) > 0 && !def.Sink.TopicAutoCreate {
		rep.Problems = append(rep.Problems, "error: topics missing and sink.topic.auto-create is false: "+
			strings.Join(rep.TopicsToCreate, ", ")+"; create them ("+rep.topicKind()+") or turn auto-create on")
	}
	return nil
}

// checkPartitions reports each existing topic (of counts, the partition count of each)
// whose count differs from the one recorded in the state directory dir, as apply refuses
// it before its first record: the topics the pipeline writes to (want), also against
// sink.topic.partitions (configured, 0 when not set), and every recorded one.
func (rep *Report) checkPartitions(counts map[string]int32, want map[string]bool, configured int32, dir string, sec state.Secrets) {
	recorded, err := state.PeekPartitions(dir, sec)
	if err != nil {
		rep.Problems = append(rep.Problems, "error: state: "+err.Error())
		return
	}
	names := map[string]bool{}
	maps.Copy(names, want)
	for t := range recorded {
		names[t] = true
	}
	for _, t := range slices.Sorted(maps.Keys(names)) {
		n, ok := counts[t]
		if !ok {
			continue
		}
		conf := configured
		if !want[t] {
			conf = 0
		}
		if err := upsert.CheckPartitions(t, n, recorded[t], dir, conf); err != nil {
			rep.Problems = append(rep.Problems, "error: "+err.Error())
		}
	}
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
	if rep.unreachable {
		b.WriteString("Tables: not listed (the source could not be connected to; see Problems)\n")
	} else {
		fmt.Fprintf(&b, "Tables (%d matched):\n", len(rep.Tables))
	}
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
		if tr := t.Transform; tr != nil {
			fmt.Fprintf(&b, "  %s: transform[%d] writes (%s), key (%s)", t.Table, tr.Rule, strings.Join(tr.Columns, ", "), strings.Join(tr.Key, ", "))
			if tr.Filter != "" {
				fmt.Fprintf(&b, ", rows where %s", tr.Filter)
			}
			b.WriteString("\n")
		}
		if t.Problem != "" {
			fmt.Fprintf(&b, "  %s: %s\n", t.Table, t.Problem)
		}
		if t.Capture != "" {
			fmt.Fprintf(&b, "  %s: %s\n", t.Table, t.Capture)
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
