//go:build integration

package tail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ingestkit/ingest/internal/testenv"
)

func TestTail(t *testing.T) {
	topic := testenv.Topic(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A transaction, so the partition ends with a commit marker that is never returned.
	prod := testenv.Kafka(t, kgo.DefaultProduceTopic(topic), kgo.TransactionalID(testenv.Name(t)))
	if err := prod.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	recs := []*kgo.Record{
		{Key: []byte(`{"id":1}`), Value: []byte(`{"id":1,"v":"a"}`), Headers: []kgo.RecordHeader{{Key: "tableName", Value: []byte("t")}}},
		{Key: []byte(`{"id":2}`), Value: []byte(`{"id":2,"v":"b"}`)},
		{Key: []byte(`{"id":1}`), Value: []byte(`{"id":1,"v":"a2"}`)},
		{Key: []byte(`{"id":2}`)}, // tombstone
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	opts := []kgo.Opt{kgo.SeedBrokers(testenv.KafkaAddr())}

	var all bytes.Buffer
	if err := Run(ctx, Config{Topics: []string{topic}, ClientOpts: opts}, &all); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`%[1]s/0@0 [tableName="t"] {"id":1} {"id":1,"v":"a"}
%[1]s/0@1 {"id":2} {"id":2,"v":"b"}
%[1]s/0@2 {"id":1} {"id":1,"v":"a2"}
%[1]s/0@3 {"id":2} tombstone
`, topic)
	if all.String() != want {
		t.Errorf("tail:\n%s\nwant:\n%s", all.String(), want)
	}

	var mat bytes.Buffer
	if err := Run(ctx, Config{Topics: []string{topic}, ClientOpts: opts, Materialize: true}, &mat); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(mat.String()); got != topic+` {"id":1} {"id":1,"v":"a2"}` {
		t.Errorf("materialized: %q", got)
	}
}

// TestTailMissingTopic: a missing topic among several is reported, and the others are read
// all the same; with only missing topics the read fails at once.
func TestTailMissingTopic(t *testing.T) {
	topic := testenv.Topic(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prod := testenv.Kafka(t, kgo.DefaultProduceTopic(topic))
	if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(`{"id":1}`), Value: []byte(`{"id":1}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	opts := []kgo.Opt{kgo.SeedBrokers(testenv.KafkaAddr())}
	missing := "no_such_topic_" + testenv.Name(t)
	var out bytes.Buffer
	var warned []string
	err := Run(ctx, Config{Topics: []string{missing, topic}, ClientOpts: opts, Warn: func(m string) { warned = append(warned, m) }}, &out)
	var me *MissingTopicsError
	if !errors.As(err, &me) || len(me.Topics) != 1 || me.Topics[0] != missing {
		t.Fatalf("err = %v, want a MissingTopicsError for %s", err, missing)
	}
	if !strings.Contains(out.String(), topic+`/0@0 {"id":1} {"id":1}`) {
		t.Errorf("the existing topic was not read:\n%s", out.String())
	}
	if len(warned) != 1 || !strings.Contains(warned[0], missing) {
		t.Errorf("warnings = %q", warned)
	}
	if err := Run(ctx, Config{Topics: []string{missing}, ClientOpts: opts}, &out); !errors.As(err, &me) {
		t.Errorf("only a missing topic: err = %v", err)
	}
}
