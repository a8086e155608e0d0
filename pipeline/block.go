package pipeline

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ingestkit/ingest/internal/suggest"
	"github.com/ingestkit/ingest/secrets"
	"github.com/ingestkit/ingest/upsert"
)

// entry is one option of a block as written.
type entry struct {
	key              string
	keyNode, valNode *yaml.Node
}

// entries returns the options of the mapping m at path, reporting (and
// leaving out) keys that are not plain names and options given twice.
func (l *loader) entries(path string, m *yaml.Node) []entry {
	var es []entry
	seen := make(map[string]*yaml.Node)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := resolveAlias(m.Content[i]), resolveAlias(m.Content[i+1])
		switch {
		case k.Kind != yaml.ScalarNode:
			l.errorAt(k, path, "a key must be a plain name")
		case k.Value == "<<":
			l.errorAt(k, path, "YAML merge keys (<<) are not supported; write the options out")
		case seen[k.Value] != nil:
			l.errorAt(k, path, "%q is given twice (first on line %d)", k.Value, seen[k.Value].Line)
		default:
			seen[k.Value] = k
			es = append(es, entry{key: k.Value, keyNode: k, valNode: v})
		}
	}
	return es
}

func kindName(n *yaml.Node) string {
	if n.Kind == yaml.SequenceNode {
		return "list"
	}
	return "map"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// block returns the mapping of a map block, or nil after reporting why it
// is missing or not a map.
func (l *loader) block(name string, p pair, root *yaml.Node, required bool) *yaml.Node {
	switch {
	case p.key == nil && required:
		l.errorAt(root, name, "the %s block is missing; a pipeline needs one", name)
	case p.key == nil, p.val.Tag == "!!null" && !required:
		return nil
	case resolveAlias(p.val).Kind != yaml.MappingNode:
		l.errorAt(p.val, name, "must be a map of options")
	default:
		return resolveAlias(p.val)
	}
	l.bad[name] = true
	return nil
}

func (l *loader) loadSource(p pair, root *yaml.Node) {
	m := l.block("source", p, root, true)
	if m == nil {
		return
	}
	es := l.entries("source", m)
	if !l.checkType("source", p.key, es, sourceType, func(got string) string {
		return fmt.Sprintf("unsupported source type %q: ingest reads MySQL and MariaDB; use type: mysql", got)
	}) {
		return
	}
	s := &l.def.Source
	s.JDBCProperties = make(map[string]secrets.Secret)
	l.applyOptions("source", p.key, es, sourceOptions(s), sourceRefused, &jdbcProperties, s.JDBCProperties)
	l.checkJDBCTogether(secrets.RevealMap(s.JDBCProperties))
	s.Type = sourceType
}

func (l *loader) loadSink(p pair, root *yaml.Node) {
	m := l.block("sink", p, root, true)
	if m == nil {
		return
	}
	es := l.entries("sink", m)
	typ, ok := l.sinkType(p.key, es)
	if !ok {
		return
	}
	s := &l.def.Sink
	s.Properties = make(map[string]secrets.Secret)
	l.applyOptions("sink", p.key, es, sinkOptionsFor(s, typ), sinkRefusedFor(typ), &kafkaProperties, s.Properties)
	s.Type = typ
	s.BootstrapServers = s.Properties["bootstrap.servers"].Reveal()
	if _, ok := l.def.Pos["sink.properties.bootstrap.servers"]; !ok {
		l.errorAt(p.key, "sink", `missing required option "properties.bootstrap.servers" (the Kafka brokers, host:port,...)`)
		return
	}
	l.checkProducerProperties()
}

// sinkType returns the sink block's type, one of sinkTypes, reporting a missing or
// unknown one.
func (l *loader) sinkType(at *yaml.Node, es []entry) (string, bool) {
	for _, e := range es {
		if e.key != "type" {
			continue
		}
		v, _, ok := l.scalar("sink.type", e.valNode)
		for _, t := range sinkTypes {
			if ok && strings.EqualFold(strings.TrimSpace(v), t) {
				return t, true
			}
		}
		break
	}
	// Not one of ours: checkType reports it.
	l.checkType("sink", at, es, SinkUpsertKafka, wrongSinkType)
	return "", false
}

func wrongSinkType(got string) string {
	return fmt.Sprintf("unsupported sink type %q: ingest writes to Kafka; use type: upsert-kafka (rows keyed by the primary key, "+
		"with tombstones) or type: kafka (Flink CDC's debezium-json or canal-json change events)", got)
}

// checkType reports whether the block's type option is want, reporting a
// missing or different one. A block of another type is not checked
// further: its options would be another connector's.
func (l *loader) checkType(path string, at *yaml.Node, es []entry, want string, wrong func(string) string) bool {
	for _, e := range es {
		if e.key != "type" {
			continue
		}
		v, secret, ok := l.scalar(path+".type", e.valNode)
		if ok && !strings.EqualFold(strings.TrimSpace(v), want) {
			if secret {
				v = "(hidden, it comes from a secret)"
			}
			l.errorAt(e.valNode, path+".type", "%s", wrong(v))
			ok = false
		}
		if !ok {
			l.bad[path] = true
		}
		return ok
	}
	l.errorAt(at, path, "missing required option %q (type: %s)", "type", want)
	l.bad[path] = true
	return false
}

// applyOptions sets the defaults of opts, then the options the file gives,
// and reports unknown, refused and missing required options. at is where a
// missing option is reported.
func (l *loader) applyOptions(path string, at *yaml.Node, es []entry, opts []option,
	refused []refusal, pt *passThrough, props map[string]secrets.Secret) {
	for _, o := range opts {
		if o.def != "" {
			if err := o.val.set(o.def); err != nil {
				panic(fmt.Sprintf("pipeline: bad default %q for %s: %v", o.def, o.key, err))
			}
		}
	}
	given := make(map[string]bool)
	for _, e := range es {
		switch o := findOption(opts, e.key); {
		case o != nil:
			given[o.key] = true
			l.applyOption(join(path, e.key), e.valNode, o)
		case pt != nil && strings.HasPrefix(e.key, pt.prefix) && len(e.key) > len(pt.prefix):
			l.applyProperty(path, e, pt, props)
		case refusedReason(refused, e.key) != "":
			l.errorAt(e.keyNode, path, "option %q %s", e.key, refusedReason(refused, e.key))
		default:
			l.errorAt(e.keyNode, path, "unknown option %q%s", e.key, suggestOption(e.key, opts, pt))
		}
	}
	for _, o := range opts {
		if o.required && !given[o.key] {
			l.errorAt(at, path, "missing required option %q", o.key)
			l.bad[join(path, o.key)] = true
		}
	}
}

func findOption(opts []option, key string) *option {
	for i := range opts {
		if opts[i].key == key {
			return &opts[i]
		}
	}
	return nil
}

// suggestOption returns a "did you mean" for an unknown option, among the
// block's options and, for the sink, the Kafka producer properties.
func suggestOption(key string, opts []option, pt *passThrough) string {
	candidates := keys(opts)
	if pt == &kafkaProperties {
		if upsert.CheckPropertyName(key) == nil {
			return fmt.Sprintf(" (did you mean %q?)", pt.prefix+key)
		}
		candidates = append(candidates, producerNames()...)
	}
	return suggest.DidYouMean(key, candidates)
}

// applyOption parses one option's value into its field.
func (l *loader) applyOption(path string, n *yaml.Node, o *option) {
	v, secret, ok := l.scalar(path, n)
	if o.secret {
		l.def.secret[path], secret = true, true
	}
	switch {
	case !ok:
	case o.required && strings.TrimSpace(v) == "":
		l.errorAt(n, path, "must not be empty")
	default:
		if err := o.val.set(v); err != nil {
			l.valueError(path, n, v, secret, err)
		}
		return
	}
	l.bad[path] = true
}

// applyProperty stores one pass-through option (jdbc.properties.*,
// properties.*) after checking its name and value.
func (l *loader) applyProperty(path string, e entry, pt *passThrough, props map[string]secrets.Secret) {
	key, p := strings.TrimPrefix(e.key, pt.prefix), join(path, e.key)
	if pt.checkKey != nil {
		if err := pt.checkKey(key); err != nil {
			l.errorAt(e.keyNode, path, "%v", err)
			return
		}
	}
	v, secret, ok := l.scalar(p, e.valNode)
	if pt.secret != nil && pt.secret(key) {
		l.def.secret[p], secret = true, true
	}
	if !ok {
		return
	}
	props[key] = secrets.Secret(v)
	if pt.checkValue != nil {
		if err := pt.checkValue(key, v); err != nil {
			l.valueError(p, e.valNode, v, secret, err)
		}
	}
}

// valueError reports a value that its option does not accept. A secret
// value is never shown, nor any hint derived from it.
func (l *loader) valueError(path string, n *yaml.Node, v string, secret bool, err error) {
	l.bad[path] = true
	hint := ""
	var ve *valueError
	if errors.As(err, &ve) {
		hint = ve.hint
	}
	if secret {
		l.errorAt(n, path, "invalid value (hidden, it comes from a secret): %v", err)
		return
	}
	l.errorAt(n, path, "invalid value %q: %v%s", v, err, hint)
}

// list returns the items of a list block, or nil after reporting why it is
// not a list. An empty block is an empty list.
func (l *loader) list(name string, p pair) []*yaml.Node {
	if p.key == nil || p.val.Tag == "!!null" {
		return nil
	}
	v := resolveAlias(p.val)
	switch v.Kind {
	case yaml.SequenceNode:
		return v.Content
	case yaml.MappingNode:
		first := "source-table"
		if len(v.Content) > 0 {
			first = v.Content[0].Value
		}
		l.errorAt(v, name, "must be a list of %ss; perhaps you missed a dash (\"- \") before %s?", name, first)
	default:
		l.errorAt(v, name, "must be a list of %ss, each a map with source-table", name)
	}
	l.bad[name] = true
	return nil
}

// item returns the mapping of a list item at path, recording its position.
func (l *loader) item(path string, n *yaml.Node) *yaml.Node {
	n = resolveAlias(n)
	l.def.Pos[path] = pos(n)
	if n.Kind != yaml.MappingNode {
		l.errorAt(n, path, "must be a map of options such as source-table")
		l.bad[path] = true
		return nil
	}
	return n
}

func (l *loader) loadRoutes(p pair) {
	for i, n := range l.list("route", p) {
		path := fmt.Sprintf("route[%d]", i)
		var r Route
		if m := l.item(path, n); m != nil {
			l.applyOptions(path, m, l.entries(path, m), routeOptions(&r), nil, nil, nil)
		}
		l.def.Routes = append(l.def.Routes, r)
	}
}

func (l *loader) loadTransforms(p pair) {
	for i, n := range l.list("transform", p) {
		path := fmt.Sprintf("transform[%d]", i)
		var t Transform
		if m := l.item(path, n); m != nil {
			l.applyOptions(path, m, l.entries(path, m), transformOptions(&t), transformRefused, nil, nil)
		}
		l.def.Transforms = append(l.def.Transforms, t)
	}
}

func (l *loader) loadSettings(p pair) {
	s := &l.def.Pipeline
	opts := settingsOptions(s)
	if m := l.block("pipeline", p, nil, false); m != nil {
		l.applyOptions("pipeline", p.key, l.entries("pipeline", m), opts, settingsRefused, nil, nil)
	} else {
		l.applyOptions("pipeline", nil, nil, opts, nil, nil, nil)
	}
	if _, ok := l.def.Pos["pipeline.name"]; !ok {
		s.Name = defaultName(l.def.File)
	} else if strings.TrimSpace(s.Name) == "" && !l.bad["pipeline.name"] {
		l.errorAt(nodeAt(l.def.Pos["pipeline.name"]), "pipeline.name", "must not be empty: it names the pipeline's state, transactional id and metrics")
	}
}

// nodeAt makes a node that errorAt can use from a recorded position.
func nodeAt(p Position) *yaml.Node { return &yaml.Node{Line: p.Line, Column: p.Col} }
