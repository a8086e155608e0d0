//go:build integration

package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/ingestkit/ingest/upsert"
)

// TestPartitionCountChanged: a pipeline that wrote to a topic with 3 partitions records the
// count; once the topic has 5, plan reports it as an error and apply refuses to start,
// both naming the topic, both counts and the fix, before a record is written.
func TestPartitionCountChanged(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE items (id INT PRIMARY KEY, v INT)", "INSERT INTO items VALUES (1, 1), (2, 2)")
	topic := name + ".items"
	adm := kadm.NewClient(testenv.Kafka(t))
	t.Cleanup(func() { _, _ = adm.DeleteTopics(context.Background(), topic) })
	dir := t.TempDir()
	applyUntilCaughtUp(t, definition(t, name, "", "  sink.topic.partitions: 3"), dir)
	written := len(consumeAll(t, topic))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := adm.UpdatePartitions(ctx, 5, topic); err != nil {
		t.Fatal(err)
	}
	testenv.Exec(t, db, "INSERT INTO items VALUES (3, 3)")
	def := definition(t, name, "", "")
	want := []string{"topic " + topic + " has 5 partitions", "wrote its records for 3", dir, "re-keyed", "re-snapshot"}

	rep, err := Plan(ctx, def, Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.HasErrors() || !containsAll(strings.Join(rep.Problems, "\n"), want) {
		t.Errorf("plan problems lack %q:\n%s", want, strings.Join(rep.Problems, "\n"))
	}
	err = Run(ctx, def, Options{StateDir: dir, UntilCaughtUp: true})
	var pe *upsert.PartitionCountError
	if !errors.As(err, &pe) || !containsAll(err.Error(), want) {
		t.Fatalf("Run = %v, want a PartitionCountError naming %q", err, want)
	}
	if n := len(consumeAll(t, topic)); n != written {
		t.Errorf("%d records in %s after the refused run, want the %d of the first", n, topic, written)
	}
}

// TestPartitionCountConfigured: sink.topic.partitions that an existing topic does not have
// is an error of plan and of apply.
func TestPartitionCountConfigured(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE items (id INT PRIMARY KEY)", "INSERT INTO items VALUES (1)")
	topic := testenv.Topic(t, 2, nil)
	def := definition(t, name, "", fmt.Sprintf("  topic: %s\n  sink.topic.partitions: 4", topic))
	want := []string{"topic " + topic + " has 2 partitions", "sink.topic.partitions is 4"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := Plan(ctx, def, Options{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.HasErrors() || !containsAll(strings.Join(rep.Problems, "\n"), want) {
		t.Errorf("plan problems lack %q:\n%s", want, strings.Join(rep.Problems, "\n"))
	}
	err = Run(ctx, def, Options{StateDir: t.TempDir(), UntilCaughtUp: true})
	if err == nil || !containsAll(err.Error(), want) {
		t.Fatalf("Run = %v, want the error naming %q", err, want)
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
