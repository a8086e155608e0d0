//go:build integration

package upsert

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ingestkit/ingest/internal/testenv"
)

// TestSinkStateCopy: each guarantee stores its checkpoints in the state topic, with the
// parts of the state, and the next sink's Start returns the last one: exactly-once the
// last committed, at-least-once the last acknowledged (written when Run stops). A
// snapshot's chunk records written over several checkpoints come back in order.
func TestSinkStateCopy(t *testing.T) {
	for _, g := range []Guarantee{AtLeastOnce, ExactlyOnce} {
		t.Run(g.String(), func(t *testing.T) {
			noLeak(t)
			topic := testenv.Topic(t, 3, nil)
			state := testenv.Name(t) + "_state"
			deleteTopic(t, state)
			cfg := baseConfig(t, topic, g)
			cfg.StateTopic, cfg.Identity = state, []byte(`{"pipeline":"p"}`)
			cfg.TransactionInterval, cfg.StateInterval = 20*time.Millisecond, 20*time.Millisecond
			var chunks [][]byte
			var inputs []Input
			for i := range 30 {
				in := seqTxn(i)
				chunks = append(chunks, []byte(fmt.Sprintf(`{"chunk":%d}`, i)))
				in.State = State{Snapshot: []byte(`{"since":"x"}`), Chunks: chunks[:len(chunks):len(chunks)],
					SchemaParts: []Part{{Key: "d.t", Value: []byte(`{"v":1}`)}}}
				inputs = append(inputs, in)
			}
			if err := runSink(t, cfg, inputs); err != nil {
				t.Fatal(err)
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
			defer s.Close()
			if positionOf(t, cp) != 30 || len(cp.State.Chunks) != 30 || string(cp.State.Chunks[29]) != `{"chunk":29}` ||
				len(cp.State.SchemaParts) != 1 || string(s.StoredIdentity()) != `{"pipeline":"p"}` {
				t.Fatalf("stored %s with %d chunks, schema %v, identity %s", cp.Position, len(cp.State.Chunks), cp.State.SchemaParts, s.StoredIdentity())
			}
			if err := s.ResetState(ctx); err != nil {
				t.Fatal(err)
			}
			st, err := ReadState(ctx, cfg.Properties.ClientOpts(), state, cfg.Pipeline)
			if err != nil || st.Checkpoint != nil || st.Identity != nil {
				t.Fatalf("after ResetState: %+v, %v", st, err)
			}
		})
	}
}
