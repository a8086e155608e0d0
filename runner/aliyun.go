package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ingestkit/ingest/aliyun"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/route"
	"github.com/ingestkit/ingest/state"
	"github.com/ingestkit/ingest/upsert"
)

// ApsaraMQ for Kafka (the sink's aliyun.kafka.* options; docs/apsaramq.md).
//
// The broker does not create topics over the Kafka protocol, so the sink
// finds the missing topics over the Kafka protocol as usual and creates them
// through the ApsaraMQ OpenAPI (package aliyun); `ingest plan` lists the
// instance's topics through the OpenAPI too. ApsaraMQ has no idempotent
// producer, so the sink writes without one.

// defaultApsaraPartitions is the partition count of the topics created
// through the OpenAPI when sink.topic.partitions is not set: ApsaraMQ needs a
// count (1 to 360), and 12 is what its own automatic topic creation uses, a
// multiple of 6 as ApsaraMQ recommends.
const defaultApsaraPartitions = 12

// aliyunTestHook, when set, adjusts the configuration of every TopicManager
// before it is created. Only tests set it: to trust the certificate of their
// fake OpenAPI server and to shorten waits. Production code always verifies
// the OpenAPI endpoint's certificate against the system roots.
var aliyunTestHook func(*aliyun.TopicConfig)

// apsaraTopicManager returns a TopicManager for the aliyun.kafka.* options:
// the AccessKey pair from the options, or, when both are empty, the Alibaba
// Cloud SDK's default credential chain. It does no I/O.
func apsaraTopicManager(def *pipeline.Definition, log *slog.Logger) (*aliyun.TopicManager, error) {
	a := def.Sink.Aliyun
	cfg := aliyun.TopicConfig{
		AccessKeyID:     a.AccessKeyID.Reveal(),
		AccessKeySecret: a.AccessKeySecret.Reveal(),
		InstanceID:      a.InstanceID,
		Endpoint:        a.Endpoint,
		RegionID:        a.RegionID,
		CompactTopics:   !def.Sink.IsKafka(), // change-event topics keep their history
		Logger:          log,
	}
	if aliyunTestHook != nil {
		aliyunTestHook(&cfg)
	}
	return aliyun.NewTopicManager(cfg)
}

// apsaraSink adapts the sink configuration to ApsaraMQ for Kafka when the
// aliyun.kafka.* options are set; otherwise it does nothing. Missing topics
// are created through the OpenAPI, and idempotent writes are turned off.
func apsaraSink(def *pipeline.Definition, cfg *upsert.Config, log *slog.Logger) error {
	if !def.Sink.Aliyun.Enabled() {
		return nil
	}
	// pipeline validation refuses both; a Definition built in code may not
	// have been validated.
	if cfg.Guarantee == upsert.ExactlyOnce {
		return errors.New("sink.delivery-guarantee: exactly-once is not possible with ApsaraMQ for Kafka (aliyun.kafka.* is set): it has no transactions; use at-least-once")
	}
	p := cfg.Properties
	if p.Idempotence != nil && *p.Idempotence {
		return errors.New("sink.properties.enable.idempotence: ApsaraMQ for Kafka does not support idempotent writes; remove it (ingest turns them off for ApsaraMQ)")
	}
	m, err := apsaraTopicManager(def, log)
	if err != nil {
		return err
	}
	cfg.Creator = &apsaraCreator{m: m, log: log}
	// enable.idempotence=false is what ApsaraMQ's own documentation tells
	// Flink users to write; here it is implied, and the sink's check that
	// at-least-once keeps the idempotent producer must not refuse it.
	p.Idempotence = nil
	// One produce request in flight per broker (franz-go's default without
	// idempotence, made explicit) keeps each key's records in order across
	// retries.
	cfg.ClientOpts = append(cfg.ClientOpts, kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(1))
	log.Info("ApsaraMQ for Kafka: idempotent writes turned off",
		"why", "ApsaraMQ does not support the idempotent producer (nor transactions) on its topics; "+
			"records still go with acks=all and one request in flight per broker, so each key keeps its order, "+
			"but a retried request may write a record twice, which the next record of its key supersedes")
	if def.Sink.TopicReplicationFactor > 0 {
		log.Warn("ApsaraMQ for Kafka: sink.topic.replication-factor is ignored; the OpenAPI creates topics with the instance's replication",
			"replication_factor", def.Sink.TopicReplicationFactor)
	}
	return nil
}

// apsaraCreator is the sink's TopicCreator for ApsaraMQ: it creates topics
// with the OpenAPI and waits until they are ready, as
// TopicManager.EnsureTopics does, and falls back to an uncompacted topic on
// instances that refuse compacted ones.
type apsaraCreator struct {
	m   *aliyun.TopicManager
	log *slog.Logger

	mu        sync.Mutex
	noCompact bool // the instance refused a compacted topic
}

// CreateTopics implements upsert.TopicCreator. The names are checked against
// ApsaraMQ's rules first; the instance's topics are listed once; each
// missing one is created with spec.Partitions partitions (12 when the
// pipeline does not set sink.topic.partitions), compacted if the instance
// allows; then every created topic, and any listed one not yet in service,
// is waited for until GetTopicStatus shows all its partitions.
func (c *apsaraCreator) CreateTopics(ctx context.Context, topics []string, spec upsert.TopicSpec) error {
	var errs []error
	for _, t := range topics {
		if err := route.ValidateApsaraTopic(t); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	partitions := int(spec.Partitions)
	if partitions < 1 {
		partitions = defaultApsaraPartitions
	}
	existing, err := c.m.ListTopics(ctx)
	if err != nil {
		return err
	}
	var wait []string
	for _, t := range topics {
		if info, ok := existing[t]; ok {
			if !info.InService() {
				wait = append(wait, t)
			}
			continue
		}
		if err := c.create(ctx, t, partitions); err != nil {
			return err
		}
		wait = append(wait, t)
	}
	for _, t := range wait {
		if err := c.m.WaitReady(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// create creates one topic, compacted (which ApsaraMQ offers only as a
// local-storage topic on Professional Edition instances) unless the instance
// refused that before. When the compacted topic is refused for a reason that
// is not about credentials, permissions, throttling or the network, the
// topic is created without compaction, with a warning, and later topics are
// created that way straight away.
func (c *apsaraCreator) create(ctx context.Context, name string, partitions int) error {
	c.mu.Lock()
	compact := !c.noCompact
	c.mu.Unlock()
	if !compact {
		return c.m.CreateTopic(ctx, name, partitions, false, "")
	}
	err := c.m.CreateTopic(ctx, name, partitions, true, "")
	if err == nil || !mayRefuseCompaction(err) {
		return err
	}
	if err2 := c.m.CreateTopic(ctx, name, partitions, false, ""); err2 != nil {
		return fmt.Errorf("%w (before that, creating it as a compacted local-storage topic failed: %v)", err2, err)
	}
	c.mu.Lock()
	c.noCompact = true
	c.mu.Unlock()
	c.log.Warn("ApsaraMQ for Kafka: the instance refused a compacted topic, so topics are created without compaction; "+
		"consumers must keep the latest record of each key themselves (compacted topics need local storage, a Professional Edition feature)",
		"topic", name, "refusal", err.Error())
	return nil
}

// mayRefuseCompaction reports whether a failed CreateTopic of a compacted
// topic may have failed because the instance has no compacted
// (local-storage) topics: an answer of the server that is not about the
// credentials, permissions, the request's form, throttling or a server
// fault. Alibaba Cloud does not document the code of that refusal.
func mayRefuseCompaction(err error) bool {
	var ae *aliyun.APIError
	if !errors.As(err, &ae) || ae.Retryable || ae.HTTPStatus == 0 ||
		ae.HTTPStatus == http.StatusUnauthorized || ae.HTTPStatus == http.StatusForbidden || ae.HTTPStatus >= 500 {
		return false
	}
	for _, c := range []string{"Signature", "AccessKey", "SecurityToken", "TimeStamp", "Forbidden", "NoPermission",
		"Missing", "InvalidVersion", "InvalidAction", "InvalidResponse", "Transport", "Credentials", "SDK."} {
		if strings.Contains(ae.Code, c) {
			return false
		}
	}
	return true
}

// addApsaraTopics is addTopics for ApsaraMQ: it checks the routed topic
// names against ApsaraMQ's rules, each bad one a problem that names the
// route to add, and lists the instance's topics through the OpenAPI.
func (rep *Report) addApsaraTopics(ctx context.Context, def *pipeline.Definition, want map[string]bool, dir string, sec state.Secrets) error {
	names := make([]string, 0, len(want))
	for t := range want {
		names = append(names, t)
	}
	sort.Strings(names)
	var valid []string
	for _, t := range names {
		if err := route.ValidateApsaraTopic(t); err != nil {
			var tables []string
			for _, pt := range rep.Tables {
				for _, topic := range pt.Topics {
					if topic == t {
						tables = append(tables, pt.Table)
					}
				}
			}
			rep.Problems = append(rep.Problems, "error: "+strings.Join(tables, ", ")+": "+err.Error())
			continue
		}
		valid = append(valid, t)
	}
	m, err := apsaraTopicManager(def, discardLogger())
	if err != nil {
		return err
	}
	existing, err := m.ListTopics(ctx)
	if err != nil {
		return fmt.Errorf("ApsaraMQ OpenAPI: %w", err)
	}
	for _, t := range valid {
		if _, ok := existing[t]; !ok {
			rep.TopicsToCreate = append(rep.TopicsToCreate, t)
		}
	}
	counts := map[string]int32{}
	for name, info := range existing {
		counts[name] = int32(info.Partitions)
	}
	rep.checkPartitions(counts, want, int32(def.Sink.TopicPartitions), dir, sec)
	if len(rep.TopicsToCreate) > 0 && !def.Sink.TopicAutoCreate {
		rep.Problems = append(rep.Problems, "error: topics missing and sink.topic.auto-create is false: "+
			strings.Join(rep.TopicsToCreate, ", ")+"; create them in the ApsaraMQ console or turn auto-create on")
	}
	return nil
}
