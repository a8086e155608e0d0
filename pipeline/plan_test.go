package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

const withSecrets = minimal + `  properties.sasl.jaas.config: org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="${secret_values.kafka-sk}";
  aliyun.kafka.accessKeyId: ${secret_values.kafka-ak}
  aliyun.kafka.accessKeySecret: ${secret_values.kafka-sk}
  aliyun.kafka.instanceId: alikafka_post-cn-xxxx
  aliyun.kafka.endpoint: alikafka.cn-hangzhou.aliyuncs.com
  aliyun.kafka.regionId: cn-hangzhou
  properties.security.protocol: SASL_SSL
  properties.sasl.mechanism: PLAIN
route:
  - source-table: app.\.*
    sink-table: app_<>
    replace-symbol: <>
`

func TestPlan(t *testing.T) {
	def, err := Parse("dir/pipeline.yaml", []byte(withSecrets), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	p := NewPlan(def)
	want := map[string]Setting{
		"source.password":                   {Key: "password", Value: "******", From: "file", Secret: true, Line: 6},
		"source.port":                       {Key: "port", Value: "3306", From: "default"},
		"source.server-id":                  {Key: "server-id", From: "unset"},
		"sink.properties.sasl.jaas.config":  {Key: "properties.sasl.jaas.config", Value: "******", From: "file", Secret: true, Line: 11},
		"sink.properties.bootstrap.servers": {Key: "properties.bootstrap.servers", Value: "127.0.0.1:9092", From: "file", Line: 10},
		"sink.aliyun.kafka.accessKeyId":     {Key: "aliyun.kafka.accessKeyId", Value: "******", From: "file", Secret: true, Line: 12},
		"sink.aliyun.kafka.regionId":        {Key: "aliyun.kafka.regionId", Value: "cn-hangzhou", From: "file", Line: 16},
		"sink.sink.topic.partitions":        {Key: "sink.topic.partitions", From: "unset"},
		"pipeline.name":                     {Key: "name", Value: "dir", From: "derived"},
		"pipeline.route-mode":               {Key: "route-mode", Value: "ALL_MATCH", From: "default"},
	}
	for block, settings := range map[string][]Setting{"source": p.Source, "sink": p.Sink, "pipeline": p.Pipeline} {
		for _, s := range settings {
			if w, ok := want[block+"."+s.Key]; ok {
				if s != w {
					t.Errorf("%s.%s = %+v, want %+v", block, s.Key, s, w)
				}
				delete(want, block+"."+s.Key)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("not in the plan: %v", want)
	}
	if len(p.Routes) != 1 || p.Routes[0][1].Value != "app_<>" {
		t.Errorf("routes = %+v", p.Routes)
	}
	var text, js bytes.Buffer
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(js.Bytes()) {
		t.Error("WriteJSON wrote invalid JSON")
	}
	for _, line := range []string{"  password: ******", "  port: 3306", "  - source-table: app.\\.*", "  name: dir"} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("text plan has no line %q:\n%s", line, text.String())
		}
	}
	if strings.Contains(text.String()+js.String(), secretMarker) {
		t.Errorf("a secret value is in the plan:\n%s\n%s", text.String(), js.String())
	}
}

// TestDefinitionPrintsNoSecret prints and logs a whole Definition, as a
// careless caller might.
func TestDefinitionPrintsNoSecret(t *testing.T) {
	def, err := Parse("p.yaml", []byte(withSecrets+"  - source-table: a.b\n    sink-table: c_d\n"), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%v %+v %#v %v\n", def, *def, def.Sink, def.Source)
	slog.New(slog.NewTextHandler(&b, nil)).Info("loaded", "def", def, "source", def.Source, "sink", def.Sink)
	slog.New(slog.NewJSONHandler(&b, nil)).Info("loaded", "def", def)
	if j, err := json.Marshal(def); err != nil {
		t.Fatal(err)
	} else {
		b.Write(j)
	}
	if strings.Contains(b.String(), secretMarker) {
		t.Errorf("a secret value was printed:\n%s", b.String())
	}
}
