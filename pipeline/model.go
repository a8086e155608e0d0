package pipeline

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ingestkit/ingest/route"
	"github.com/ingestkit/ingest/secrets"
)

// Definition is a loaded, validated pipeline with its placeholders
// resolved and its defaults applied.
type Definition struct {
	// File is the pipeline file's name as given to [Load] or [Parse].
	File string
	// Source is the source block.
	Source Source
	// Sink is the sink block.
	Sink Sink
	// Routes are the items of the route block, in order.
	Routes []Route
	// Transforms are the items of the transform block, in order.
	Transforms []Transform
	// Pipeline is the pipeline block.
	Pipeline Settings
	// Pos is where each block, list item and option that the file sets
	// was written, keyed by path: "sink", "route[1]", "source.port",
	// "sink.properties.acks", "route[0].sink-table". Options left at their
	// default have no entry. Use [Definition.ErrorAt] to report a problem
	// found later at the right place.
	Pos map[string]Position

	secret map[string]bool // paths whose value is secret
}

// Position is a place in a pipeline file; Line and Col count from 1.
type Position struct {
	Line, Col int
}

// IsSecret reports whether the option at path holds a secret value: a
// credential option such as source.password, or any option whose value
// contains a ${secret_values.NAME} placeholder. Output must mask such
// values even when their field is a plain string.
func (d *Definition) IsSecret(path string) bool { return d.secret[path] }

// ErrorAt returns an [Error] at the position of path, or of the closest
// enclosing path that the file sets ("source.port" falls back to
// "source"), or at 1:1. It lets runtime code point at the YAML, as in
// def.ErrorAt("source.tables", "no table matches %q", tables).
func (d *Definition) ErrorAt(path, format string, args ...any) *Error {
	pos := d.position(path)
	return &Error{File: d.File, Line: pos.Line, Col: pos.Col, Path: path, Msg: fmt.Sprintf(format, args...)}
}

func (d *Definition) position(path string) Position {
	for p := path; p != ""; p = parentPath(p) {
		if pos, ok := d.Pos[p]; ok {
			return pos
		}
	}
	return Position{Line: 1, Col: 1}
}

// Source is the source block (type mysql). Field comments name the option.
type Source struct {
	Type     string         // type: always "mysql"
	Name     string         // name
	Hostname string         // hostname
	Port     int            // port
	Username string         // username
	Password secrets.Secret // password
	// Tables is the tables pattern (route.Selector syntax).
	Tables string
	// Exclude is tables.exclude, empty when not set.
	Exclude string
	// ServerID is server-id; the zero range means not set, and the
	// runtime then picks a range of Pipeline.Parallelism ids.
	ServerID       ServerIDRange
	ServerTimeZone string      // server-time-zone; empty: the server's own
	StartupMode    StartupMode // scan.startup.mode
	// SpecificOffsetFile, SpecificOffsetPos and SpecificOffsetGTIDSet are
	// scan.startup.specific-offset.file, .pos and .gtid-set.
	SpecificOffsetFile    string
	SpecificOffsetPos     int64
	SpecificOffsetGTIDSet string
	// StartupTimestampMillis is scan.startup.timestamp-millis.
	StartupTimestampMillis int64
	ChunkSize              int // scan.incremental.snapshot.chunk.size
	FetchSize              int // scan.snapshot.fetch.size
	// ChunkKeyColumns is scan.incremental.snapshot.chunk.key-column: the column each table's
	// snapshot chunks are split on; nil when not set (the primary key).
	ChunkKeyColumns        []ChunkKey
	ConnectTimeout         time.Duration // connect.timeout
	ConnectMaxRetries      int           // connect.max-retries
	ConnectionPoolSize     int           // connection.pool.size
	HeartbeatInterval      time.Duration // heartbeat.interval; 0 disables
	TreatTinyInt1AsBoolean bool          // treat-tinyint1-as-boolean.enabled
	// BinlogNewlyAddedTables is scan.binlog.newly-added-table.enabled.
	BinlogNewlyAddedTables bool
	// NewlyAddedKeyless is scan.binlog.newly-added-table.keyless: what becomes of a table
	// created while streaming that still has no key (nor transform primary-keys) when its
	// first rows arrive.
	NewlyAddedKeyless KeylessPolicy
	// IncludeComments, OnlyDeserializeCaptured and UnboundedChunkFirst are the Realtime
	// Compute options include-comments.enabled,
	// scan.only.deserialize.captured.tables.changelog.enabled and
	// scan.incremental.snapshot.unbounded-chunk-first.enabled: ingest behaves as they ask
	// whatever their values (docs/pipeline.md).
	IncludeComments         bool
	OnlyDeserializeCaptured bool
	UnboundedChunkFirst     bool
	// JDBCProperties are the jdbc.properties.* options, keyed without the
	// prefix. Every value is a Secret; Definition.IsSecret tells which are
	// really secret.
	JDBCProperties map[string]secrets.Secret
}

// ChunkKey is one entry of scan.incremental.snapshot.chunk.key-column.
type ChunkKey struct {
	// Tables selects the tables the entry is for; nil for every table (the option is
	// then a bare column name).
	Tables *route.Selector
	Column string
}

// ChunkKeyColumn returns the chunk key column that scan.incremental.snapshot.chunk.key-column
// gives the table db.table, and whether it gives one. When several entries match, the last
// one wins, as in Flink CDC.
func (s *Source) ChunkKeyColumn(db, table string) (string, bool) {
	col, ok := "", false
	for _, k := range s.ChunkKeyColumns {
		if k.Tables == nil || k.Tables.Match(db, table) {
			col, ok = k.Column, true
		}
	}
	return col, ok
}

// ServerIDRange is the server-id option: the ids Start through End, both
// included. A single id has Start == End; the zero value means not set.
type ServerIDRange struct {
	Start, End uint32
}

// Size returns the number of ids in the range.
func (r ServerIDRange) Size() int {
	if r.IsZero() {
		return 0
	}
	return int(r.End-r.Start) + 1
}

// IsZero reports whether the range is not set.
func (r ServerIDRange) IsZero() bool { return r == ServerIDRange{} }

// String returns "5400" or "5400-5408", or "" when not set.
func (r ServerIDRange) String() string {
	switch {
	case r.IsZero():
		return ""
	case r.Start == r.End:
		return strconv.FormatUint(uint64(r.Start), 10)
	}
	return fmt.Sprintf("%d-%d", r.Start, r.End)
}

// KeylessPolicy is the source option scan.binlog.newly-added-table.keyless.
type KeylessPolicy string

// The values of scan.binlog.newly-added-table.keyless.
const (
	// KeylessSkip leaves the table out (a WARN, ingest_keyless_tables_skipped_total and a
	// line of plan); the pipeline goes on with the others. The default.
	KeylessSkip KeylessPolicy = "skip"
	// KeylessFail stops the pipeline with the table's name and the fixes.
	KeylessFail KeylessPolicy = "fail"
)

// String returns the option value.
func (k KeylessPolicy) String() string { return string(k) }

// StartupMode is the source option scan.startup.mode.
type StartupMode string

// The startup modes of Flink CDC's MySQL source.
const (
	StartupInitial        StartupMode = "initial"
	StartupSnapshot       StartupMode = "snapshot"
	StartupLatestOffset   StartupMode = "latest-offset"
	StartupEarliestOffset StartupMode = "earliest-offset"
	StartupSpecificOffset StartupMode = "specific-offset"
	StartupTimestamp      StartupMode = "timestamp"
)

// String returns the option value.
func (m StartupMode) String() string { return string(m) }

// Sink is the sink block (type upsert-kafka or kafka). Field comments name
// the option.
type Sink struct {
	Type string // type: "upsert-kafka" (SinkUpsertKafka) or "kafka" (SinkKafka)
	Name string // name
	// BootstrapServers is properties.bootstrap.servers, also found in
	// Properties.
	BootstrapServers string
	// Properties are the properties.* options (Kafka producer configs in
	// their Java names), keyed without the prefix. Every value is a
	// Secret; Definition.IsSecret("sink.properties."+key) tells which are
	// really secret, and sasl.jaas.config, sasl.password and *.password
	// always are.
	Properties map[string]secrets.Secret
	// Topic is the topic option: when set, every table goes to this topic.
	Topic                  string
	DeliveryGuarantee      DeliveryGuarantee // sink.delivery-guarantee
	TransactionalIDPrefix  string            // sink.transactional-id-prefix
	AddTableIDToHeader     bool              // sink.add-tableId-to-header-enabled
	CustomHeaders          []Header          // sink.custom-header
	TopicAutoCreate        bool              // sink.topic.auto-create
	TopicPartitions        int               // sink.topic.partitions; 0: the cluster's default
	TopicReplicationFactor int               // sink.topic.replication-factor; 0: the cluster's default
	// BufferFlushMaxRows and BufferFlushInterval are sink.buffer-flush.*;
	// both 0 when buffering is off.
	BufferFlushMaxRows   int
	BufferFlushInterval  time.Duration
	SkipOversizedRecords bool // sink.skip-oversized-records
	// TruncateTombstones is sink.truncate.tombstones (upsert-kafka): TRUNCATE TABLE, DROP
	// TABLE and RENAME TABLE away tombstone the table's keys in its topics.
	TruncateTombstones  bool
	TransactionInterval time.Duration // sink.transaction.interval
	TransactionMaxBytes int64         // sink.transaction.max-bytes
	JSON                JSONOptions
	Aliyun              Aliyun
	// Kafka holds the options of type kafka only (Flink CDC's Kafka pipeline sink).
	Kafka KafkaOptions
}

// The sink types.
const (
	// SinkUpsertKafka writes flat JSON rows keyed by the primary key, with tombstones.
	SinkUpsertKafka = "upsert-kafka"
	// SinkKafka writes Flink CDC's change events (debezium-json or canal-json).
	SinkKafka = "kafka"
)

// IsKafka reports whether the sink is type kafka (change events) rather than upsert-kafka.
func (s *Sink) IsKafka() bool { return s.Type == SinkKafka }

// KafkaOptions are the options of Flink CDC's Kafka pipeline sink (type kafka).
type KafkaOptions struct {
	PartitionStrategy PartitionStrategy // partition.strategy
	KeyFormat         KeyFormat         // key.format
	ValueFormat       ValueFormat       // value.format
	// TopicMapping is sink.tableId-to-topic.mapping, in order; nil when not set.
	TopicMapping []TopicMapping
	// IncludeSchema is debezium-json.include-schema.enabled.
	IncludeSchema bool
	// KeyJSON, Debezium and Canal are the json.*, debezium-json.* and canal-json.* format
	// options (the key's json.timestamp-format.standard is Sink.JSON.TimestampFormat).
	KeyJSON, Debezium, Canal FormatOptions
}

// FormatOptions are the options one JSON format of the kafka sink reads (Flink's
// JsonFormatOptions, prefixed with the format's name).
type FormatOptions struct {
	TimestampFormat   TimestampFormat // <format>.timestamp-format.standard
	DecimalPlain      bool            // <format>.encode.decimal-as-plain-number
	IgnoreNullFields  bool            // <format>.encode.ignore-null-fields
	MapNullKeyMode    MapNullKeyMode  // <format>.map-null-key.mode
	MapNullKeyLiteral string          // <format>.map-null-key.literal
}

// MapNullKeyMode is <format>.map-null-key.mode.
type MapNullKeyMode string

// The map-null-key modes of Flink's JSON format.
const (
	MapNullFail    MapNullKeyMode = "FAIL"
	MapNullDrop    MapNullKeyMode = "DROP"
	MapNullLiteral MapNullKeyMode = "LITERAL"
)

// String returns the option value.
func (m MapNullKeyMode) String() string { return string(m) }

// TopicMapping is one entry of sink.tableId-to-topic.mapping: the tables a selector
// matches go to Topic.
type TopicMapping struct {
	Tables *route.Selector
	Topic  string
}

// MappedTopic returns the topic sink.tableId-to-topic.mapping gives the (routed) table
// id name, split as db.table, and whether an entry matches: the first that does, as in
// Flink CDC.
func (k *KafkaOptions) MappedTopic(db, table string) (string, bool) {
	for _, m := range k.TopicMapping {
		if m.Tables.Match(db, table) {
			return m.Topic, true
		}
	}
	return "", false
}

// PartitionStrategy is partition.strategy.
type PartitionStrategy string

// The partition strategies of Flink CDC's Kafka sink.
const (
	PartitionAllToZero PartitionStrategy = "all-to-zero"
	PartitionHashByKey PartitionStrategy = "hash-by-key"
)

// String returns the option value.
func (p PartitionStrategy) String() string { return string(p) }

// KeyFormat is key.format.
type KeyFormat string

// The key formats.
const (
	KeyJSON KeyFormat = "json"
	KeyCSV  KeyFormat = "csv"
)

// String returns the option value.
func (k KeyFormat) String() string { return string(k) }

// ValueFormat is value.format.
type ValueFormat string

// The value formats.
const (
	ValueDebeziumJSON ValueFormat = "debezium-json"
	ValueCanalJSON    ValueFormat = "canal-json"
)

// String returns the option value.
func (v ValueFormat) String() string { return string(v) }

// Header is one entry of sink.custom-header.
type Header struct {
	Key, Value string
}

// DeliveryGuarantee is the sink option sink.delivery-guarantee.
type DeliveryGuarantee string

// The delivery guarantees; see docs/output.md.
const (
	DeliveryNone        DeliveryGuarantee = "none"
	DeliveryAtLeastOnce DeliveryGuarantee = "at-least-once"
	DeliveryExactlyOnce DeliveryGuarantee = "exactly-once"
)

// String returns the option value.
func (g DeliveryGuarantee) String() string { return string(g) }

// JSONOptions are the json.* sink options of docs/output.md.
type JSONOptions struct {
	TimestampFormat TimestampFormat // json.timestamp-format.standard
	JSONColumnAs    JSONColumnAs    // json.encode.json-column-as
	DecimalAs       DecimalAs       // json.encode.decimal-as
	TimeAs          TimeAs          // json.encode.time-as
}

// TimestampFormat is json.timestamp-format.standard.
type TimestampFormat string

// The timestamp formats.
const (
	TimestampSQL     TimestampFormat = "SQL"
	TimestampISO8601 TimestampFormat = "ISO-8601"
)

// String returns the option value.
func (f TimestampFormat) String() string { return string(f) }

// JSONColumnAs is json.encode.json-column-as.
type JSONColumnAs string

// How JSON columns are written.
const (
	JSONColumnAsString JSONColumnAs = "string"
	JSONColumnAsObject JSONColumnAs = "object"
)

// String returns the option value.
func (j JSONColumnAs) String() string { return string(j) }

// DecimalAs is json.encode.decimal-as.
type DecimalAs string

// How DECIMAL columns are written.
const (
	DecimalAsNumber DecimalAs = "number"
	DecimalAsString DecimalAs = "string"
)

// String returns the option value.
func (d DecimalAs) String() string { return string(d) }

// TimeAs is json.encode.time-as.
type TimeAs string

// How TIME columns are written.
const (
	// TimeAsString writes "[-]HH:mm:ss[.f]" (the default).
	TimeAsString TimeAs = "string"
	// TimeAsMicros writes the signed number of microseconds.
	TimeAsMicros TimeAs = "micros"
)

// String returns the option value.
func (t TimeAs) String() string { return string(t) }

// Aliyun holds the five aliyun.kafka.* options: the ApsaraMQ for Kafka
// OpenAPI credentials and instance, used to create topics.
type Aliyun struct {
	// AccessKeyID and AccessKeySecret are empty together when the Alibaba
	// Cloud default credential chain is to be used.
	AccessKeyID     secrets.Secret
	AccessKeySecret secrets.Secret
	InstanceID      string
	Endpoint        string // the OpenAPI endpoint, e.g. alikafka.cn-hangzhou.aliyuncs.com
	RegionID        string
}

// Enabled reports whether the sink is ApsaraMQ for Kafka, that is whether
// the aliyun.kafka.* options are set.
func (a Aliyun) Enabled() bool { return a.InstanceID != "" }

// Route is one item of the route block.
type Route struct {
	SourceTable   string // source-table
	SinkTable     string // sink-table: the topic
	ReplaceSymbol string // replace-symbol
	Description   string // description
}

// Transform is one item of the transform block.
type Transform struct {
	SourceTable string // source-table
	// Projection is projection, the expression text as the file gives it ("" when not
	// set); package transform parses it. validate has checked its syntax.
	Projection string
	// Filter is filter, the expression text ("" when not set).
	Filter string
	// PrimaryKeys is primary-keys split into column names
	// (route.SplitKeys); nil when not set.
	PrimaryKeys []string
	// Converter is converter-after-transform: "" or ConverterSoftDelete.
	Converter   Converter
	Description string // description
}

// Converter is the transform option converter-after-transform.
type Converter string

// ConverterSoftDelete turns a delete into an upsert of the deleted row (docs/pipeline.md).
const ConverterSoftDelete Converter = "SOFT_DELETE"

// String returns the option value.
func (c Converter) String() string { return string(c) }

// Settings is the pipeline block.
type Settings struct {
	// Name identifies the pipeline's state, transactional id and metrics.
	// When the file does not set it, it is derived from the file name.
	Name string
	// Parallelism is the number of snapshot readers.
	Parallelism int
	// LocalTimeZone is local-time-zone; empty: the system's zone.
	LocalTimeZone        string
	SchemaChangeBehavior SchemaChangeBehavior // schema.change.behavior
	RouteMode            route.Mode           // route-mode
}

// SchemaChangeBehavior is the pipeline option schema.change.behavior.
type SchemaChangeBehavior string

// The schema change behaviours, Flink CDC's five; what each does to an upsert topic is in
// docs/pipeline.md and the schemachange package.
const (
	// SchemaEvolve: later rows follow the new table shape (the default).
	SchemaEvolve SchemaChangeBehavior = "EVOLVE"
	// SchemaTryEvolve: as EVOLVE (an upsert topic has no sink schema that could refuse a
	// change).
	SchemaTryEvolve SchemaChangeBehavior = "TRY_EVOLVE"
	// SchemaLenient: columns are only ever added: a dropped or renamed-away column stays,
	// null; a new one is appended at the end.
	SchemaLenient SchemaChangeBehavior = "LENIENT"
	// SchemaIgnore: rows keep the column set of the start.
	SchemaIgnore SchemaChangeBehavior = "IGNORE"
	// SchemaException: the pipeline stops on the first DDL that changes a captured table.
	SchemaException SchemaChangeBehavior = "EXCEPTION"
)

// String returns the option value.
func (b SchemaChangeBehavior) String() string { return string(b) }
