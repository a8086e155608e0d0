package runner

import (
	"crypto/tls"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/ingestkit/ingest/cdc"
	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/jdbctls"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/route"
	"github.com/ingestkit/ingest/secrets"
	"github.com/ingestkit/ingest/transform"
	"github.com/ingestkit/ingest/upsert"
)

// routing is what the route package makes of a definition.
type routing struct {
	filter *route.Filter
	table  *route.Table
	keys   *route.KeyOverrides
	// kafka is the sink block of type kafka, nil for upsert-kafka: its topics come from
	// targets (kafka.go).
	kafka   *pipeline.Sink
	targetc sync.Map // change.TableID → []upsert.Target
}

func newRouting(def *pipeline.Definition) (*routing, error) {
	filter, err := route.NewFilter(def.Source.Tables, def.Source.Exclude)
	if err != nil {
		return nil, err
	}
	rules := make([]route.Rule, len(def.Routes))
	for i, r := range def.Routes {
		rules[i] = route.Rule{SourceTable: r.SourceTable, SinkTable: r.SinkTable, ReplaceSymbol: r.ReplaceSymbol, Description: r.Description}
	}
	topic := def.Sink.Topic
	if def.Sink.IsKafka() {
		topic = "" // the routed table ids are still needed: targets applies sink.topic
	}
	table, err := route.NewTable(rules, def.Pipeline.RouteMode, topic)
	if err != nil {
		return nil, err
	}
	transforms := make([]route.Transform, len(def.Transforms))
	for i, t := range def.Transforms {
		transforms[i] = route.Transform{SourceTable: t.SourceTable, PrimaryKeys: t.PrimaryKeys}
	}
	keys, err := route.NewKeyOverrides(transforms)
	if err != nil {
		return nil, err
	}
	rt := &routing{filter: filter, table: table, keys: keys}
	if def.Sink.IsKafka() {
		rt.kafka = &def.Sink
	}
	return rt, nil
}

// newTransforms parses the transform block's projections and filters (validate has
// checked their syntax) with pipeline.local-time-zone.
func newTransforms(def *pipeline.Definition) (*transform.Rules, error) {
	loc := time.Local
	if z := def.Pipeline.LocalTimeZone; z != "" {
		var err error
		if loc, err = pipeline.ParseTimeZone(z); err != nil {
			return nil, def.ErrorAt("pipeline.local-time-zone", "%v", err)
		}
	}
	rules := make([]transform.Rule, len(def.Transforms))
	for i, t := range def.Transforms {
		rules[i] = transform.Rule{SourceTable: t.SourceTable, SoftDelete: t.Converter == pipeline.ConverterSoftDelete}
		var err error
		if t.Projection != "" {
			if rules[i].Projection, err = transform.ParseProjection(t.Projection); err != nil {
				return nil, def.ErrorAt(fmt.Sprintf("transform[%d].projection", i), "%v", err)
			}
		}
		if t.Filter != "" {
			if rules[i].Filter, err = transform.ParseFilter(t.Filter); err != nil {
				return nil, def.ErrorAt(fmt.Sprintf("transform[%d].filter", i), "%v", err)
			}
		}
	}
	return transform.NewRules(rules, loc)
}

// topics returns the topics of a table.
func (r *routing) topics(id change.TableID) []string {
	if r.kafka != nil {
		return targetTopics(r.targets(id))
	}
	return r.table.Topics(id.DB, id.Table)
}

// sourceAddr is the source's host:port.
func sourceAddr(def *pipeline.Definition) string {
	return net.JoinHostPort(def.Source.Hostname, strconv.Itoa(def.Source.Port))
}

// serverIDs returns server-id, or, when the pipeline does not set it, a range derived from
// the pipeline name: stable across restarts (a restarted pipeline replaces its own old
// connection rather than another replica's) and unlikely to meet a real replica's id.
func serverIDs(def *pipeline.Definition) cdc.ServerIDRange {
	if r := def.Source.ServerID; !r.IsZero() {
		return cdc.ServerIDRange{First: r.Start, Last: r.End}
	}
	h := fnv.New32a()
	h.Write([]byte(def.Pipeline.Name))
	first := 5400 + h.Sum32()%(1<<24)
	n := uint32(max(def.Pipeline.Parallelism, 1))
	return cdc.ServerIDRange{First: first, Last: first + n}
}

// sourceConfig maps the source block onto cdc.Config (without a start position).
func sourceConfig(def *pipeline.Definition, r *routing, log *slog.Logger) (cdc.Config, error) {
	s := def.Source
	cfg := cdc.Config{
		Addr: sourceAddr(def), User: s.Username, Password: s.Password.Reveal(),
		ServerID: serverIDs(def), Heartbeat: s.HeartbeatInterval,
		ConnectTimeout: s.ConnectTimeout, ConnectRetries: s.ConnectMaxRetries,
		TinyInt1AsNumber: !s.TreatTinyInt1AsBoolean,
		Tables:           r.filter.Match, Keys: r.keys.PrimaryKeys,
		Logger: log,
	}
	tlsCfg, err := sourceTLS(s.JDBCProperties, s.Hostname, log)
	if err != nil {
		return cdc.Config{}, err
	}
	cfg.TLS = tlsCfg
	switch s.StartupMode {
	case pipeline.StartupEarliestOffset:
		cfg.Startup = cdc.StartEarliest
	case pipeline.StartupSpecificOffset:
		cfg.Startup = cdc.StartSpecific
		pos, err := specificOffset(s)
		if err != nil {
			return cdc.Config{}, err
		}
		cfg.StartPosition = pos
	case pipeline.StartupTimestamp:
		cfg.Startup = cdc.StartTimestamp
		cfg.StartTime = time.UnixMilli(s.StartupTimestampMillis)
	default:
		cfg.Startup = cdc.StartLatest
	}
	return cfg, nil
}

// chunkKeys returns the snapshot's chunk key columns of each table
// (scan.incremental.snapshot.chunk.key-column), or nil when the option is not set.
func chunkKeys(s *pipeline.Source) func(change.TableID) []string {
	if len(s.ChunkKeyColumns) == 0 {
		return nil
	}
	return func(id change.TableID) []string {
		if col, ok := s.ChunkKeyColumn(id.DB, id.Table); ok {
			return []string{col}
		}
		return nil
	}
}

func specificOffset(s pipeline.Source) (binlogpos.Position, error) {
	if s.SpecificOffsetGTIDSet != "" {
		pos, err := binlogpos.ParsePosition(s.SpecificOffsetGTIDSet)
		if err != nil {
			return binlogpos.Position{}, fmt.Errorf("source: scan.startup.specific-offset.gtid-set: %w", err)
		}
		return pos, nil
	}
	return binlogpos.Position{File: s.SpecificOffsetFile, Offset: uint32(s.SpecificOffsetPos)}, nil
}

// sinkConfig maps the sink block onto upsert.Config (without the Acked callback).
func sinkConfig(def *pipeline.Definition, r *routing, log *slog.Logger) (upsert.Config, error) {
	s := def.Sink
	p, err := upsert.ParseProperties(secrets.RevealMap(s.Properties))
	if err != nil {
		return upsert.Config{}, err
	}
	g, err := upsert.ParseGuarantee(s.DeliveryGuarantee.String())
	if err != nil {
		return upsert.Config{}, err
	}
	headers := make([]upsert.Header, len(s.CustomHeaders))
	for i, h := range s.CustomHeaders {
		headers[i] = upsert.Header{Key: h.Key, Value: h.Value}
	}
	if s.IsKafka() {
		return kafkaSinkConfig(def, r, p, g, headers, log)
	}
	cfg := upsert.Config{
		Pipeline: def.Pipeline.Name, Properties: p, Guarantee: g,
		TransactionalID: s.TransactionalIDPrefix + def.Pipeline.Name,
		Topics:          r.topics,
		Encode: upsert.EncodeOptions{
			JSONAsObject: s.JSON.JSONColumnAs == pipeline.JSONColumnAsObject, DecimalAsString: s.JSON.DecimalAs == pipeline.DecimalAsString,
			TimeAsMicros: s.JSON.TimeAs == pipeline.TimeAsMicros,
			TableHeaders: s.AddTableIDToHeader, CustomHeaders: headers,
		},
		BufferMaxRows: s.BufferFlushMaxRows, BufferInterval: s.BufferFlushInterval,
		AutoCreate: s.TopicAutoCreate, Partitions: int32(s.TopicPartitions), ReplicationFactor: int16(s.TopicReplicationFactor),
		TransactionInterval: s.TransactionInterval, TransactionMaxBytes: s.TransactionMaxBytes,
		SkipOversized: s.SkipOversizedRecords, TruncateTombstones: s.TruncateTombstones, Logger: log,
	}
	if s.JSON.TimestampFormat == pipeline.TimestampISO8601 {
		cfg.Encode.Timestamps = upsert.TimestampISO8601
	}
	err = apsaraSink(def, &cfg, log) // ApsaraMQ: topics through the OpenAPI, no idempotence
	return cfg, err
}

// sourceTLS maps jdbc.properties.* onto the TLS settings of every source connection (the
// binlog stream's and the snapshot's), and warns once when TLS does not verify the server.
func sourceTLS(props map[string]secrets.Secret, host string, log *slog.Logger) (*tls.Config, error) {
	st, err := jdbctls.New(secrets.RevealMap(props), host)
	if err != nil {
		return nil, err
	}
	if st.Unverified() {
		log.Warn("source: TLS to MySQL without verifying the server's certificate: the connection is encrypted but a man in the middle can read it; set jdbc.properties.sslMode: VERIFY_CA (or VERIFY_IDENTITY) with trustCertificateKeyStoreUrl",
			"sslMode", string(st.Mode))
	}
	return st.Config, nil
}
