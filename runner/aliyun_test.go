package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestkit/ingest/aliyun"
	"github.com/ingestkit/ingest/aliyun/aliyuntest"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/secrets"
	"github.com/ingestkit/ingest/upsert"
)

// useFake points every TopicManager of the test at srv, with short waits.
func useFake(t *testing.T, srv *aliyuntest.Server) {
	t.Helper()
	aliyunTestHook = func(c *aliyun.TopicConfig) {
		c.TLSConfig = srv.TLSConfig()
		c.Backoff = aliyun.Backoff{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond, Attempts: 5}
		c.PollInterval = 5 * time.Millisecond
		c.ReadyTimeout = 10 * time.Second
	}
	t.Cleanup(func() { aliyunTestHook = nil })
}

// syncBuffer is a log sink for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func bufferLogger() (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// apsaraDefinition parses a pipeline whose sink is ApsaraMQ at srv, with the
// AccessKey secret secret (from ${secret_values.ak-secret}).
func apsaraDefinition(t *testing.T, srv *aliyuntest.Server, secret, extraSink, extraPipeline string) *pipeline.Definition {
	t.Helper()
	yaml := fmt.Sprintf(`source:
  type: mysql
  hostname: 127.0.0.1
  username: cdc
  password: pw
  tables: app.\.*
sink:
  type: upsert-kafka
  properties.bootstrap.servers: 127.0.0.1:9092
  aliyun.kafka.accessKeyId: ${secret_values.ak-id}
  aliyun.kafka.accessKeySecret: ${secret_values.ak-secret}
  aliyun.kafka.instanceId: %s
  aliyun.kafka.endpoint: %s
  aliyun.kafka.regionId: %s
%s
route:
  - source-table: app.\.*
    sink-table: app_<>
    replace-symbol: <>
pipeline:
  name: apsara-unit
%s`, aliyuntest.InstanceID, srv.Host(), aliyuntest.RegionID, extraSink, extraPipeline)
	res := secrets.NewResolver([]secrets.Provider{&secrets.Map{Values: map[string]string{
		"ak-id": aliyuntest.AccessKeyID, "ak-secret": secret}}}, nil)
	def, err := pipeline.Parse("apsara.yaml", []byte(yaml), pipeline.LoadOptions{Resolver: res})
	if err != nil {
		t.Fatalf("pipeline:\n%s\n%v", yaml, err)
	}
	return def
}

func TestApsaraSinkConfig(t *testing.T) {
	srv := aliyuntest.NewServer()
	defer srv.Close()
	useFake(t, srv)
	log, buf := bufferLogger()

	// ApsaraMQ's own docs tell Flink users to write enable.idempotence: false.
	def := apsaraDefinition(t, srv, aliyuntest.AccessKeySecret, "  properties.enable.idempotence: false\n  sink.topic.replication-factor: 3", "")
	rt, err := newRouting(def)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sinkConfig(def, rt, log)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Creator.(*apsaraCreator); !ok {
		t.Errorf("Creator = %T, want the ApsaraMQ creator", cfg.Creator)
	}
	if len(cfg.ClientOpts) != 2 {
		t.Errorf("ClientOpts %d, want DisableIdempotentWrite and one request in flight", len(cfg.ClientOpts))
	}
	if cfg.Properties.Idempotence != nil {
		t.Errorf("Idempotence = %v, want nil (implied)", *cfg.Properties.Idempotence)
	}
	if _, err := upsert.New(cfg); err != nil {
		t.Errorf("upsert.New refuses the ApsaraMQ sink: %v", err)
	}
	out := buf.String()
	for _, want := range []string{"idempotent writes turned off", "does not support the idempotent producer", "replication-factor is ignored"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if srv.CallCount("") != 0 {
		t.Errorf("building the sink called the OpenAPI %d times", srv.CallCount(""))
	}

	// Without aliyun.kafka.*, nothing changes.
	plain := definition0(t)
	rt, _ = newRouting(plain)
	cfg, err = sinkConfig(plain, rt, log)
	if err != nil || cfg.Creator != nil || len(cfg.ClientOpts) != 0 {
		t.Errorf("plain Kafka sink: Creator %v, ClientOpts %d, err %v", cfg.Creator, len(cfg.ClientOpts), err)
	}

	// A Definition built in code is checked too.
	def.Sink.DeliveryGuarantee = pipeline.DeliveryExactlyOnce
	if _, err := sinkConfig(def, rt, log); err == nil || !strings.Contains(err.Error(), "no transactions") {
		t.Errorf("exactly-once with ApsaraMQ: %v", err)
	}
}

func definition0(t *testing.T) *pipeline.Definition {
	t.Helper()
	def, err := pipeline.Parse("plain.yaml", []byte(`source:
  type: mysql
  hostname: 127.0.0.1
  username: cdc
  password: pw
  tables: app.\.*
sink:
  type: upsert-kafka
  properties.bootstrap.servers: 127.0.0.1:9092
`), pipeline.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return def
}

// creator returns the sink's creator for def.
func creator(t *testing.T, def *pipeline.Definition, log *slog.Logger) upsert.TopicCreator {
	t.Helper()
	rt, err := newRouting(def)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sinkConfig(def, rt, log)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Creator
}

func TestApsaraCreator(t *testing.T) {
	srv := aliyuntest.NewServer()
	defer srv.Close()
	useFake(t, srv)
	srv.SetReadyAfter(2)
	srv.AddTopic("app_existing", 3)
	log, buf := bufferLogger()
	c := creator(t, apsaraDefinition(t, srv, aliyuntest.AccessKeySecret, "", ""), log)
	ctx := context.Background()

	// Created compacted, with the default partition count, and waited for.
	if err := c.CreateTopics(ctx, []string{"app_orders", "app_existing"}, upsert.TopicSpec{Partitions: -1}); err != nil {
		t.Fatal(err)
	}
	top, ok := srv.Topic("app_orders")
	if !ok || top.Partitions != defaultApsaraPartitions || !top.Compact || !top.Local || !top.Ready || top.StatusPolls != 3 {
		t.Fatalf("created topic %+v, want 12 compacted local partitions, ready after 3 polls", top)
	}
	if n := srv.CallCount("CreateTopic"); n != 1 {
		t.Errorf("%d CreateTopic calls, want 1 (app_existing was listed)", n)
	}

	// sink.topic.partitions is passed on; throttling is retried.
	srv.Inject("CreateTopic", 2, aliyuntest.ThrottlingUser())
	if err := c.CreateTopics(ctx, []string{"app_items"}, upsert.TopicSpec{Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	if top, _ := srv.Topic("app_items"); top.Partitions != 6 {
		t.Errorf("app_items has %d partitions, want 6", top.Partitions)
	}
	var codes []string
	for _, call := range srv.Calls("CreateTopic")[1:] {
		codes = append(codes, call.Code)
	}
	if strings.Join(codes, ",") != "Throttling.User,Throttling.User,200" {
		t.Errorf("CreateTopic answers %v, want two throttled then success", codes)
	}
	if !strings.Contains(buf.String(), "aliyun: call failed, retrying") {
		t.Errorf("no retry logged:\n%s", buf.String())
	}

	// A topic created by someone else since the listing: BIZ_TOPIC_ALREADY_EXISTS is success.
	srv.Inject("GetTopicList", 1, aliyuntest.Response{Status: 200,
		RawBody: `{"Code":200,"Success":true,"RequestId":"R","Total":0,"TopicList":{"TopicVO":[]}}`})
	if err := c.CreateTopics(ctx, []string{"app_orders"}, upsert.TopicSpec{Partitions: -1}); err != nil {
		t.Fatalf("already exists: %v", err)
	}
	calls := srv.Calls("CreateTopic")
	if last := calls[len(calls)-1]; last.Code != "BIZ_TOPIC_ALREADY_EXISTS" {
		t.Errorf("last CreateTopic answered %s, want BIZ_TOPIC_ALREADY_EXISTS", last.Code)
	}

	// Success:false stops it.
	srv.Inject("CreateTopic", aliyuntest.Forever, aliyuntest.SuccessFalse("InstanceQuotaExceeded", "partition quota exceeded"))
	err := c.CreateTopics(ctx, []string{"app_quota"}, upsert.TopicSpec{Partitions: -1})
	if err == nil || !strings.Contains(err.Error(), "Success:false") || !strings.Contains(err.Error(), "partition quota exceeded") {
		t.Fatalf("Success:false: %v", err)
	}
	srv.ClearInjected()

	// Names ApsaraMQ would reject or truncate are refused before any call.
	n := srv.CallCount("")
	err = c.CreateTopics(ctx, []string{"app.orders", "ab", strings.Repeat("x", 65)}, upsert.TopicSpec{})
	if err == nil || !strings.Contains(err.Error(), "route the table") || !strings.Contains(err.Error(), "truncate") {
		t.Fatalf("bad names: %v", err)
	}
	if srv.CallCount("") != n {
		t.Error("bad names reached the OpenAPI")
	}
}

func TestApsaraCreatorFallsBackWithoutCompaction(t *testing.T) {
	srv := aliyuntest.NewServer()
	defer srv.Close()
	useFake(t, srv)
	log, buf := bufferLogger()
	c := creator(t, apsaraDefinition(t, srv, aliyuntest.AccessKeySecret, "", ""), log)
	ctx := context.Background()
	// A Standard Edition instance has no local storage, so no compacted topics.
	srv.Inject("CreateTopic", 1, aliyuntest.Response{Status: 400, Code: "InvalidParameter",
		Message: "local storage topics are only supported by professional instances"})
	if err := c.CreateTopics(ctx, []string{"app_a", "app_b"}, upsert.TopicSpec{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"app_a", "app_b"} {
		if top, ok := srv.Topic(name); !ok || top.Compact || top.Local || top.Partitions != 2 {
			t.Errorf("%s: %+v, want an uncompacted cloud-storage topic", name, top)
		}
	}
	if n := srv.CallCount("CreateTopic"); n != 3 {
		t.Errorf("%d CreateTopic calls, want 3 (compacted refused, then two uncompacted)", n)
	}
	if !strings.Contains(buf.String(), "created without compaction") {
		t.Errorf("no warning:\n%s", buf.String())
	}

	// Credentials problems are not mistaken for a refused compaction.
	srv2 := aliyuntest.NewServer()
	defer srv2.Close()
	useFake(t, srv2)
	c = creator(t, apsaraDefinition(t, srv2, aliyuntest.AccessKeySecret, "", ""), log)
	srv2.Inject("CreateTopic", 1, aliyuntest.Forbidden())
	err := c.CreateTopics(ctx, []string{"app_c"}, upsert.TopicSpec{})
	if err == nil || !strings.Contains(err.Error(), "Forbidden.RAM") || srv2.CallCount("CreateTopic") != 1 {
		t.Fatalf("Forbidden: %v after %d calls", err, srv2.CallCount("CreateTopic"))
	}
}

func TestApsaraCreatorWrongSecret(t *testing.T) {
	srv := aliyuntest.NewServer()
	defer srv.Close()
	useFake(t, srv)
	const wrong = "WrongSecretValue-0123456789"
	log, buf := bufferLogger()
	c := creator(t, apsaraDefinition(t, srv, wrong, "", ""), log)
	err := c.CreateTopics(context.Background(), []string{"app_orders"}, upsert.TopicSpec{})
	if err == nil || !strings.Contains(err.Error(), "SignatureDoesNotMatch") ||
		!strings.Contains(err.Error(), "check aliyun.kafka.accessKeyId/accessKeySecret") {
		t.Fatalf("wrong secret: %v", err)
	}
	for _, cred := range []string{wrong, aliyuntest.AccessKeyID} {
		if strings.Contains(err.Error()+buf.String(), cred) {
			t.Errorf("a credential is in the output:\n%v\n%s", err, buf.String())
		}
	}
}

func TestPlanApsaraTopics(t *testing.T) {
	srv := aliyuntest.NewServer()
	defer srv.Close()
	useFake(t, srv)
	srv.AddTopic("app_orders", 12)
	def := apsaraDefinition(t, srv, aliyuntest.AccessKeySecret, "", "")
	rep := &Report{Problems: []string{}, TopicsToCreate: []string{}, Tables: []PlannedTable{
		{Table: "app.orders", Topics: []string{"app_orders"}},
		{Table: "app.items", Topics: []string{"app_items"}},
		{Table: "app.bad.name", Topics: []string{"app_bad.name"}},
		{Table: "other.t", Topics: []string{"other.t"}},
	}}
	if err := rep.addTopics(context.Background(), def, t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rep.TopicsToCreate, ","); got != "app_items" {
		t.Errorf("TopicsToCreate %q, want app_items", got)
	}
	if len(rep.Problems) != 2 ||
		!strings.Contains(rep.Problems[0], "error: app.bad.name: topic \"app_bad.name\" is not a valid ApsaraMQ topic name") ||
		!strings.Contains(rep.Problems[0], "app_bad_name") ||
		!strings.Contains(rep.Problems[1], "error: other.t: ") || !strings.Contains(rep.Problems[1], "replace-symbol") {
		t.Errorf("problems:\n%s", strings.Join(rep.Problems, "\n"))
	}
	if srv.CallCount("GetTopicList") != 1 {
		t.Errorf("%d GetTopicList calls, want 1", srv.CallCount("GetTopicList"))
	}

	// auto-create off: the missing topics are a problem; a failed call is reported scrubbed.
	def.Sink.TopicAutoCreate = false
	rep.Problems, rep.TopicsToCreate = []string{}, []string{}
	if err := rep.addTopics(context.Background(), def, t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
	if last := rep.Problems[len(rep.Problems)-1]; !strings.Contains(last, "auto-create is false: app_items") {
		t.Errorf("problems:\n%s", strings.Join(rep.Problems, "\n"))
	}
	srv.Inject("GetTopicList", 1, aliyuntest.SignatureMismatch())
	err := rep.addTopics(context.Background(), def, t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "SignatureDoesNotMatch") || strings.Contains(err.Error(), aliyuntest.AccessKeyID) {
		t.Errorf("failed listing: %v", err)
	}
	if errors.Is(err, aliyun.ErrNotFound) {
		t.Error("unexpected ErrNotFound")
	}
}

// TestApsaraExampleSinkConfig: the sink of examples/apsaramq/pipeline.yaml, whose
// enable.idempotence: false the sink alone would refuse with at-least-once, builds.
func TestApsaraExampleSinkConfig(t *testing.T) {
	res := secrets.NewResolver(
		[]secrets.Provider{&secrets.Map{Values: map[string]string{"mysql-password": "p", "kafka-sasl-password": "p",
			"kafka-truststore-password": "p", "kafka-ak": "LTAIexample", "kafka-sk": "example-secret"}}},
		[]secrets.Provider{&secrets.Map{Values: map[string]string{"rds.hostname": "rm-x.mysql.rds.aliyuncs.com",
			"apsaramq.bootstrap": "alikafka-x:9093", "apsaramq.instance-id": "alikafka_post-cn-x",
			"apsaramq.truststore": "/nonexistent.jks"}}})
	def, err := pipeline.Load("../examples/apsaramq/pipeline.yaml", pipeline.LoadOptions{Context: context.Background(), Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	// The truststore is not here: keep SASL, drop TLS.
	for k := range def.Sink.Properties {
		if strings.HasPrefix(k, "ssl.") {
			delete(def.Sink.Properties, k)
		}
	}
	def.Sink.Properties["security.protocol"] = secrets.Secret("SASL_PLAINTEXT")
	rt, err := newRouting(def)
	if err != nil {
		t.Fatal(err)
	}
	log, buf := bufferLogger()
	cfg, err := sinkConfig(def, rt, log)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := upsert.New(cfg); err != nil {
		t.Fatalf("upsert.New: %v", err)
	}
	if _, ok := cfg.Creator.(*apsaraCreator); !ok || !strings.Contains(buf.String(), "idempotent writes turned off") {
		t.Errorf("Creator %T, logs:\n%s", cfg.Creator, buf.String())
	}
	if got := rt.topics(change.TableID{DB: "mall", Table: "orders"}); len(got) != 1 || got[0] != "mall_orders" {
		t.Errorf("mall.orders -> %v", got)
	}
	if got := rt.topics(change.TableID{DB: "mall", Table: "users"}); len(got) != 1 || got[0] != "mall_users" {
		t.Errorf("mall.users -> %v", got)
	}
}

// TestApsaraValidateMessages: what `ingest validate` says about a pipeline that breaks
// ApsaraMQ's rules names the fixes and holds no credential.
func TestApsaraValidateMessages(t *testing.T) {
	srv := aliyuntest.NewServer()
	defer srv.Close()
	yaml := func(extraSink string) string {
		return `source:
  type: mysql
  hostname: 127.0.0.1
  username: cdc
  password: pw
  tables: app.\.*
sink:
  type: upsert-kafka
  properties.bootstrap.servers: 127.0.0.1:9092
  aliyun.kafka.accessKeyId: ${secret_values.ak-id}
  aliyun.kafka.accessKeySecret: ${secret_values.ak-secret}
  aliyun.kafka.instanceId: ` + aliyuntest.InstanceID + `
  aliyun.kafka.endpoint: ` + srv.Host() + `
  aliyun.kafka.regionId: cn-hangzhou
` + extraSink
	}
	res := secrets.NewResolver([]secrets.Provider{&secrets.Map{Values: map[string]string{
		"ak-id": aliyuntest.AccessKeyID, "ak-secret": aliyuntest.AccessKeySecret}}}, nil)
	cases := map[string]struct {
		sink string
		want []string
	}{
		"exactly-once": {"  sink.delivery-guarantee: exactly-once\nroute:\n  - source-table: app.t\n    sink-table: app_t\n",
			[]string{"exactly-once is not possible with ApsaraMQ", "use at-least-once"}},
		"zstd": {"  properties.compression.type: zstd\nroute:\n  - source-table: app.t\n    sink-table: app_t\n",
			[]string{"use lz4, snappy or gzip"}},
		"invalid topic": {"route:\n  - source-table: app.t\n    sink-table: app.t\n",
			[]string{"route[0].sink-table: ApsaraMQ topic names may contain only letters, digits, '_' and '-', not '.'"}},
		"no routes": {"", []string{"add routes whose sink-table names valid topics"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := pipeline.Parse("p.yaml", []byte(yaml(c.sink)), pipeline.LoadOptions{Resolver: res})
			if err == nil {
				t.Fatal("valid")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nlacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), aliyuntest.AccessKeySecret) {
				t.Errorf("the secret is in %v", err)
			}
		})
	}
	if srv.CallCount("") != 0 {
		t.Error("validate called the OpenAPI")
	}
}
