//go:build integration

package upsert

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/twmb/franz-go/pkg/kadm"
)

// TestSinkGoldenReadBack writes the golden changes through an at-least-once sink into a
// topic it creates, reads them back and compares every record with the encoder's golden
// output: key, value, headers, timestamp, and the murmur2 partition.
func TestSinkGoldenReadBack(t *testing.T) {
	noLeak(t)
	topic := testenv.Name(t)
	deleteTopic(t, topic)
	var got acks
	cfg := baseConfig(t, topic, AtLeastOnce)
	cfg.Partitions = 5
	cfg.Acked = got.add
	cfg.Encode = EncodeOptions{TableHeaders: true, CustomHeaders: []Header{{"env", "prod"}, {"team", "data"}}}
	inputs := []Input{
		{Batch: change.Batch{Changes: caseChanges(), CommitTime: commitTime, End: true, Position: []byte("p1")}},
		{Batch: change.Batch{Changes: kindChanges(), CommitTime: commitTime, End: true, Position: []byte("p2")}},
	}
	if err := runSink(t, cfg, inputs); err != nil {
		t.Fatal(err)
	}
	if got.last() != "p2" {
		t.Errorf("last checkpoint %q, want p2", got.last())
	}
	recs := readAll(t, topic, false)
	// Order per partition is the write order; compare the records by partition.
	enc := NewEncoder(cfg.Encode)
	var want []Message
	for _, in := range inputs {
		for i := range in.Changes {
			var err error
			if want, err = enc.Encode(want, &in.Changes[i], commitTime); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(recs) != len(want) {
		t.Fatalf("read %d records, want %d", len(recs), len(want))
	}
	byPart := map[int32][]Message{}
	for _, m := range want {
		p := int32(PartitionFor(m.Key, 5))
		byPart[p] = append(byPart[p], m)
	}
	for _, r := range recs {
		m := byPart[r.Partition][0]
		byPart[r.Partition] = byPart[r.Partition][1:]
		var a, b bytes.Buffer
		writeMessage(&a, Message{Key: r.Key, Value: r.Value, Headers: r.Headers, Timestamp: r.Timestamp})
		writeMessage(&b, m)
		if a.String() != b.String() {
			t.Errorf("partition %d offset %d:\n got %s\nwant %s", r.Partition, r.Offset, a.String(), b.String())
		}
	}
	checkCompacted(t, topic, 5)
}

func checkCompacted(t *testing.T, topic string, partitions int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	adm := kadm.NewClient(testenv.Kafka(t))
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := rcs.On(topic, nil)
	for _, c := range rc.Configs {
		if c.Key == "cleanup.policy" && c.MaybeValue() != "compact" {
			t.Errorf("created topic has cleanup.policy=%s", c.MaybeValue())
		}
	}
	td, err := adm.ListTopics(ctx, topic)
	if err != nil || len(td[topic].Partitions) != partitions {
		t.Errorf("created topic has %d partitions (%v), want %d", len(td[topic].Partitions), err, partitions)
	}
}

// TestSinkBufferFlush sends 100 updates of one key within the buffer interval and expects
// one record: the last one.
func TestSinkBufferFlush(t *testing.T) {
	topic := testenv.Topic(t, 1, map[string]*string{"cleanup.policy": ptr("compact")})
	var got acks
	cfg := baseConfig(t, topic, AtLeastOnce)
	cfg.BufferMaxRows, cfg.BufferInterval = 1000, 5*time.Second
	cfg.Acked = got.add
	var inputs []Input
	for i := range 100 {
		row := change.Row{change.IntValue(1), change.IntValue(int64(i)), change.IntValue(0)}
		inputs = append(inputs, Input{Batch: change.Batch{
			Changes:    []change.Change{{Schema: seqSchema, Op: change.Update, Before: row, After: row}},
			CommitTime: commitTime, End: true, Position: []byte(strconv.Itoa(i + 1))}})
	}
	start := time.Now()
	if err := runSink(t, cfg, inputs); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 4*time.Second {
		t.Errorf("the stop did not flush at once (took %v)", time.Since(start))
	}
	recs := readAll(t, topic, false)
	if len(recs) != 1 || decodeSeq(t, recs[0]).Seq != 99 {
		t.Fatalf("got %d records (%v), want one with seq 99", len(recs), recs)
	}
	if got.last() != "100" {
		t.Errorf("last checkpoint %q, want 100", got.last())
	}
}

// TestSinkBufferInterval checks that the interval flushes without the input closing, and
// that a delete stays a tombstone.
func TestSinkBufferInterval(t *testing.T) {
	noLeak(t)
	topic := testenv.Topic(t, 1, nil)
	var got acks
	cfg := baseConfig(t, topic, AtLeastOnce)
	cfg.BufferMaxRows, cfg.BufferInterval = 1000, 200*time.Millisecond
	cfg.Acked = got.add
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan Input, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, in) }()
	row := change.Row{change.IntValue(1), change.IntValue(1), change.IntValue(0)}
	in <- Input{Batch: change.Batch{Changes: []change.Change{
		{Schema: seqSchema, Op: change.Insert, After: row},
		{Schema: seqSchema, Op: change.Delete, Before: row},
	}, CommitTime: commitTime, End: true, Position: []byte("1")}}
	deadline := time.Now().Add(10 * time.Second)
	for got.last() != "1" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got.last() != "1" {
		t.Fatal("the interval did not flush the buffer")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, topic, false)
	if len(recs) != 1 || recs[0].Value != nil || string(recs[0].Key) != `{"id":1}` {
		t.Fatalf("got %v, want one tombstone", recs)
	}
}

// TestSinkTopicNotCreated checks that a missing topic without auto-create is a fatal
// error naming the topic.
func TestSinkTopicNotCreated(t *testing.T) {
	topic := testenv.Name(t)
	cfg := baseConfig(t, topic, AtLeastOnce)
	cfg.AutoCreate = false
	err := runSink(t, cfg, []Input{seqTxn(0)})
	var e *Error
	if !errors.As(err, &e) || e.Topic != topic || IsRetryable(err) {
		t.Fatalf("got %v, want a fatal error naming topic %s", err, topic)
	}
}

// TestSinkOversized checks the max.request.size check: an error naming table, key and
// size, or a skip with sink.skip-oversized-records.
func TestSinkOversized(t *testing.T) {
	topic := testenv.Topic(t, 1, nil)
	big := change.Row{change.IntValue(7), change.IntValue(0), change.StringValue(bytes.Repeat([]byte("x"), 2<<20))}
	small := change.Row{change.IntValue(8), change.IntValue(0), change.IntValue(0)}
	inputs := []Input{{Batch: change.Batch{Changes: []change.Change{
		{Schema: seqSchema, Op: change.Insert, After: big},
		{Schema: seqSchema, Op: change.Insert, After: small},
	}, CommitTime: commitTime, End: true, Position: []byte("1")}}}

	cfg := baseConfig(t, topic, AtLeastOnce)
	err := runSink(t, cfg, inputs)
	var oe *OversizedError
	if !errors.As(err, &oe) || !bytes.Contains([]byte(err.Error()), []byte(`table app.seq key "{\"id\":7}"`)) {
		t.Fatalf("got %v, want an oversized error naming table and key", err)
	}
	cfg.SkipOversized = true
	var got acks
	cfg.Acked = got.add
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan Input, 1)
	in <- inputs[0]
	close(in)
	if err := s.Run(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if s.Stats().Skipped.Load() != 1 || got.last() != "1" {
		t.Errorf("skipped %d, checkpoint %q", s.Stats().Skipped.Load(), got.last())
	}
	if recs := readAll(t, topic, false); len(recs) != 1 || string(recs[0].Key) != `{"id":8}` {
		t.Errorf("got %d records, want the small one", len(recs))
	}
}

// TestSinkExactlyOnceRestart writes in transactions, stops, and checks that a new sink
// reads the committed checkpoint back and that read_committed sees every change once.
func TestSinkExactlyOnceRestart(t *testing.T) {
	noLeak(t)
	topic := testenv.Topic(t, 3, nil)
	state := testenv.Name(t) + "_state"
	deleteTopic(t, state)
	cfg := baseConfig(t, topic, ExactlyOnce)
	cfg.StateTopic = state
	cfg.TransactionInterval = 20 * time.Millisecond
	var got acks
	cfg.Acked = got.add
	var inputs []Input
	for i := range 40 {
		inputs = append(inputs, seqTxn(i))
	}
	if err := runSink(t, cfg, inputs[:20]); err != nil {
		t.Fatal(err)
	}
	if got.last() != "20" {
		t.Fatalf("last committed checkpoint %q, want 20", got.last())
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cp, err := s.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if positionOf(t, cp) != 20 {
		t.Fatalf("restart read checkpoint %v, want position 20", cp)
	}
	in := make(chan Input, len(inputs))
	for _, b := range inputs[20:] {
		in <- b
	}
	close(in)
	if err := s.Run(ctx, in); err != nil {
		t.Fatal(err)
	}
	checkExactlyOnce(t, topic, 40)
}

// checkExactlyOnce checks that read_committed sees every change of transactions 0..n-1
// exactly once and, per key, in order.
func checkExactlyOnce(t *testing.T, topic string, n int) {
	t.Helper()
	recs := readAll(t, topic, true)
	seen := map[[2]int]int{}
	lastSeq := map[int]int{}
	for _, r := range recs {
		v := decodeSeq(t, r)
		seen[[2]int{v.Seq, v.J}]++
		if prev, ok := lastSeq[v.ID]; ok && v.Seq <= prev {
			t.Errorf("key %d: seq %d after %d", v.ID, v.Seq, prev)
		}
		lastSeq[v.ID] = v.Seq
	}
	for i := range n {
		for j := range 5 {
			if c := seen[[2]int{i, j}]; c != 1 {
				t.Errorf("change %d/%d seen %d times", i, j, c)
			}
		}
	}
	if len(recs) != 5*n {
		t.Errorf("read %d records, want %d", len(recs), 5*n)
	}
}

// TestSinkFencing starts a second writer with the same transactional id and checks that
// the first one fails with ErrFenced and that nothing it wrote becomes visible.
func TestSinkFencing(t *testing.T) {
	noLeak(t)
	topic := testenv.Topic(t, 1, nil)
	state := testenv.Name(t) + "_state"
	deleteTopic(t, state)
	cfg := baseConfig(t, topic, ExactlyOnce)
	cfg.StateTopic = state
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Start(ctx); err != nil {
		t.Fatal(err)
	}
	second, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := second.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	in := make(chan Input, 2)
	in <- seqTxn(0)
	close(in)
	err = first.Run(ctx, in)
	if !errors.Is(err, ErrFenced) || IsRetryable(err) {
		t.Fatalf("first writer: got %v, want a fatal ErrFenced", err)
	}
	if recs := readAll(t, topic, true); len(recs) != 0 {
		t.Errorf("read_committed sees %d records of the fenced writer", len(recs))
	}
}

func ptr[T any](v T) *T { return &v }

// TestSinkRecordFailureAborts makes the broker refuse one record of a transaction (the
// topic's max.message.bytes is below the record, max.request.size is not) and checks that
// the exactly-once sink aborts instead of committing the rest, and that the at-least-once
// sink stops without reporting the transaction's position.
func TestSinkRecordFailureAborts(t *testing.T) {
	for _, g := range []Guarantee{ExactlyOnce, AtLeastOnce} {
		t.Run(g.String(), func(t *testing.T) {
			noLeak(t)
			topic := testenv.Topic(t, 1, map[string]*string{"max.message.bytes": ptr("2000")})
			state := testenv.Name(t) + "_state"
			deleteTopic(t, state)
			cfg := baseConfig(t, topic, g)
			cfg.StateTopic = state
			var got acks
			cfg.Acked = got.add
			small := change.Row{change.IntValue(1), change.IntValue(0), change.IntValue(0)}
			noise := make([]byte, 10000) // incompressible, so the compressed batch is too large too
			_, _ = rand.Read(noise)
			big := change.Row{change.IntValue(2), change.IntValue(0), change.BytesValue(noise)}
			inputs := []Input{
				{Batch: change.Batch{Changes: []change.Change{{Schema: seqSchema, Op: change.Insert, After: small}},
					CommitTime: commitTime, End: true, Position: []byte("1")}},
				{Batch: change.Batch{Changes: []change.Change{
					{Schema: seqSchema, Op: change.Insert, After: small},
					{Schema: seqSchema, Op: change.Insert, After: big},
				}, CommitTime: commitTime, End: true, Position: []byte("2")}},
			}
			err := runSink(t, cfg, inputs)
			if err == nil || IsRetryable(err) || !strings.Contains(err.Error(), "MESSAGE_TOO_LARGE") {
				t.Fatalf("got %v, want a fatal MESSAGE_TOO_LARGE error", err)
			}
			if got.last() == "2" {
				t.Fatal("the failed transaction's position was reported")
			}
			if g == ExactlyOnce {
				if recs := readAll(t, topic, true); len(recs) != 0 {
					t.Errorf("read_committed sees %d records of the aborted transaction", len(recs))
				}
			}
		})
	}
}
