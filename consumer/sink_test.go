package consumer

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/secrets"
)

// TestSinkOfMasksSecrets: a DDL never holds a secret: neither a ${secret_values.*}
// placeholder's value nor a property that always holds a credential; producer settings
// are left out.
func TestSinkOfMasksSecrets(t *testing.T) {
	const yaml = `source:
  type: mysql
  hostname: db
  username: cdc
  password: ${secret_values.pw}
  tables: app.t
sink:
  type: upsert-kafka
  properties.bootstrap.servers: b1:9092
  properties.security.protocol: SASL_SSL
  properties.sasl.mechanism: PLAIN
  properties.sasl.jaas.config: org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="jaas-secret";
  properties.ssl.truststore.password: ${secret_values.ts}
  properties.compression.type: lz4
  sink.delivery-guarantee: exactly-once
  json.encode.time-as: micros
`
	res := secrets.NewResolver([]secrets.Provider{&secrets.Map{Values: map[string]string{"pw": "db-secret", "ts": "ts-secret"}}}, nil)
	def, err := pipeline.Parse("p.yaml", []byte(yaml), pipeline.LoadOptions{Context: context.Background(), Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteFlinkSQL(&b, []Topic{shards}, SinkOf(def)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, leak := range []string{"jaas-secret", "ts-secret", "db-secret", "lz4"} {
		if strings.Contains(out, leak) {
			t.Errorf("DDL holds %q:\n%s", leak, out)
		}
	}
	for _, want := range []string{"'properties.sasl.jaas.config' = '******'", "'properties.ssl.truststore.password' = '******'",
		"'properties.security.protocol' = 'SASL_SSL'", "'properties.isolation.level' = 'read_committed'", "`took` BIGINT"} {
		if !strings.Contains(out, want) {
			t.Errorf("DDL lacks %s:\n%s", want, out)
		}
	}
}
