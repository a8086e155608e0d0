package main

import (
	"context"
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
// loader's error.
func loadWithProperty(t *testing.T, key, value string) error {
	t.Helper()
	doc := "source:\n  type: mysql\n  hostname: db\n  username: u\n  password: p\n  tables: app.t\n" +
		"sink:\n  type: upsert-kafka\n  properties.bootstrap.servers: 127.0.0.1:9092\n"
	if key != "bootstrap.servers" {
		doc += "  properties." + key + ": '" + value + "'\n" + propertyContext[key]
	}
	file := writeFile(t, "pipeline.yaml", doc, 0o644)
	_, err := pipeline.Load(file, pipeline.LoadOptions{Context: context.Background()})
	return err
}

// TestPropertiesAgree: the loader (validate, plan) and the sink (apply) must accept the same
// properties.* options and values: an option the sink supports but the loader refuses
// cannot be used; one the loader passes but the sink refuses fails only at apply.
func TestPropertiesAgree(t *testing.T) {
	keys := append(upsert.PropertyNames(), upsert.UnsupportedPropertyNames()...)
	for _, key := range keys {
		for _, value := range []string{"100", propertyValues[key]} {
			if value == "" {
				continue
			}
			props := map[string]string{"bootstrap.servers": "127.0.0.1:9092", key: value}
			sinkErr := upsert.CheckProperties(props)
			loadErr := loadWithProperty(t, key, value)
			if (sinkErr == nil) != (loadErr == nil) {
				t.Errorf("properties.%s=%q: the sink says %v, the loader says %v", key, value, sinkErr, loadErr)
			}
		}
	}
}
