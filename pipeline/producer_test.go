package pipeline

import (
	"slices"
	"testing"

	"github.com/ingestkit/ingest/upsert"
)

// TestProducerPropertiesKnownToSink: every properties.* option the loader accepts is one the
// sink supports (cmd/ingest's TestPropertiesAgree checks the other direction).
func TestProducerPropertiesKnownToSink(t *testing.T) {
	sink := upsert.PropertyNames()
	for _, p := range producerProperties {
		if !slices.Contains(sink, p.name) {
			t.Errorf("the loader accepts properties.%s, which the sink does not know", p.name)
		}
		if p.secret != upsert.IsSecretProperty(p.name) {
			t.Errorf("properties.%s: secret %v for the loader, %v for the sink", p.name, p.secret, upsert.IsSecretProperty(p.name))
		}
	}
}
