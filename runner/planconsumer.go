package runner

import (
	"fmt"
	"slices"

	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/consumer"
	"github.com/ingestkit/ingest/pipeline"
)

// consumerColumns is the consumer's view of described columns.
func consumerColumns(cols []schema.Column) []consumer.Column {
	out := make([]consumer.Column, len(cols))
	for i, c := range cols {
		out[i] = consumer.Column{Name: c.Name, SQLType: c.SQLType, Kind: c.ValueKind(),
			Unsigned: c.Unsigned, Length: c.Length, Scale: c.Scale}
	}
	return out
}

// ConsumerTopics returns each topic the plan writes to, sorted by name, with the tables
// routed to it and their described columns: what package consumer writes DDL for.
// Tables that could not be described are left out.
func (rep *Report) ConsumerTopics() []consumer.Topic {
	byName := map[string]*consumer.Topic{}
	for _, t := range rep.Tables {
		if t.columns == nil {
			continue
		}
		for _, name := range t.Topics {
			top := byName[name]
			if top == nil {
				top = &consumer.Topic{Name: name}
				byName[name] = top
			}
			top.Tables = append(top.Tables, consumer.Table{Source: t.Table, Columns: t.columns, Key: t.Key})
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]consumer.Topic, len(names))
	for i, n := range names {
		out[i] = *byName[n]
	}
	return out
}

// addTimeWarnings warns of every captured TIME column written as text (json.encode.time-as:
// string): its type allows values outside 00:00:00–23:59:59, which a consumer that declares
// it TIME (Flink's TIME, Flink CDC's type mapping) cannot read.
func (rep *Report) addTimeWarnings(def *pipeline.Definition) {
	if def.Sink.JSON.TimeAs == pipeline.TimeAsMicros {
		return
	}
	for _, t := range rep.Tables {
		for _, c := range t.columns {
			if consumer.FlinkTypeOf(c, consumer.FormatOf(def)).SQL != "STRING" || !consumer.IsTime(c) {
				continue
			}
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s column %s is %s: its values may lie outside 00:00:00-23:59:59 (up to ±838:59:59), "+
				"which a consumer that declares it TIME cannot read (Flink's job fails, and Flink's TIME drops the fraction); "+
				"declare it STRING (as plan --emit flink-sql does), or set json.encode.time-as: micros and declare it BIGINT",
				t.Table, c.Name, c.SQLType))
		}
	}
}
