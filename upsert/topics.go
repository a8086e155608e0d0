package upsert

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
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
// when allowed, and warns once about each existing topic that is not compacted. With a
// layout it also holds each topic's partition count fixed (layout.go).
type topicManager struct {
	admin   *kadm.Client
	creator TopicCreator
	create  bool
	spec    TopicSpec
	log     *slog.Logger
	known   map[string]bool
	layout  *topicLayout // nil: partition counts are not checked (the state topic)
}

// topicLayout is what the topic manager checks partition counts against.
type topicLayout struct {
	ledger   PartitionLedger  // nil: nothing is recorded across runs
	recorded map[string]int32 // the ledger's counts
	part     *fixedPartitioner
}

// ensure makes sure that every topic of topics exists and, with a layout, has the partition
// count the pipeline's records are keyed for. It only talks to the cluster about topics it
// has not seen before.
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
	counts, missing, err := m.describe(ctx, fresh)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		if !m.create {
			return &Error{Op: "check topics", Topic: missing[0],
				Err: errors.New("topic does not exist and sink.topic.auto-create is false; create it (compacted) or turn auto-create on")}
		}
		if err := m.createAll(ctx, missing, counts); err != nil {
			return err
		}
	}
	if m.spec.Configs["cleanup.policy"] == "compact" { // change-event topics keep history
		if err := m.checkCompacted(ctx, fresh, missing); err != nil {
			return err
		}
	}
	if err := m.fixLayout(fresh, counts); err != nil {
		return err
	}
	for _, t := range fresh {
		m.known[t] = true
	}
	return nil
}

// createAll creates the missing topics, waits until they are usable and adds their
// partition counts to counts. A topic whose count is recorded but that is missing (it was
// deleted) is created with the recorded count unless sink.topic.partitions says otherwise.
func (m *topicManager) createAll(ctx context.Context, missing []string, counts map[string]int32) error {
	byCount := map[int32][]string{}
	for _, t := range missing {
		n := m.spec.Partitions
		if n <= 0 && m.layout != nil && m.layout.recorded[t] > 0 {
			n = m.layout.recorded[t]
		}
		byCount[n] = append(byCount[n], t)
	}
	for _, n := range slices.Sorted(maps.Keys(byCount)) {
		spec := m.spec
		spec.Partitions = n
		if err := m.creator.CreateTopics(ctx, byCount[n], spec); err != nil {
			return wrap("create topics", byCount[n][0], tableNone, nil, err)
		}
	}
	created, err := m.waitVisible(ctx, missing)
	if err != nil {
		return err
	}
	maps.Copy(counts, created)
	m.log.Info("upsert: created topics", "topics", missing, "partitions", created,
		"replication_factor", replicationText(m.spec.ReplicationFactor))
	return nil
}

// replicationText is a replication factor for the log: -1 is the cluster's default.
func replicationText(rf int16) string {
	if rf <= 0 {
		return "cluster default"
	}
	return strconv.Itoa(int(rf))
}

// fixLayout checks the partition count of each of topics against the recorded one and
// sink.topic.partitions, records the counts of topics written to for the first time,
// and fixes every count for the rest of the run.
func (m *topicManager) fixLayout(topics []string, counts map[string]int32) error {
	l := m.layout
	if l == nil {
		return nil
	}
	state := ""
	if l.ledger != nil {
		state = l.ledger.Dir()
	}
	var fresh bool
	for _, t := range topics {
		if err := CheckPartitions(t, counts[t], l.recorded[t], state, m.spec.Partitions); err != nil {
			return &Error{Op: "check topics", Topic: t, Err: err}
		}
		if l.recorded[t] == 0 {
			fresh = true
		}
	}
	if fresh && l.ledger != nil {
		next := maps.Clone(l.recorded)
		for _, t := range topics {
			next[t] = counts[t]
		}
		if err := l.ledger.SavePartitions(next); err != nil {
			return &Error{Op: "record partition counts", Topic: topics[0], Err: err}
		}
		l.recorded = next
	}
	for _, t := range topics {
		l.part.fix(t, counts[t])
	}
	return nil
}

// checkRecorded checks, before the first record of a run, every recorded topic that
// exists against its recorded count, so that a topic that grew between runs stops the
// run before anything is written, whichever table comes first. Missing topics are
// checked when they are created.
func (m *topicManager) checkRecorded(ctx context.Context) error {
	if m.layout == nil || len(m.layout.recorded) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(m.layout.recorded))
	counts, _, err := m.describe(ctx, names)
	if err != nil {
		return err
	}
	for _, t := range names {
		if n, ok := counts[t]; ok {
			if err := CheckPartitions(t, n, m.layout.recorded[t], m.layout.ledger.Dir(), 0); err != nil {
				return &Error{Op: "check topics", Topic: t, Err: err}
			}
		}
	}
	return nil
}

// describe returns the partition count of each topic of topics that exists, and those
// that the cluster does not have.
func (m *topicManager) describe(ctx context.Context, topics []string) (map[string]int32, []string, error) {
	details, err := m.admin.ListTopics(ctx, topics...)
	if err != nil {
		return nil, nil, wrap("list topics", topics[0], tableNone, nil, err)
	}
	counts := map[string]int32{}
	var missing []string
	for _, t := range topics {
		d, ok := details[t]
		switch {
		case !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition):
			missing = append(missing, t)
		case d.Err != nil:
			return nil, nil, wrap("list topics", t, tableNone, nil, d.Err)
		default:
			counts[t] = int32(len(d.Partitions))
		}
	}
	return counts, missing, nil
}

// waitVisible waits until the metadata shows the created topics with a leader for every
// partition, and returns their partition counts. Producing earlier would make the client
// see a topic without leaders and wait out its minimum metadata age (5s) before looking
// again.
func (m *topicManager) waitVisible(ctx context.Context, topics []string) (map[string]int32, error) {
	for i := 0; ; i++ {
		details, err := m.admin.ListTopics(ctx, topics...)
		if err != nil {
			return nil, wrap("list topics", topics[0], tableNone, nil, err)
		}
		notReady := ""
		for _, t := range topics {
			if !ready(details[t]) {
				notReady = t
				break
			}
		}
		if notReady == "" {
			counts := map[string]int32{}
			for _, t := range topics {
				counts[t] = int32(len(details[t].Partitions))
			}
			return counts, nil
		}
		if i == 200 {
			return nil, &Error{Op: "create topics", Topic: notReady, Retryable: true,
				Err: errors.New("created, but the topic has no leader for every partition after 10s")}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
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
