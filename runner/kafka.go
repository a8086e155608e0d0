package runner

import (
	"log/slog"
	"slices"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/upsert"
)

// This file maps the sink block of type kafka (Flink CDC's Kafka pipeline sink) onto the
// upsert sink with the change-event format: the sink, its delivery guarantees, topic
// creation and metrics are the same as for upsert-kafka; the bytes, the partitions and the
// topic configs differ.

// targets returns where the records of a table go with type kafka: for each routed table id
// (the route's sink-table, or db.table), the topic sink.topic names, else the first entry of
// sink.tableId-to-topic.mapping that matches the id, else the id itself, as Flink CDC's
// PipelineKafkaRecordSerializationSchema.inferTopicName picks it.
func (r *routing) targets(id change.TableID) []upsert.Target {
	if v, ok := r.targetc.Load(id); ok {
		return v.([]upsert.Target)
	}
	var ts []upsert.Target
	for _, name := range r.table.Topics(id.DB, id.Table) {
		t := upsert.ParseSinkTable(name)
		if name == id.DB+"."+id.Table {
			t = upsert.SourceTable(id) // not renamed: a '.' inside a name stays where it is
		}
		topic := r.kafka.Topic
		if topic == "" {
			if m, ok := r.kafka.Kafka.MappedTopic(t.Schema, t.Table); ok {
				topic = m
			} else {
				topic = name
			}
		}
		ts = append(ts, upsert.Target{Topic: topic, Table: t})
	}
	v, _ := r.targetc.LoadOrStore(id, ts)
	return v.([]upsert.Target)
}

// targetTopics returns the distinct topics of targets, in order.
func targetTopics(ts []upsert.Target) []string {
	var topics []string
	for _, t := range ts {
		if !slices.Contains(topics, t.Topic) {
			topics = append(topics, t.Topic)
		}
	}
	return topics
}

// kafkaSinkConfig is sinkConfig for type kafka.
func kafkaSinkConfig(def *pipeline.Definition, r *routing, p *upsert.Properties, g upsert.Guarantee,
	headers []upsert.Header, log *slog.Logger) (upsert.Config, error) {
	s := def.Sink
	opts := eventOptions(&s, headers)
	opts.Comments, opts.TinyInt1AsNumber = def.Source.IncludeComments, !def.Source.TreatTinyInt1AsBoolean
	cfg := upsert.Config{
		Pipeline: def.Pipeline.Name, Properties: p, Guarantee: g,
		TransactionalID: s.TransactionalIDPrefix + def.Pipeline.Name,
		Topics:          r.topics,
		Targets:         r.targets,
		Format:          upsert.NewEventEncoder(opts),
		AllToZero:       s.Kafka.PartitionStrategy == pipeline.PartitionAllToZero,
		TopicConfigs:    map[string]string{"cleanup.policy": "delete"},
		AutoCreate:      s.TopicAutoCreate, Partitions: int32(s.TopicPartitions), ReplicationFactor: int16(s.TopicReplicationFactor),
		TransactionInterval: s.TransactionInterval, TransactionMaxBytes: s.TransactionMaxBytes,
		SkipOversized: s.SkipOversizedRecords, Logger: log,
	}
	err := apsaraSink(def, &cfg, log)
	return cfg, err
}

// eventOptions maps the format options of type kafka onto the change-event encoder's.
func eventOptions(s *pipeline.Sink, headers []upsert.Header) upsert.EventOptions {
	k := &s.Kafka
	opts := upsert.EventOptions{
		KeyJSON:      jsonFormat(k.KeyJSON, s.JSON.TimestampFormat),
		TableHeaders: s.AddTableIDToHeader, CustomHeaders: headers,
		IncludeSchema: k.IncludeSchema && k.ValueFormat != pipeline.ValueCanalJSON,
	}
	if k.KeyFormat == pipeline.KeyCSV {
		opts.Key = upsert.KeyCSV
	}
	switch k.ValueFormat {
	case pipeline.ValueCanalJSON:
		opts.Value, opts.ValueJSON = upsert.CanalJSON, jsonFormat(k.Canal, k.Canal.TimestampFormat)
	default:
		opts.Value, opts.ValueJSON = upsert.DebeziumJSON, jsonFormat(k.Debezium, k.Debezium.TimestampFormat)
	}
	micros := s.JSON.TimeAs == pipeline.TimeAsMicros
	opts.KeyJSON.TimeMicros, opts.ValueJSON.TimeMicros = micros, micros
	return opts
}

// jsonFormat maps one format's options; std is its timestamp-format.standard.
func jsonFormat(f pipeline.FormatOptions, std pipeline.TimestampFormat) upsert.JSONFormat {
	j := upsert.JSONFormat{DecimalPlain: f.DecimalPlain, IgnoreNulls: f.IgnoreNullFields}
	if std == pipeline.TimestampISO8601 {
		j.Timestamps = upsert.TimestampISO8601
	}
	return j
}

// topicKind says how the plan's topics are created: compacted for upsert-kafka, with
// cleanup.policy=delete for the change events of type kafka.
func (rep *Report) topicKind() string {
	if rep.changeLog {
		return "cleanup.policy=delete"
	}
	return "compacted"
}
