//go:build integration

package upsert

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkSinkThroughput writes the same rows to the test broker twice per iteration:
// once as pre-encoded records through a bare franz-go client (the denominator: what the
// client and broker can take), once through the Sink (encoding, routing, tracking
// included). It reports both rates and their ratio. Run with -benchtime=1x or 3x.
func BenchmarkSinkThroughput(b *testing.B) {
	const rows, perTxn = 200_000, 100
	for _, g := range []Guarantee{AtLeastOnce, ExactlyOnce} {
		b.Run(g.String(), func(b *testing.B) {
			var rawRate, sinkRate float64
			for range b.N {
				rawTopic := testenv.Topic(b, 12, nil)
				sinkTopic := testenv.Topic(b, 12, nil)
				inputs := benchInputs(rows, perTxn)
				recs := preEncode(b, rawTopic, inputs)

				start := time.Now()
				rawProduce(b, recs, g)
				rawRate += float64(len(recs)) / time.Since(start).Seconds()

				cfg := baseConfig(b, sinkTopic, g)
				cfg.StateTopic = testenv.Name(b) + "_state"
				deleteTopic(b, cfg.StateTopic)
				start = time.Now()
				if err := runSink(b, cfg, inputs); err != nil {
					b.Fatal(err)
				}
				sinkRate += float64(rows) / time.Since(start).Seconds()
			}
			b.ReportMetric(rawRate/float64(b.N), "raw-records/s")
			b.ReportMetric(sinkRate/float64(b.N), "sink-records/s")
			b.ReportMetric(sinkRate/rawRate, "sink/raw")
		})
	}
}

func benchInputs(rows, perTxn int) []Input {
	var inputs []Input
	commit := time.Now() // old timestamps would make the broker roll a segment per batch
	for i := 0; i < rows; i += perTxn {
		cs := make([]change.Change, 0, perTxn)
		for j := i; j < i+perTxn; j++ {
			r := benchRow(int64(j))
			cs = append(cs, change.Change{Schema: benchSchema, Op: change.Insert, After: r})
		}
		inputs = append(inputs, Input{Batch: change.Batch{Changes: cs, CommitTime: commit, End: true,
			Position: []byte("pos")}})
	}
	return inputs
}

func preEncode(b *testing.B, topic string, inputs []Input) []*kgo.Record {
	enc := NewEncoder(EncodeOptions{})
	var recs []*kgo.Record
	var msgs []Message
	for _, in := range inputs {
		for i := range in.Changes {
			var err error
			if msgs, err = enc.Encode(msgs[:0], &in.Changes[i], in.CommitTime); err != nil {
				b.Fatal(err)
			}
			for _, m := range msgs {
				recs = append(recs, &kgo.Record{Topic: topic, Key: m.Key, Value: m.Value, Timestamp: m.Timestamp})
			}
		}
	}
	return recs
}

// rawProduce produces recs with the same client settings as the sink (linger 5ms,
// murmur2, acks=all, idempotent; one transaction per 10,000 records for exactly-once).
func rawProduce(b *testing.B, recs []*kgo.Record, g Guarantee) {
	opts := []kgo.Opt{kgo.ProducerLinger(5 * time.Millisecond), kgo.RecordPartitioner(Partitioner())}
	if g == ExactlyOnce {
		opts = append(opts, kgo.TransactionalID(testenv.Name(b)))
	}
	cl := testenv.Kafka(b, opts...)
	ctx := context.Background()
	var failed atomic.Int64
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.Add(1)
		}
	}
	for i := 0; i < len(recs); i += 10_000 {
		if g == ExactlyOnce {
			if err := cl.BeginTransaction(); err != nil {
				b.Fatal(err)
			}
		}
		for _, r := range recs[i:min(i+10_000, len(recs))] {
			cl.Produce(ctx, r, promise)
		}
		if g == ExactlyOnce {
			if err := cl.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := cl.Flush(ctx); err != nil || failed.Load() > 0 {
		b.Fatalf("flush: %v, %d failed", err, failed.Load())
	}
}
