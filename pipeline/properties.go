package pipeline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ingestkit/ingest/internal/jdbctls"
	"github.com/ingestkit/ingest/internal/suggest"
	"github.com/ingestkit/ingest/secrets"
	"github.com/ingestkit/ingest/upsert"
)

// The sink's properties.* options are Kafka producer configs in their Java names. Package
// upsert owns their one description (upsert/properties.go): which it supports, the values
// and combinations it accepts, and franz-go's own limits. The loader asks it about each
// option's name as it meets it, then about the values and combinations of them all, and
// reports each problem at the option's position, so that validate refuses exactly what
// apply refuses. jdbc.properties.* are described by internal/jdbctls the same way (pipeline/jdbc.go).

// kafkaProperties are the sink's properties.* options.
var kafkaProperties = passThrough{
	prefix:   "properties.",
	checkKey: checkProducerKey,
	secret:   upsert.IsSecretProperty,
}

// checkProducerKey checks the name of one properties.* option.
func checkProducerKey(key string) error {
	var pe *upsert.PropertyError
	if err := upsert.CheckPropertyName(key); !errors.As(err, &pe) {
		return err
	}
	if pe.Kind == upsert.PropertyUnsupported {
		return fmt.Errorf("option %q %s", "properties."+key, pe.Reason)
	}
	return fmt.Errorf("unknown Kafka producer option %q%s", "properties."+key, suggest.DidYouMean("properties."+key, producerNames()))
}

// producerNames returns the supported properties.* options with their prefix.
func producerNames() []string {
	names := upsert.PropertyNames()
	for i, n := range names {
		names[i] = "properties." + n
	}
	return names
}

// checkProducerProperties checks the values of the properties.* options and how they fit
// together, as the sink will, and reports each problem at its option. It then applies
// allow.auto.create.topics: false, which asks that no topic be created, as
// sink.topic.auto-create: false.
func (l *loader) checkProducerProperties() {
	const prefix = "sink.properties."
	for p := range l.def.Pos {
		if strings.HasPrefix(p, prefix) && l.bad[p] {
			return // already reported; checking the rest without it would mislead
		}
	}
	props, err := upsert.ParsePropertiesOffline(secrets.RevealMap(l.def.Sink.Properties))
	var pe *upsert.PropertyError
	for _, e := range flatten(err) {
		if !errors.As(e, &pe) {
			l.at("sink", "%v", e)
			continue
		}
		path := "sink"
		if pe.Key != "" {
			path = prefix + pe.Key
		}
		switch {
		case pe.Kind != upsert.PropertyValue:
			l.at(path, "%s", pe.Reason)
		case pe.Value == "" || l.def.IsSecret(path):
			l.at(path, "invalid value (hidden, it comes from a secret): %s", pe.Reason)
		default:
			l.at(path, "invalid value %q: %s", pe.Value, pe.Reason)
		}
		l.bad[path] = true
	}
	if props != nil && props.AllowAutoCreateTopics != nil {
		l.allowAutoCreate(*props.AllowAutoCreateTopics)
	}
}

// allowAutoCreate applies properties.allow.auto.create.topics.
func (l *loader) allowAutoCreate(allow bool) {
	const prop, opt = "sink.properties.allow.auto.create.topics", "sink.sink.topic.auto-create"
	switch {
	case !l.isSet(opt):
		l.def.Sink.TopicAutoCreate = allow
		l.def.Pos[opt] = l.def.Pos[prop] // plan shows where the value comes from
	case l.def.Sink.TopicAutoCreate != allow:
		l.at(prop, "is %v but sink.topic.auto-create is %v: both say whether missing topics are created; remove one of them",
			allow, l.def.Sink.TopicAutoCreate)
	}
}

// flatten returns the errors joined in err.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// jdbcProperties are the source's jdbc.properties.* options, described by package
// internal/jdbctls (pipeline/jdbc.go): the MySQL Connector/J properties ingest honours. Any
// whose name mentions a password is a credential.
var jdbcProperties = passThrough{
	prefix:     "jdbc.properties.",
	checkKey:   checkJDBCKey,
	checkValue: jdbctls.CheckValue,
	secret:     func(key string) bool { return strings.Contains(strings.ToLower(key), "password") },
}
