package upsert

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TopicSpec says how the sink wants a missing topic created.
type TopicSpec struct {
	// Partitions is the partition count, -1 for the cluster's default.
	Partitions int32
	// ReplicationFactor is the replication factor, -1 for the cluster's default.
	ReplicationFactor int16
	// Configs are the topic configs; the sink always asks for cleanup.policy=compact.
	Configs map[string]string
}

// TopicCreator creates topics. The sink finds out over the Kafka protocol which topics are
// missing and asks its TopicCreator to create them; the default one uses the Kafka admin
// API, and a broker that refuses CreateTopics (ApsaraMQ) can supply one that calls its own
// API instead.
type TopicCreator interface {
	// CreateTopics creates the given topics, which did not exist when the sink looked. A
	// topic that exists by now is not an error. It must not change existing topics.
	CreateTopics(ctx context.Context, topics []string, spec TopicSpec) error
}

// KafkaTopicCreator creates topics with the Kafka admin API (CreateTopics).
type KafkaTopicCreator struct {
	Admin *kadm.Client
}

// CreateTopics creates each topic with spec; topics that already exist are left alone.
func (c KafkaTopicCreator) CreateTopics(ctx context.Context, topics []string, spec TopicSpec) error {
	configs := make(map[string]*string, len(spec.Configs))
	for k, v := range spec.Configs {
		configs[k] = &v
	}
	resps, err := c.Admin.CreateTopics(ctx, spec.Partitions, spec.ReplicationFactor, configs, topics...)
	if err != nil {
		return err
	}
	for _, r := range resps.Sorted() {
		if r.Err != nil && !errors.Is(r.Err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w (%s)", r.Topic, r.Err, r.ErrMessage)
		}
	}
	return nil
}

// topicManager makes sure that the topics the sink writes to exist, creating missing ones
// when allowed, and warns once about each existing topic that is not compacted.
type topicManager struct {
	admin   *kadm.Client
	creator TopicCreator
	create  bool
	spec    TopicSpec
	log     *slog.Logger
	known   map[string]bool
}

// ensure makes sure that every topic of topics exists. It only talks to the cluster about
// topics it has not seen before.
func (m *topicManager) ensure(ctx context.Context, topics []string) error {
	var fresh []string
	for _, t := range topics {
		if !m.known[t] && !slices.Contains(fresh, t) {
			fresh = append(fresh, t)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	missing, err := m.missing(ctx, fresh)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		if !m.create {
			return &Error{Op: "check topics", Topic: missing[0],
				Err: errors.New("topic does not exist and sink.topic.auto-create is false; create it (compacted) or turn auto-create on")}
		}
		if err := m.creator.CreateTopics(ctx, missing, m.spec); err != nil {
			return wrap("create topics", missing[0], tableNone, nil, err)
		}
		m.log.Info("upsert: created topics", "topics", missing, "partitions", m.spec.Partitions,
			"replication_factor", m.spec.ReplicationFactor)
		if err := m.waitVisible(ctx, missing); err != nil {
			return err
		}
	}
	if m.spec.Configs["cleanup.policy"] == "compact" { // change-event topics keep history
		if err := m.checkCompacted(ctx, fresh, missing); err != nil {
			return err
		}
	}
	for _, t := range fresh {
		m.known[t] = true
	}
	return nil
}

// missing returns the topics of topics that the cluster does not have.
func (m *topicManager) missing(ctx context.Context, topics []string) ([]string, error) {
	details, err := m.admin.ListTopics(ctx, topics...)
	if err != nil {
		return nil, wrap("list topics", topics[0], tableNone, nil, err)
	}
	var missing []string
	for _, t := range topics {
		d, ok := details[t]
		switch {
		case !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition):
			missing = append(missing, t)
		case d.Err != nil:
			return nil, wrap("list topics", t, tableNone, nil, d.Err)
		}
	}
	return missing, nil
}

// waitVisible waits until the metadata shows the created topics with a leader for every
// partition. Producing earlier would make the client see a topic without leaders and
// wait out its minimum metadata age (5s) before looking again.
func (m *topicManager) waitVisible(ctx context.Context, topics []string) error {
	for i := 0; ; i++ {
		details, err := m.admin.ListTopics(ctx, topics...)
		if err != nil {
			return wrap("list topics", topics[0], tableNone, nil, err)
		}
		notReady := ""
		for _, t := range topics {
			if !ready(details[t]) {
				notReady = t
				break
			}
		}
		if notReady == "" {
			return nil
		}
		if i == 200 {
			return &Error{Op: "create topics", Topic: notReady, Retryable: true,
				Err: errors.New("created, but the topic has no leader for every partition after 10s")}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ready reports whether the topic exists and every partition has a leader.
func ready(d kadm.TopicDetail) bool {
	if d.Err != nil || len(d.Partitions) == 0 {
		return false
	}
	for _, p := range d.Partitions {
		if p.Err != nil || p.Leader < 0 {
			return false
		}
	}
	return true
}

// checkCompacted warns about each existing topic whose cleanup.policy lacks compact: an
// upsert topic that deletes by time loses the latest value of quiet keys.
func (m *topicManager) checkCompacted(ctx context.Context, topics, created []string) error {
	var existing []string
	for _, t := range topics {
		if !slices.Contains(created, t) {
			existing = append(existing, t)
		}
	}
	if len(existing) == 0 {
		return nil
	}
	rcs, err := m.admin.DescribeTopicConfigs(ctx, existing...)
	if err != nil {
		// Not being allowed to read configs must not stop the pipeline; the check is advice.
		m.log.Warn("upsert: cannot check whether topics are compacted", "topics", existing, "err", err)
		return nil
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			m.log.Warn("upsert: cannot check whether topic is compacted", "topic", rc.Name, "err", rc.Err)
			continue
		}
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" && !slices.Contains(splitComma(c.MaybeValue()), "compact") {
				m.log.Warn("upsert: topic is not compacted; consumers may lose the latest value of keys that change rarely",
					"topic", rc.Name, "cleanup.policy", c.MaybeValue())
			}
		}
	}
	return nil
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
