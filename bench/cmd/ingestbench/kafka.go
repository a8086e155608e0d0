package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// topicPrefix starts the name of every topic the suite creates (or has ingest create, or
// a peer): the bench database's name and a dot.
func topicPrefix() string { return benchDB + "." }

// kafka is the suite's admin view of the broker.
type kafka struct {
	addr  string
	cl    *kgo.Client
	adm   *kadm.Client
	parts int
}

func newKafka(addr string, partitions int) (*kafka, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, fmt.Errorf("kafka client for %s: %w", addr, err)
	}
	return &kafka{addr: addr, cl: cl, adm: kadm.NewClient(cl), parts: partitions}, nil
}

func (k *kafka) Close() { k.cl.Close() }

// createTopic creates a compacted topic of the suite's partition count, as ingest's
// sink.topic.auto-create would; with appendTime the broker sets the record timestamps.
func (k *kafka) createTopic(ctx context.Context, topic string, appendTime bool) error {
	return k.createTopicPolicy(ctx, topic, appendTime, "compact")
}

// createTopicPolicy is createTopic with a cleanup.policy: compact for upsert-kafka, delete
// for the change events of type kafka (as ingest creates their topics).
func (k *kafka) createTopicPolicy(ctx context.Context, topic string, appendTime bool, policy string) error {
	return k.createTopicWith(ctx, topic, appendTime, policy, nil)
}

// createTopicWith is createTopicPolicy with more topic configs.
func (k *kafka) createTopicWith(ctx context.Context, topic string, appendTime bool, policy string, more map[string]string) error {
	logAppend := "LogAppendTime"
	configs := map[string]*string{"cleanup.policy": &policy}
	if appendTime {
		configs["message.timestamp.type"] = &logAppend
	}
	for k, v := range more {
		configs[k] = &v
	}
	resp, err := k.adm.CreateTopic(ctx, int32(k.parts), 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return k.waitLeaders(ctx, topic)
}

// waitLeaders waits until every partition of topic has a leader, so that the first
// records produced to it do not wait for a metadata refresh.
func (k *kafka) waitLeaders(ctx context.Context, topic string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		td, err := k.adm.ListTopics(ctx, topic)
		if err == nil {
			if t, ok := td[topic]; ok && t.Err == nil && len(t.Partitions) == k.parts && allLed(t.Partitions) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s: partitions without a leader after 30s (%v)", topic, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func allLed(ps kadm.PartitionDetails) bool {
	for _, p := range ps {
		if p.Err != nil || p.Leader < 0 {
			return false
		}
	}
	return true
}

// deleteTopics deletes topics; with none named it deletes every topic of earlier suite runs.
func (k *kafka) deleteTopics(ctx context.Context, topics ...string) error {
	if len(topics) == 0 {
		all, err := k.adm.ListTopics(ctx)
		if err != nil {
			return fmt.Errorf("list topics: %w", err)
		}
		for _, t := range all.Names() {
			if strings.HasPrefix(t, topicPrefix()) {
				topics = append(topics, t)
			}
		}
	}
	if len(topics) == 0 {
		return nil
	}
	// A topic named twice makes the broker refuse it (INVALID_REQUEST): the suite names
	// the first run's topic again in every round.
	topics = slices.Compact(slices.Sorted(slices.Values(topics)))
	resps, err := k.adm.DeleteTopics(ctx, topics...)
	if err != nil {
		return fmt.Errorf("delete topics: %w", err)
	}
	for _, r := range resps.Sorted() {
		if r.Err != nil && !strings.Contains(r.Err.Error(), "UNKNOWN_TOPIC") {
			return fmt.Errorf("delete topic %s: %w", r.Topic, r.Err)
		}
	}
	return nil
}

// brokerVersion describes the broker: the Kafka version from the jars of the test
// services, and the highest Produce API version the broker supports.
func (k *kafka) brokerVersion(ctx context.Context, libs string) string {
	v := "unknown"
	if i := strings.LastIndex(libs, "libs-"); i >= 0 {
		v = libs[i+len("libs-"):]
	}
	vs, err := k.adm.ApiVersions(ctx)
	if err != nil {
		return v
	}
	for _, b := range vs.Sorted() {
		if b.Err == nil {
			return fmt.Sprintf("%s (API versions: %s)", v, b.VersionGuess())
		}
	}
	return v
}

// topicRead is what reading a topic back found.
type topicRead struct {
	Records    int
	Tombstones int
	KeyBytes   int64
	ValueBytes int64
	Sample     []*kgo.Record // the first sample records
	First      time.Time     // the earliest record timestamp
}

// Bytes is key plus value bytes.
func (r topicRead) Bytes() int64 { return r.KeyBytes + r.ValueBytes }

// readTopic reads topic from the start with read_committed until want records have been
// read and then no more arrive for a moment (so duplicates are counted too), keeping the
// first sample records.
func (k *kafka) readTopic(ctx context.Context, topic string, want, sample int) (topicRead, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		return topicRead{}, err
	}
	defer cl.Close()
	var r topicRead
	idle := 10 * time.Second
	for {
		if r.Records >= want {
			idle = time.Second
		}
		pctx, cancel := context.WithTimeout(ctx, idle)
		fs := cl.PollFetches(pctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return r, err
		}
		if errs := fs.Errors(); len(errs) > 0 && !errors.Is(errs[0].Err, context.DeadlineExceeded) {
			return r, fmt.Errorf("read %s: %w", topic, errs[0].Err)
		}
		if fs.NumRecords() == 0 {
			break
		}
		fs.EachRecord(func(rec *kgo.Record) {
			r.Records++
			r.KeyBytes += int64(len(rec.Key))
			r.ValueBytes += int64(len(rec.Value))
			if rec.Value == nil {
				r.Tombstones++
			}
			if r.First.IsZero() || rec.Timestamp.Before(r.First) {
				r.First = rec.Timestamp
			}
			if len(r.Sample) < sample {
				r.Sample = append(r.Sample, rec)
			}
		})
	}
	if r.Records < want {
		return r, fmt.Errorf("topic %s holds %d records, want %d", topic, r.Records, want)
	}
	if r.Records > want {
		log.Printf("topic %s holds %d records for %d changes (%d duplicates)", topic, r.Records, want, r.Records-want)
	}
	return r, nil
}
