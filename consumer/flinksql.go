package consumer

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/secrets"
)

// Sink is what of the pipeline's sink a consumer table declares: the format of the
// values, the broker and its security settings.
type Sink struct {
	Format
	// Connector is "upsert-kafka" or, for the kafka sink, "kafka"; ValueFormat is "json",
	// "debezium-json" or "canal-json".
	Connector, ValueFormat string
	// TimestampStandard is the value format's timestamp-format.standard: SQL or ISO-8601;
	// KeyTimestampStandard the key's (json.timestamp-format.standard).
	TimestampStandard, KeyTimestampStandard string
	Bootstrap                               string
	// Properties are the Kafka client settings a consumer needs too (security.protocol,
	// sasl.*, ssl.*), keyed without "properties.", secrets masked.
	Properties map[string]string
	// ReadCommitted is set with exactly-once: a consumer reads committed records only.
	ReadCommitted bool
	// Pipeline names the pipeline, for the comments.
	Pipeline string
	// JSONAsObject is json.encode.json-column-as: object (upsert-kafka only).
	JSONAsObject bool
}

// SinkOf returns the consumer's view of a pipeline's sink; secret properties are masked.
func SinkOf(def *pipeline.Definition) Sink {
	s := &def.Sink
	out := Sink{
		Format: FormatOf(def), Connector: "upsert-kafka", ValueFormat: "json",
		TimestampStandard: s.JSON.TimestampFormat.String(), KeyTimestampStandard: s.JSON.TimestampFormat.String(),
		Bootstrap: s.BootstrapServers, Properties: map[string]string{},
		ReadCommitted: s.DeliveryGuarantee == pipeline.DeliveryExactlyOnce, Pipeline: def.Pipeline.Name,
		JSONAsObject: !s.IsKafka() && s.JSON.JSONColumnAs == pipeline.JSONColumnAsObject,
	}
	if def.IsSecret("sink.properties.bootstrap.servers") {
		out.Bootstrap = secrets.Mask
	}
	if s.IsKafka() {
		out.Connector, out.ValueFormat = "kafka", s.Kafka.ValueFormat.String()
		out.TimestampStandard = s.Kafka.Debezium.TimestampFormat.String()
		if s.Kafka.ValueFormat == pipeline.ValueCanalJSON {
			out.TimestampStandard = s.Kafka.Canal.TimestampFormat.String()
		}
	}
	for k, v := range s.Properties {
		if !consumerProperty(k) {
			continue
		}
		val := v.Reveal()
		if def.IsSecret("sink.properties."+k) || secretProperty(k) {
			val = secrets.Mask
		}
		out.Properties[k] = val
	}
	return out
}

// consumerProperty reports whether a client property applies to a consumer as well: the
// security settings. Producer settings (acks, compression, linger) are left out.
func consumerProperty(k string) bool {
	return k == "security.protocol" || k == "client.dns.lookup" ||
		strings.HasPrefix(k, "sasl.") || strings.HasPrefix(k, "ssl.")
}

// secretProperty reports the properties that always hold a credential.
func secretProperty(k string) bool {
	return k == "sasl.jaas.config" || k == "sasl.password" || strings.HasSuffix(k, ".password")
}

// mergedColumn is one column of a topic's union of columns.
type mergedColumn struct {
	name  string
	typ   FlinkType
	types []string // "db.t TYPE" for each table that has it
	in    int      // how many tables have it
	diff  bool
}

// union merges the columns of a topic's tables by name, in order of first appearance.
func union(t Topic, f Format) []*mergedColumn {
	var cols []*mergedColumn
	byName := map[string]*mergedColumn{}
	for _, tb := range t.Tables {
		for _, c := range tb.Columns {
			ft := FlinkTypeOf(c, f)
			m := byName[strings.ToLower(c.Name)]
			if m == nil {
				m = &mergedColumn{name: c.Name, typ: ft}
				byName[strings.ToLower(c.Name)] = m
				cols = append(cols, m)
			} else if m.typ.SQL != ft.SQL {
				m.diff = true
			}
			m.in++
			m.types = append(m.types, tb.Source+" "+ft.SQL)
		}
	}
	for _, m := range cols {
		if m.diff {
			m.typ = FlinkType{SQL: "STRING", Note: "types differ: " + strings.Join(m.types, ", ") + " - STRING reads every JSON value"}
		}
	}
	return cols
}

// WriteFlinkSQL writes a Flink SQL CREATE TABLE for each topic: the upsert-kafka
// connector with the json key and value formats for upsert-kafka, the kafka connector
// with the sink's value.format for the kafka sink.
func WriteFlinkSQL(w io.Writer, topics []Topic, s Sink) error {
	var b strings.Builder
	fmt.Fprintf(&b, "-- Flink SQL tables for the topics of ingest pipeline %s (%s sink).\n", s.Pipeline, s.Connector)
	b.WriteString("-- Types: docs/output.md, \"The consumer's side\".\n")
	for _, t := range topics {
		b.WriteString("\n")
		writeTable(&b, t, s)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeTable(b *strings.Builder, t Topic, s Sink) {
	sources := make([]string, len(t.Tables))
	for i, tb := range t.Tables {
		sources[i] = tb.Source
	}
	fmt.Fprintf(b, "-- topic %s: %s\n", t.Name, strings.Join(sources, ", "))
	fmt.Fprintf(b, "CREATE TABLE %s (\n", ident(t.Name))
	for _, c := range union(t, s.Format) {
		fmt.Fprintf(b, "  %s %s,", ident(c.name), c.typ.SQL)
		var notes []string
		if c.typ.Note != "" {
			notes = append(notes, c.typ.Note)
		}
		if c.in < len(t.Tables) {
			notes = append(notes, fmt.Sprintf("in %d of the %d tables (NULL in the others)", c.in, len(t.Tables)))
		}
		if len(notes) > 0 {
			b.WriteString("  -- " + strings.Join(notes, " / "))
		}
		b.WriteString("\n")
	}
	var key []string
	if len(t.Tables) > 0 {
		key = t.Tables[0].Key
	}
	quoted := make([]string, len(key))
	for i, k := range key {
		quoted[i] = ident(k)
	}
	fmt.Fprintf(b, "  PRIMARY KEY (%s) NOT ENFORCED", strings.Join(quoted, ", "))
	for _, tb := range t.Tables[1:] {
		if !slices.Equal(tb.Key, key) {
			fmt.Fprintf(b, "  -- %s is keyed by (%s)", tb.Source, strings.Join(tb.Key, ", "))
		}
	}
	b.WriteString("\n) WITH (\n")
	opts := [][2]string{{"connector", s.Connector}, {"topic", t.Name}, {"properties.bootstrap.servers", s.Bootstrap}}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		opts = append(opts, [2]string{"properties." + k, s.Properties[k]})
	}
	if s.ReadCommitted {
		opts = append(opts, [2]string{"properties.isolation.level", "read_committed"})
	}
	if s.Connector == "upsert-kafka" {
		opts = append(opts,
			[2]string{"key.format", "json"},
			[2]string{"key.json.timestamp-format.standard", s.KeyTimestampStandard},
			[2]string{"value.format", "json"},
			[2]string{"value.json.timestamp-format.standard", s.TimestampStandard})
	} else {
		opts = append(opts,
			[2]string{"scan.startup.mode", "earliest-offset"},
			[2]string{"format", s.ValueFormat},
			[2]string{s.ValueFormat + ".timestamp-format.standard", s.TimestampStandard})
	}
	for i, o := range opts {
		sep := ","
		if i == len(opts)-1 {
			sep = ""
		}
		fmt.Fprintf(b, "  %s = %s%s\n", literal(o[0]), literal(o[1]), sep)
	}
	b.WriteString(");\n")
}

// ident quotes a Flink SQL identifier.
func ident(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// literal quotes a Flink SQL string literal.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
