package pipeline

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/ingestkit/ingest/route"
	"github.com/ingestkit/ingest/transform"
)

// rules are the checks that involve more than one option. Each reports
// its problems at the option that has to change and says why.
var rules = []func(*loader){
	checkPipelineName,
	checkSpecificOffset,
	checkTimestampStartup,
	checkServerIDRange,
	checkHeartbeat,
	checkPoolSize,
	checkBufferFlush,
	checkTopicSettings,
	checkTransactionOptions,
	checkExactlyOnceProducer,
	checkTopicWithRoutes,
	checkAliyunComplete,
	checkAliyunExactlyOnce,
	checkAliyunProducer,
	checkAliyunTopics,
	checkTablePatterns,
	checkRoutes,
	checkTransforms,
	checkKafkaFormats,
	checkKafkaTopicMapping,
}

// validate runs the cross-option rules.
func (l *loader) validate() {
	for _, rule := range rules {
		rule(l)
	}
}

// isSet reports whether the file gives the option at path.
func (l *loader) isSet(path string) bool {
	_, ok := l.def.Pos[path]
	return ok
}

// usable reports whether the blocks and options at paths are present (or
// defaulted) and valid, so that a rule about them makes sense.
func (l *loader) usable(paths ...string) bool {
	for _, p := range paths {
		for q := p; q != ""; q = parentPath(q) {
			if l.bad[q] {
				return false
			}
		}
	}
	return true
}

// at reports a problem at the option at path, or at its block when the
// file does not give the option.
func (l *loader) at(path, format string, args ...any) {
	p := l.def.position(path)
	l.errorf(p, path, format, args...)
}

// MaxNameLen is the longest pipeline.name: it is a directory name under .ingest/ (255
// bytes on most file systems), part of the Kafka transactional id and a metric label.
const MaxNameLen = 200

// checkPipelineName refuses a pipeline.name that cannot be a directory of its own (".",
// "..", a path separator), a transactional id and a metric label: any printable characters
// but '/' and '\\' (published Flink CDC jobs have names such as "Sync MySQL Database to
// Kafka"), at most MaxNameLen bytes. The value is not printed: it may be a secret.
func checkPipelineName(l *loader) {
	name := l.def.Pipeline.Name
	if l.bad["pipeline.name"] || strings.TrimSpace(name) == "" {
		return // refused already, or empty (loadSettings says so)
	}
	const fix = "; use printable characters other than '/' and '\\' (it names the state directory .ingest/<name>, the Kafka transactional id and the metrics' pipeline label)"
	switch {
	case name == "." || name == "..":
		l.at("pipeline.name", "%q is not a name of its own: the state would be written to .ingest/%s"+fix, name, name)
	case len(name) > MaxNameLen:
		l.at("pipeline.name", "is %d characters long, more than %d"+fix, len(name), MaxNameLen)
	default:
		if i := strings.IndexFunc(name, func(r rune) bool { return !nameChar(r) }); i >= 0 {
			l.at("pipeline.name", "has the character %q at %d, which a name may not have"+fix, name[i:i+1], i+1)
		}
	}
}

// nameChar reports whether r may be in a pipeline name: a printable character (a space
// included) that is not a path separator.
func nameChar(r rune) bool {
	return r != '/' && r != '\\' && (r == ' ' || unicode.IsPrint(r))
}

const (
	startupMode = "source.scan.startup.mode"
	offsetFile  = "source.scan.startup.specific-offset.file"
	offsetPos   = "source.scan.startup.specific-offset.pos"
	offsetGTID  = "source.scan.startup.specific-offset.gtid-set"
	startupTS   = "source.scan.startup.timestamp-millis"
	delivery    = "sink.sink.delivery-guarantee"
)

func checkSpecificOffset(l *loader) {
	if !l.usable(startupMode) {
		return
	}
	file, position, gtid := l.isSet(offsetFile), l.isSet(offsetPos), l.isSet(offsetGTID)
	if l.def.Source.StartupMode != StartupSpecificOffset {
		for _, p := range []string{offsetFile, offsetPos, offsetGTID} {
			if l.isSet(p) {
				l.at(p, "is used only with scan.startup.mode: specific-offset; remove it or set that mode")
			}
		}
		return
	}
	switch {
	case gtid && (file || position):
		l.at(offsetGTID, "give either a GTID set or a binlog file and position, not both: they would name two start positions")
	case gtid, file && position:
	case file:
		l.at(offsetFile, "requires scan.startup.specific-offset.pos: a binlog position is a file and an offset in it")
	case position:
		l.at(offsetPos, "requires scan.startup.specific-offset.file: a binlog position is a file and an offset in it")
	default:
		l.at(startupMode, "specific-offset requires scan.startup.specific-offset.file and .pos, or scan.startup.specific-offset.gtid-set: where to start reading the binlog")
	}
}

func checkTimestampStartup(l *loader) {
	if !l.usable(startupMode) {
		return
	}
	timestamp := l.def.Source.StartupMode == StartupTimestamp
	switch {
	case timestamp && !l.isSet(startupTS):
		l.at(startupMode, "timestamp requires scan.startup.timestamp-millis: the time to start reading the binlog from")
	case !timestamp && l.isSet(startupTS):
		l.at(startupTS, "is used only with scan.startup.mode: timestamp; remove it or set that mode")
	}
}

// checkServerIDRange: each snapshot reader follows the binlog for its
// chunks (the watermark algorithm of ARCHITECTURE.md) over a connection of
// its own, and MySQL disconnects a replica whose server id another one is
// using, so the range needs one id per reader. A single id is enough only
// with parallelism 1.
func checkServerIDRange(l *loader) {
	const p = "source.server-id"
	if !l.isSet(p) || !l.usable(p, "pipeline.parallelism") {
		return
	}
	n, want := l.def.Source.ServerID.Size(), l.def.Pipeline.Parallelism
	if n < want {
		l.at(p, "has %s but pipeline.parallelism is %d: each snapshot reader reads the binlog with its own server id, so give a range of at least %d ids, such as %d-%d",
			plural(n, "id"), want, want, l.def.Source.ServerID.Start, uint64(l.def.Source.ServerID.Start)+uint64(want)-1)
	}
}

// checkHeartbeat refuses heartbeat.interval 0, which is Debezium's "off": ingest needs
// the server's heartbeats to tell a silent connection from a dead one, and to move the
// stored position on while only tables it does not capture change.
func checkHeartbeat(l *loader) {
	const p = "source.heartbeat.interval"
	if l.isSet(p) && l.usable(p) && l.def.Source.HeartbeatInterval == 0 {
		l.at(p, "0 (no heartbeats) is not supported: ingest needs the server's heartbeats to notice a dead connection "+
			"and to move the position on while only tables it does not capture change; give a duration such as 30s (the default)")
	}
}

// checkPoolSize: connection.pool.size bounds the connection pool. The snapshot's pool holds
// up to pipeline.parallelism + 2 connections (its readers, the
// planner and the hand-off: cdc/snapshot/config.go), so a smaller bound cannot be kept.
func checkPoolSize(l *loader) {
	const p = "source.connection.pool.size"
	if !l.isSet(p) || !l.usable(p, "pipeline.parallelism") {
		return
	}
	if need := l.def.Pipeline.Parallelism + 2; l.def.Source.ConnectionPoolSize < need {
		l.at(p, "is %d, but the snapshot's connection pool holds pipeline.parallelism + 2 = %d connections; raise it to %d or lower pipeline.parallelism",
			l.def.Source.ConnectionPoolSize, need, need)
	}
}

func checkBufferFlush(l *loader) {
	const rows, interval = "sink.sink.buffer-flush.max-rows", "sink.sink.buffer-flush.interval"
	switch r, i := l.isSet(rows), l.isSet(interval); {
	case r && !i:
		l.at(rows, "requires sink.buffer-flush.interval: the buffer is flushed when either is reached, so set both or neither")
	case i && !r:
		l.at(interval, "requires sink.buffer-flush.max-rows: the buffer is flushed when either is reached, so set both or neither")
	}
}

func checkTopicSettings(l *loader) {
	if l.def.Sink.TopicAutoCreate || !l.usable("sink.sink.topic.auto-create") {
		return
	}
	for _, p := range []string{"sink.sink.topic.partitions", "sink.sink.topic.replication-factor"} {
		if l.isSet(p) {
			l.at(p, "is used only with sink.topic.auto-create: true, to create missing topics; remove it")
		}
	}
}

func checkTransactionOptions(l *loader) {
	if l.def.Sink.DeliveryGuarantee == DeliveryExactlyOnce || !l.usable(delivery) {
		return
	}
	for _, p := range []string{"sink.sink.transactional-id-prefix", "sink.sink.transaction.interval",
		"sink.sink.transaction.max-bytes", "sink.properties.transaction.timeout.ms"} {
		if l.isSet(p) {
			l.at(p, "is used only with sink.delivery-guarantee: exactly-once, which writes in Kafka transactions; remove it")
		}
	}
}

func checkExactlyOnceProducer(l *loader) {
	if l.def.Sink.DeliveryGuarantee != DeliveryExactlyOnce {
		return
	}
	props := l.def.Sink.Properties
	if v, ok := props["enable.idempotence"]; ok && strings.EqualFold(v.Reveal(), "false") {
		l.at("sink.properties.enable.idempotence", "must not be false with exactly-once: Kafka transactions need the idempotent producer")
	}
	if v, ok := props["acks"]; ok && v.Reveal() != "all" && v.Reveal() != "-1" {
		l.at("sink.properties.acks", "must be all with exactly-once: Kafka transactions need every in-sync replica to acknowledge")
	}
}

func checkTopicWithRoutes(l *loader) {
	// With type kafka a route still names the table in the change events.
	if l.def.Sink.Topic != "" && len(l.def.Routes) > 0 && !l.def.Sink.IsKafka() {
		l.at("sink.topic", "sends every table to this one topic, so the route block would have no effect; remove one of them")
	}
}

// aliyunKeys are the five aliyun.kafka.* options.
var aliyunKeys = []string{"accessKeyId", "accessKeySecret", "instanceId", "endpoint", "regionId"}

// aliyunSet reports whether any aliyun.kafka.* option is given: the sink
// is then ApsaraMQ for Kafka.
func (l *loader) aliyunSet() bool {
	for _, k := range aliyunKeys {
		if l.isSet("sink.aliyun.kafka." + k) {
			return true
		}
	}
	return false
}

func checkAliyunComplete(l *loader) {
	if !l.aliyunSet() {
		return
	}
	first := ""
	for _, k := range aliyunKeys {
		if p := "sink.aliyun.kafka." + k; l.isSet(p) && first == "" {
			first = p
		}
	}
	for _, k := range aliyunKeys[2:] {
		if !l.isSet("sink.aliyun.kafka." + k) {
			l.at(first, "requires aliyun.kafka.%s: instanceId, endpoint and regionId name the ApsaraMQ instance whose OpenAPI creates the topics", k)
		}
	}
	id, secret := l.isSet("sink.aliyun.kafka.accessKeyId"), l.isSet("sink.aliyun.kafka.accessKeySecret")
	switch {
	case id && !secret:
		l.at("sink.aliyun.kafka.accessKeyId", "requires aliyun.kafka.accessKeySecret; leave both out to use the Alibaba Cloud default credential chain")
	case secret && !id:
		l.at("sink.aliyun.kafka.accessKeySecret", "requires aliyun.kafka.accessKeyId; leave both out to use the Alibaba Cloud default credential chain")
	}
}

func checkAliyunExactlyOnce(l *loader) {
	if l.aliyunSet() && l.def.Sink.DeliveryGuarantee == DeliveryExactlyOnce {
		l.at(delivery, "exactly-once is not possible with ApsaraMQ for Kafka (aliyun.kafka.* is set): it has no transactions; use at-least-once")
	}
}

func checkAliyunProducer(l *loader) {
	if !l.aliyunSet() {
		return
	}
	props := l.def.Sink.Properties
	if v, ok := props["compression.type"]; ok && strings.EqualFold(v.Reveal(), "zstd") {
		l.at("sink.properties.compression.type", "ApsaraMQ for Kafka does not accept zstd-compressed writes; use lz4, snappy or gzip")
	}
	if v, ok := props["enable.idempotence"]; ok && strings.EqualFold(v.Reveal(), "true") {
		l.at("sink.properties.enable.idempotence", "ApsaraMQ for Kafka does not support idempotent writes; remove it (ingest turns them off for ApsaraMQ)")
	}
}

// checkAliyunTopics checks the topic names that are known offline against
// ApsaraMQ's rules. The names of tables that no route matches are known
// only online (ingest plan).
func checkAliyunTopics(l *loader) {
	if !l.aliyunSet() {
		return
	}
	if t := l.def.Sink.Topic; t != "" {
		if msg := apsaraTopicProblem(t, true); msg != "" {
			if l.def.IsSecret("sink.topic") {
				// The message may quote a character of the value.
				msg = "invalid value (hidden, it comes from a secret): ApsaraMQ topic names are 3 to 64 letters, digits, '_' and '-'"
			}
			l.at("sink.topic", "%s", msg)
		}
		return
	}
	if l.def.Sink.IsKafka() && len(l.def.Sink.Kafka.TopicMapping) > 0 {
		checkAliyunMappedTopics(l) // the mapping names the topics; routes name table ids
		return
	}
	if len(l.def.Routes) == 0 {
		l.at("sink.aliyun.kafka.instanceId", "without routes every table goes to the topic <db>.<table>, and ApsaraMQ topic names cannot contain '.'; add routes whose sink-table names valid topics")
	}
	for i, r := range l.def.Routes {
		p := routePath(i, "sink-table")
		if msg := apsaraTopicProblem(literalTopic(r)); msg != "" && !l.def.IsSecret(p) {
			l.at(p, "%s", msg)
		}
	}
}

// apsaraTopicProblem says what is wrong with an ApsaraMQ topic name
// (letters, digits, '_' and '-', 3 to 64 characters), or returns "". When
// whole is false, name is only the literal part of a name, and its length
// is not checked.
func apsaraTopicProblem(name string, whole bool) string {
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Sprintf("ApsaraMQ topic names may contain only letters, digits, '_' and '-', not %q", c)
		}
	}
	if whole && (len(name) < 3 || len(name) > 64) {
		return "ApsaraMQ topic names are 3 to 64 characters long"
	}
	return ""
}

// literalTopic returns the sink-table of r without its replace-symbol and
// $n references, whose replacements are known only online, and whether
// nothing was removed.
func literalTopic(r Route) (string, bool) {
	s := r.SinkTable
	if r.ReplaceSymbol != "" {
		lit := strings.ReplaceAll(s, r.ReplaceSymbol, "")
		return lit, lit == s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) && isDigit(s[i+1]) {
			for i+1 < len(s) && isDigit(s[i+1]) {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String(), b.Len() == len(s)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func routePath(i int, key string) string {
	return "route[" + strconv.Itoa(i) + "]." + key
}

// checkTablePatterns parses tables and tables.exclude with the route
// package's Selector, which the source will use.
func checkTablePatterns(l *loader) {
	if !l.usable("source", "source.tables", "source.tables.exclude") {
		return
	}
	_, err := route.NewFilter(l.def.Source.Tables, l.def.Source.Exclude)
	l.routeError(err, -1)
}

// checkRoutes compiles each route on its own, so that every bad one is
// reported.
func checkRoutes(l *loader) {
	for i, r := range l.def.Routes {
		p := "route[" + strconv.Itoa(i) + "]"
		if !l.usable(p+".source-table", p+".sink-table", p+".replace-symbol") {
			continue
		}
		rule := route.Rule{SourceTable: r.SourceTable, SinkTable: r.SinkTable, ReplaceSymbol: r.ReplaceSymbol, Description: r.Description}
		_, err := route.NewTable([]route.Rule{rule}, route.AllMatch, "")
		l.routeError(err, i)
	}
}

func checkTransforms(l *loader) {
	for i, t := range l.def.Transforms {
		p := "transform[" + strconv.Itoa(i) + "]"
		if l.usable(p+".source-table", p+".primary-keys") {
			_, err := route.NewKeyOverrides([]route.Transform{{SourceTable: t.SourceTable, PrimaryKeys: t.PrimaryKeys}})
			l.routeError(err, i)
		}
		l.checkExpressions(p, t)
	}
}

// checkExpressions parses a transform's projection and filter and checks what needs no
// table shape (transform.Check); an error points at its place in the file.
func (l *loader) checkExpressions(p string, t Transform) {
	var proj *transform.Projection
	var filter *transform.Filter
	var err error
	if l.isSet(p+".projection") && l.usable(p+".projection") {
		if proj, err = transform.ParseProjection(t.Projection); err != nil {
			l.exprError(p+".projection", err)
		}
	}
	if l.isSet(p+".filter") && l.usable(p+".filter") {
		if filter, err = transform.ParseFilter(t.Filter); err != nil {
			l.exprError(p+".filter", err)
		}
	}
	if proj == nil && filter == nil {
		return
	}
	if err := transform.Check(proj, filter); err != nil {
		path := p + ".projection"
		var e *transform.Error
		if errors.As(err, &e) && e.Filter {
			path = p + ".filter"
		}
		l.exprError(path, err)
	}
}

// exprError reports an expression error at its place in the file: the position of the
// offending character when the value is written so that it can be told (one line, or a
// literal block), else the value's position with the place inside the expression.
func (l *loader) exprError(path string, err error) {
	l.bad[path] = true
	var e *transform.Error
	if !errors.As(err, &e) {
		l.at(path, "%v", err)
		return
	}
	if l.def.IsSecret(path) {
		l.at(path, "invalid expression (hidden, it comes from a secret)")
		return
	}
	if p, ok := l.valuePos(path, e.Offset); ok {
		l.errorf(p, path, "%s", e.Msg)
		return
	}
	l.errorf(l.def.position(path), path, "at %d:%d of the expression: %s", e.Line, e.Col, e.Msg)
}

// valuePos returns the file position of the byte at offset in the value of the option at
// path, when the value is written as it is: on one line (plain, or quoted without escapes
// before the offset) or in a literal block (|).
func (l *loader) valuePos(path string, offset int) (Position, bool) {
	n := l.nodes[path]
	if n == nil || offset > len(n.Value) {
		return Position{}, false
	}
	v := n.Value
	k := strings.Count(v[:offset], "\n")
	lineStart := strings.LastIndexByte(v[:offset], '\n') + 1
	prefix := []rune(v[lineStart:offset])
	lineEnd := strings.IndexByte(v[lineStart:], '\n')
	if lineEnd < 0 {
		lineEnd = len(v)
	} else {
		lineEnd += lineStart
	}
	var fileLine, start int
	switch {
	case n.Style&yaml.LiteralStyle != 0:
		// The block's indentation is its first line's.
		fileLine = n.Line + 1 + k
		if n.Line >= len(l.lines) {
			return Position{}, false
		}
		first := l.lines[n.Line]
		start = len(first) - len(strings.TrimLeft(first, " "))
	case k == 0 && n.Style&yaml.FoldedStyle == 0:
		fileLine, start = n.Line, n.Column-1
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			start++
		}
	default:
		return Position{}, false
	}
	if fileLine < 1 || fileLine > len(l.lines) {
		return Position{}, false
	}
	text := []rune(l.lines[fileLine-1])
	whole := []rune(v[lineStart:lineEnd])
	col := start + len(prefix)
	// The value's line must be there as it is, up to the offending character and one more.
	upto := min(len(prefix)+1, len(whole))
	if start < 0 || start+upto > len(text) || string(text[start:start+upto]) != string(whole[:upto]) {
		return Position{}, false
	}
	return Position{Line: fileLine, Col: col + 1}, true
}

// routeError reports an error of the route package at the field it names;
// index replaces the item index of a list built of one item. The message
// is replaced when a value of the route or transform item, or the source
// pattern itself, is secret, as it may quote values.
func (l *loader) routeError(err error, index int) {
	if err == nil {
		return
	}
	var fe *route.FieldError
	if !errors.As(err, &fe) {
		l.at("", "%v", err)
		return
	}
	if fe.Index >= 0 {
		fe.Index = index
	}
	path := fe.Path()
	hide := l.anySecret(parentPath(path))
	if fe.Index < 0 { // source: tables or tables.exclude, whose errors quote only themselves
		hide = l.def.IsSecret(path)
	}
	if hide {
		l.at(path, "is not a valid pattern (the value is hidden because it comes from a secret)")
		return
	}
	l.at(path, "%v", fe.Err)
}

// anySecret reports whether an option under prefix holds a secret value.
func (l *loader) anySecret(prefix string) bool {
	for p, secret := range l.def.secret {
		if secret && strings.HasPrefix(p, prefix+".") {
			return true
		}
	}
	return false
}

// checkKafkaFormats refuses the options of a format that the kafka sink does not use:
// Flink CDC's factory accepts only the options of the chosen key.format (json.*; the csv
// key format reads none) and value.format (debezium-json.* or canal-json.*).
func checkKafkaFormats(l *loader) {
	k := &l.def.Sink.Kafka
	if !l.def.Sink.IsKafka() || !l.usable("sink.key.format", "sink.value.format") {
		return
	}
	unused := map[string]string{}
	if k.KeyFormat == KeyCSV {
		unused["json."] = "key.format is csv, which reads no options; these json.* options are for key.format: json"
	}
	switch k.ValueFormat {
	case ValueCanalJSON:
		unused["debezium-json."] = "value.format is canal-json; debezium-json.* options apply to value.format: debezium-json"
	default:
		unused["canal-json."] = "value.format is debezium-json; canal-json.* options apply to value.format: canal-json"
	}
	for path := range l.def.Pos {
		if path == "sink.json.encode.time-as" {
			continue // ingest's own option, for the value as well as the key
		}
		for prefix, why := range unused {
			if strings.HasPrefix(path, "sink."+prefix) {
				l.at(path, "is not used: %s; remove it", why)
			}
		}
	}
}

// checkKafkaTopicMapping: sink.topic sends every record to one topic, so a mapping would
// never be consulted (Flink CDC ignores it then).
func checkKafkaTopicMapping(l *loader) {
	if l.def.Sink.IsKafka() && l.def.Sink.Topic != "" && l.isSet("sink.sink.tableId-to-topic.mapping") && l.usable("sink.sink.tableId-to-topic.mapping") {
		l.at("sink.sink.tableId-to-topic.mapping", "has no effect: sink.topic sends every record to that one topic; remove one of them")
	}
}

// checkAliyunMappedTopics checks the topics of sink.tableId-to-topic.mapping (type kafka)
// against ApsaraMQ's rules. A table no entry matches goes to its table id, which ingest
// plan checks online.
func checkAliyunMappedTopics(l *loader) {
	const p = "sink.sink.tableId-to-topic.mapping"
	if l.def.IsSecret(p) {
		return
	}
	for _, m := range l.def.Sink.Kafka.TopicMapping {
		if msg := apsaraTopicProblem(m.Topic, true); msg != "" {
			l.at(p, "topic %q: %s", m.Topic, msg)
		}
	}
}
