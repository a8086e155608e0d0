package main

import (
	"context"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/upsert"
)

// propertyValues are values the loader's check of each option accepts; other options
// take "100".
var propertyValues = map[string]string{
	"bootstrap.servers": "127.0.0.1:9092", "security.protocol": "SSL", "sasl.mechanism": "PLAIN",
	"ssl.truststore.type": "PEM", "ssl.keystore.type": "PEM", "ssl.protocol": "TLSv1.2",
	"ssl.endpoint.identification.algorithm": "https", "acks": "all", "enable.idempotence": "true",
	"compression.type": "lz4",
}

// propertyContext are sink options some properties need beside them.
var propertyContext = map[string]string{
	"transaction.timeout.ms": "  sink.delivery-guarantee: exactly-once\n",
}

// loadWithProperty loads a pipeline with one more properties.* option and returns the
// loader's errors about it.
func loadWithProperty(t *testing.T, key string) string {
	t.Helper()
	value, ok := propertyValues[key]
	if !ok {
		value = "100"
	}
	doc := "source:\n  type: mysql\n  hostname: db\n  username: u\n  password: p\n  tables: app.t\n" +
		"sink:\n  type: upsert-kafka\n  properties.bootstrap.servers: 127.0.0.1:9092\n"
	if key != "bootstrap.servers" {
		doc += "  properties." + key + ": '" + value + "'\n" + propertyContext[key]
	}
	file := writeFile(t, "pipeline.yaml", doc, 0o644)
	_, err := pipeline.Load(file, pipeline.LoadOptions{Context: context.Background()})
	if err == nil {
		return ""
	}
	var mine []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if strings.Contains(line, `"properties.`+key+`"`) || strings.Contains(line, "properties."+key+":") {
			mine = append(mine, line)
		}
	}
	return strings.Join(mine, "\n")
}

// TestPropertiesAgree: the loader (validate, plan) and the sink (apply) must accept the same
// properties.* options. An option the sink supports but the loader refuses cannot be used;
// one the loader passes but the sink refuses fails only at apply.
func TestPropertiesAgree(t *testing.T) {
	for _, key := range upsert.PropertyNames() {
		if msg := loadWithProperty(t, key); msg != "" {
			t.Errorf("the sink supports properties.%s, the loader refuses it:\n%s", key, msg)
		}
	}
	for _, key := range upsert.UnsupportedPropertyNames() {
		if msg := loadWithProperty(t, key); msg == "" {
			t.Errorf("the sink refuses properties.%s, the loader passes it", key)
		}
	}
}
