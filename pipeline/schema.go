package pipeline

import (
	"math"
	"time"

	"github.com/ingestkit/ingest/route"
)

// This file is the schema of the pipeline file: every option of every
// block, with its type (the value bound to its field), its default and
// whether it is required or a credential. It is the one place where
// defaults live; the only default computed elsewhere is pipeline.name,
// derived from the file name by defaultName.
//
// Options that ingest adds to the Flink CDC / Realtime Compute format (the
// "ingest extensions"):
//
//   - sink.skip-oversized-records (bool, false): drop, with a warning and a
//     metric, a record larger than the broker accepts instead of stopping.
//   - sink.transaction.interval (duration, 1s) and
//     sink.transaction.max-bytes (bytes, 64 MiB): with exactly-once, a Kafka
//     transaction is committed when either is reached, so that a
//     transaction never grows without bound.
//   - sink.topic.auto-create, sink.topic.partitions and
//     sink.topic.replication-factor: how missing topics are created.
//   - sink.buffer-flush.max-rows and sink.buffer-flush.interval, taken from
//     the Realtime Compute upsert-kafka SQL connector.
//   - the json.* options of docs/output.md.

// option is one option of a block.
type option struct {
	key      string
	val      value  // the field the option sets
	def      string // the default, parsed with val.set; "" for none
	required bool
	secret   bool // a credential: its value is always masked
	// asIs, when set, says why no code reads the option's value: ingest already behaves as
	// the option asks whatever its value (docs/pipeline.md says so too). An option without
	// it is read where it is applied (schema_test.go checks both).
	asIs string
	// only, when set, is the one sink type the option belongs to (SinkUpsertKafka or
	// SinkKafka); the other type refuses it with the reason in sinkRefusedFor.
	only string
}

// The top-level blocks of a pipeline file.
var topLevelKeys = []string{"source", "sink", "route", "transform", "pipeline"}

const sourceType = "mysql"

// sinkTypes are the sink types the loader accepts.
var sinkTypes = []string{SinkUpsertKafka, SinkKafka}

// sourceOptions binds the options of the source block (type mysql) to s.
func sourceOptions(s *Source) []option {
	const maxInt = math.MaxInt32
	return []option{
		{key: "type", val: stringValue{&s.Type}, required: true, asIs: typeChecked},
		{key: "name", val: stringValue{&s.Name}, asIs: label},
		{key: "hostname", val: stringValue{&s.Hostname}, required: true},
		{key: "port", val: intValue{&s.Port, 1, 65535}, def: "3306"},
		{key: "username", val: stringValue{&s.Username}, required: true},
		{key: "password", val: secretValue{&s.Password}, required: true, secret: true},
		{key: "tables", val: stringValue{&s.Tables}, required: true},
		{key: "tables.exclude", val: stringValue{&s.Exclude}},
		{key: "server-id", val: serverIDValue{&s.ServerID}},
		{key: "server-time-zone", val: timeZoneValue{&s.ServerTimeZone}, asIs: "ingest reads TIMESTAMP as UTC instants in both phases " +
			"(the snapshot's sessions use time_zone '+00:00', the binlog holds epoch seconds), which is what Flink CDC gets when this names the server's zone"},
		{key: "scan.startup.mode", val: enum(&s.StartupMode, StartupInitial, StartupSnapshot,
			StartupLatestOffset, StartupEarliestOffset, StartupSpecificOffset, StartupTimestamp), def: "initial"},
		{key: "scan.startup.specific-offset.file", val: stringValue{&s.SpecificOffsetFile}},
		{key: "scan.startup.specific-offset.pos", val: int64Value{&s.SpecificOffsetPos, 0, math.MaxInt64}},
		{key: "scan.startup.specific-offset.gtid-set", val: stringValue{&s.SpecificOffsetGTIDSet}},
		{key: "scan.startup.timestamp-millis", val: int64Value{&s.StartupTimestampMillis, 0, math.MaxInt64}},
		{key: "scan.incremental.snapshot.chunk.size", val: intValue{&s.ChunkSize, 2, maxInt}, def: "8096"},
		{key: "scan.snapshot.fetch.size", val: intValue{&s.FetchSize, 2, maxInt}, def: "1024"},
		{key: "scan.incremental.snapshot.chunk.key-column", val: chunkKeysValue{&s.ChunkKeyColumns}},
		{key: "connect.timeout", val: durationValue{&s.ConnectTimeout, 250 * time.Millisecond}, def: "30s"},
		{key: "connect.max-retries", val: intValue{&s.ConnectMaxRetries, 1, maxInt}, def: "3"},
		{key: "connection.pool.size", val: intValue{&s.ConnectionPoolSize, 2, maxInt}, def: "20",
			asIs: "a bound: the snapshot's pool holds pipeline.parallelism + 2 connections, and validate refuses a smaller size (checkPoolSize)"},
		{key: "heartbeat.interval", val: durationValue{&s.HeartbeatInterval, 0}, def: "30s"},
		{key: "treat-tinyint1-as-boolean.enabled", val: boolValue{&s.TreatTinyInt1AsBoolean}, def: "true"},
		{key: "scan.binlog.newly-added-table.enabled", val: boolValue{&s.BinlogNewlyAddedTables}, def: "false"},
		{key: "scan.binlog.newly-added-table.keyless", val: enum(&s.NewlyAddedKeyless, KeylessSkip, KeylessFail), def: "skip"},
		// Realtime Compute (VVR) options that published jobs use.
		{key: "include-comments.enabled", val: boolValue{&s.IncludeComments}, def: "false",
			asIs: "comments belong to Flink's schema events, which upsert-kafka records never carry"},
		{key: "scan.only.deserialize.captured.tables.changelog.enabled", val: boolValue{&s.OnlyDeserializeCaptured},
			asIs: "ingest decodes the row events of captured tables only, whatever the value"},
		{key: "scan.incremental.snapshot.unbounded-chunk-first.enabled", val: boolValue{&s.UnboundedChunkFirst}, def: "false",
			asIs: "every chunk, the open-ended last one included, is read in pieces of at most twice " +
				"scan.incremental.snapshot.chunk.size rows, and the order of chunks changes no record"},
	}
}

// sinkOptions binds the options of the sink block to s: those of both types, then
// those of one type (only). properties.bootstrap.servers, required, is a pass-through
// property.
func sinkOptions(s *Sink) []option {
	const maxInt = math.MaxInt32
	const up = SinkUpsertKafka
	opts := []option{
		{key: "type", val: stringValue{&s.Type}, required: true, asIs: typeChecked},
		{key: "name", val: stringValue{&s.Name}, asIs: label},
		{key: "topic", val: stringValue{&s.Topic}},
		{key: "sink.delivery-guarantee", val: enum(&s.DeliveryGuarantee,
			DeliveryNone, DeliveryAtLeastOnce, DeliveryExactlyOnce), def: "at-least-once"},
		{key: "sink.transactional-id-prefix", val: stringValue{&s.TransactionalIDPrefix}, def: "ingest-"},
		{key: "sink.add-tableId-to-header-enabled", val: boolValue{&s.AddTableIDToHeader}, def: "false"},
		{key: "sink.custom-header", val: headersValue{&s.CustomHeaders}},
		{key: "sink.topic.auto-create", val: boolValue{&s.TopicAutoCreate}, def: "true"},
		{key: "sink.topic.partitions", val: intValue{&s.TopicPartitions, 1, maxInt}},
		{key: "sink.topic.replication-factor", val: intValue{&s.TopicReplicationFactor, 1, math.MaxInt16}},
		{key: "sink.buffer-flush.max-rows", val: intValue{&s.BufferFlushMaxRows, 1, maxInt}, only: up},
		{key: "sink.buffer-flush.interval", val: durationValue{&s.BufferFlushInterval, time.Millisecond}, only: up},
		{key: "sink.skip-oversized-records", val: boolValue{&s.SkipOversizedRecords}, def: "false"},
		{key: "sink.truncate.tombstones", val: boolValue{&s.TruncateTombstones}, def: "true", only: up},
		{key: "sink.transaction.interval", val: durationValue{&s.TransactionInterval, time.Millisecond}, def: "1s"},
		{key: "sink.transaction.max-bytes", val: int64Value{&s.TransactionMaxBytes, 1, math.MaxInt64}, def: "67108864"},
		{key: "json.timestamp-format.standard", val: enum(&s.JSON.TimestampFormat,
			TimestampSQL, TimestampISO8601), def: "SQL"},
		{key: "json.encode.json-column-as", val: enum(&s.JSON.JSONColumnAs,
			JSONColumnAsString, JSONColumnAsObject), def: "string", only: up},
		{key: "json.encode.decimal-as", val: enum(&s.JSON.DecimalAs, DecimalAsNumber, DecimalAsString), def: "number", only: up},
		{key: "json.encode.time-as", val: enum(&s.JSON.TimeAs, TimeAsString, TimeAsMicros), def: "string"},
		{key: "aliyun.kafka.accessKeyId", val: secretValue{&s.Aliyun.AccessKeyID}, secret: true},
		{key: "aliyun.kafka.accessKeySecret", val: secretValue{&s.Aliyun.AccessKeySecret}, secret: true},
		{key: "aliyun.kafka.instanceId", val: stringValue{&s.Aliyun.InstanceID}},
		{key: "aliyun.kafka.endpoint", val: stringValue{&s.Aliyun.Endpoint}},
		{key: "aliyun.kafka.regionId", val: stringValue{&s.Aliyun.RegionID}},
	}
	return append(opts, kafkaOptions(&s.Kafka)...)
}

// kafkaOptions binds the options of type kafka only (Flink CDC 3.6's KafkaDataSinkOptions
// and the JsonFormatOptions its formats read) to k.
func kafkaOptions(k *KafkaOptions) []option {
	const kafka = SinkKafka
	opts := []option{
		{key: "partition.strategy", val: enum(&k.PartitionStrategy, PartitionAllToZero, PartitionHashByKey), def: "all-to-zero", only: kafka},
		{key: "key.format", val: enum(&k.KeyFormat, KeyJSON, KeyCSV), def: "json", only: kafka},
		{key: "value.format", val: valueFormatValue{&k.ValueFormat}, def: "debezium-json", only: kafka},
		{key: "sink.tableId-to-topic.mapping", val: topicMappingValue{&k.TopicMapping}, only: kafka},
		{key: "debezium-json.include-schema.enabled", val: boolValue{&k.IncludeSchema}, def: "false", only: kafka},
	}
	opts = append(opts, formatOptions("json.", &k.KeyJSON, false)...)
	opts = append(opts, formatOptions("debezium-json.", &k.Debezium, true)...)
	return append(opts, formatOptions("canal-json.", &k.Canal, true)...)
}

// formatOptions binds the JsonFormatOptions that Flink CDC's format with the given prefix
// reads (json.timestamp-format.standard is an option of both sink types).
func formatOptions(prefix string, f *FormatOptions, timestamps bool) []option {
	const kafka = SinkKafka
	var opts []option
	if timestamps {
		opts = append(opts, option{key: prefix + "timestamp-format.standard", val: enum(&f.TimestampFormat,
			TimestampSQL, TimestampISO8601), def: "SQL", only: kafka})
	}
	return append(opts,
		option{key: prefix + "encode.decimal-as-plain-number", val: boolValue{&f.DecimalPlain}, def: "false", only: kafka},
		option{key: prefix + "encode.ignore-null-fields", val: boolValue{&f.IgnoreNullFields}, def: "false", only: kafka},
		option{key: prefix + "map-null-key.mode", val: enum(&f.MapNullKeyMode, MapNullFail, MapNullDrop, MapNullLiteral), def: "FAIL", only: kafka, asIs: noMaps},
		option{key: prefix + "map-null-key.literal", val: stringValue{&f.MapNullKeyLiteral}, def: "null", only: kafka, asIs: noMaps},
	)
}

// sinkOptionsFor returns the sink options of one type.
func sinkOptionsFor(s *Sink, typ string) []option {
	var opts []option
	for _, o := range sinkOptions(s) {
		if o.only == "" || o.only == typ {
			opts = append(opts, o)
		}
	}
	return opts
}

// routeOptions binds the options of one route item to r.
func routeOptions(r *Route) []option {
	return []option{
		{key: "source-table", val: stringValue{&r.SourceTable}, required: true},
		{key: "sink-table", val: stringValue{&r.SinkTable}, required: true},
		{key: "replace-symbol", val: stringValue{&r.ReplaceSymbol}},
		{key: "description", val: stringValue{&r.Description}},
	}
}

// transformOptions binds the options of one transform item to t.
func transformOptions(t *Transform) []option {
	return []option{
		{key: "source-table", val: stringValue{&t.SourceTable}, required: true},
		{key: "projection", val: stringValue{&t.Projection}},
		{key: "filter", val: stringValue{&t.Filter}},
		{key: "primary-keys", val: keysValue{&t.PrimaryKeys}},
		{key: "converter-after-transform", val: enum(&t.Converter, ConverterSoftDelete)},
		{key: "description", val: stringValue{&t.Description}, asIs: label},
	}
}

// settingsOptions binds the options of the pipeline block to p.
func settingsOptions(p *Settings) []option {
	return []option{
		{key: "name", val: stringValue{&p.Name}},
		{key: "parallelism", val: intValue{&p.Parallelism, 1, 1024}, def: "1"},
		{key: "local-time-zone", val: timeZoneValue{&p.LocalTimeZone}},
		{key: "schema.change.behavior", val: enum(&p.SchemaChangeBehavior,
			SchemaEvolve, SchemaTryEvolve, SchemaLenient, SchemaIgnore, SchemaException), def: "EVOLVE"},
		{key: "route-mode", val: enum(&p.RouteMode, route.AllMatch, route.FirstMatch), def: "ALL_MATCH"},
	}
}

// passThrough is an option prefix whose options are kept in a map.
type passThrough struct {
	prefix string
	// checkKey and checkValue validate one option (key without the
	// prefix); nil accepts anything.
	checkKey   func(key string) error
	checkValue func(key, value string) error
	// secret reports whether a key always holds a credential.
	secret func(key string) bool
}

// refusal explains why a known option is not accepted.
type refusal struct {
	key    string // an option name, or a prefix ending in '.'
	reason string
}

const flinkOnly = "is a Flink CDC option that ingest does not support; remove it"

var sourceRefused = []refusal{
	{"debezium.", "is a Debezium option; ingest reads the binlog without Debezium, so debezium.* options are not supported"},
	{"scan.newly-added-table.enabled", "is not supported; use scan.binlog.newly-added-table.enabled"},
	{"scan.startup.specific-offset.skip-events", "is not supported yet"},
	{"scan.startup.specific-offset.skip-rows", "is not supported yet"},
	{"metadata.list", "is not supported: records carry the row's columns only (docs/output.md)"},
	{"metadata-column.include-list", "is not supported: records carry the row's columns only (docs/output.md), not metadata columns; remove it"},
	{"use.legacy.json.format", "is not supported: JSON columns are written as docs/output.md says"},
	{"schema-change.enabled", flinkOnly},
	{"scan.incremental.close-idle-reader.enabled", flinkOnly},
	{"scan.incremental.snapshot.backfill.skip", flinkOnly},
	{"scan.parse.online.schema.changes.enabled", "is not supported yet"},
	{"chunk-meta.group.size", flinkOnly},
	{"chunk-key.even-distribution.factor.upper-bound", flinkOnly},
	{"chunk-key.even-distribution.factor.lower-bound", flinkOnly},
}

// upsertRefused are the options of type kafka that type upsert-kafka refuses.
var upsertRefused = []refusal{
	{"value.format", "is an option of the kafka sink; upsert-kafka writes flat JSON rows (docs/output.md)"},
	{"key.format", "is an option of the kafka sink; upsert-kafka keys records by their primary key as JSON"},
	{"partition.strategy", "is an option of the kafka sink; upsert-kafka partitions by the key (murmur2, as Java)"},
	{"sink.tableId-to-topic.mapping", "is an option of the kafka sink; use the route block to choose topics"},
	{"debezium-json.", "is an option of the kafka sink's debezium-json format, which upsert-kafka does not write"},
	{"canal-json.", "is an option of the kafka sink's canal-json format, which upsert-kafka does not write"},
	{"json.encode.decimal-as-plain-number", "is an option of the kafka sink; upsert-kafka writes DECIMAL at the column's scale (docs/output.md), or as a string with json.encode.decimal-as: string"},
	{"json.encode.ignore-null-fields", "is an option of the kafka sink; upsert-kafka rows always carry every column"},
	{"json.map-null-key.", "is an option of the kafka sink's json key format; MySQL has no MAP columns"},
}

// kafkaRefused are the options of type upsert-kafka that type kafka refuses.
var kafkaRefused = []refusal{
	{"sink.buffer-flush.", "is an option of the upsert-kafka sink: it keeps only the latest record of a key, which would drop change events; remove it"},
	{"json.encode.json-column-as", "is an option of the upsert-kafka sink; the kafka sink writes JSON columns as strings, as Flink CDC does"},
	{"json.encode.decimal-as", "is an option of the upsert-kafka sink; with type kafka use <format>.encode.decimal-as-plain-number (json. for the key, debezium-json. or canal-json. for the value)"},
	{"csv.", "is not an option: Flink CDC's csv key format reads no options; remove it"},
	{"debezium-json.emit.full-table-id.enabled", "is a Realtime Compute (VVR 11.6) option that ingest does not support yet: source names the database and the table; remove it"},
}

// sinkRefusedFor returns the refusals of a sink type: the other type's options, then
// what both refuse.
func sinkRefusedFor(typ string) []refusal {
	if typ == SinkKafka {
		return append(kafkaRefused[:len(kafkaRefused):len(kafkaRefused)], sinkRefused...)
	}
	return append(upsertRefused[:len(upsertRefused):len(upsertRefused)], sinkRefused...)
}

// sinkRefused are the options both sink types refuse.
var sinkRefused = []refusal{
	{"include.schema.changes", "is not supported: schema changes produce no records; see pipeline.schema.change.behavior"},
	{"exclude.schema.changes", "is not supported: schema changes produce no records; see pipeline.schema.change.behavior"},
	{"sink.include.schema.changes", "is not supported: schema changes produce no records; see pipeline.schema.change.behavior"},
	{"sink.exclude.schema.changes", "is not supported: schema changes produce no records; see pipeline.schema.change.behavior"},
	{"sink.parallelism", "is not supported: ingest writes with one producer per pipeline"},
}

var transformRefused = []refusal{
	{"partition-keys", "has no meaning for a Kafka sink; remove it"},
	{"table-options", "has no meaning for a Kafka sink; remove it"},
	{"table-options.delimiter", "has no meaning for a Kafka sink; remove it"},
}

var settingsRefused = []refusal{
	{"execution.runtime-mode", "is not supported: use scan.startup.mode: snapshot or --until-caught-up for a bounded run"},
	{"user-defined-function", "is not supported: transform expressions use the built-in functions only (docs/pipeline.md)"},
	{"model", "is not supported: transform expressions use the built-in functions only (docs/pipeline.md)"},
	{"operator.uid.prefix", flinkOnly},
	{"schema.operator.uid", flinkOnly},
	{"schema-operator.rpc-timeout", flinkOnly},
	{"sink.partitioning.strategy", flinkOnly},
	{"transform.decimal.precision.mode", flinkOnly},
}

// refusedReason returns why key is refused, or "".
func refusedReason(list []refusal, key string) string {
	for _, r := range list {
		if key == r.key || r.key[len(r.key)-1] == '.' && len(key) > len(r.key) && key[:len(r.key)] == r.key {
			return r.reason
		}
	}
	return ""
}

// Reasons of asIs options.
const (
	typeChecked = "the loader checks it: ingest has one source type and two sink types, and the sink type chooses its options"
	noMaps      = "it applies to MAP columns only, which MySQL and MariaDB do not have"
	label       = "a label for people; ingest shows it in plan only"
)

// keys returns the option names of opts, for suggestions.
func keys(opts []option) []string {
	names := make([]string, len(opts))
	for i, o := range opts {
		names[i] = o.key
	}
	return names
}
