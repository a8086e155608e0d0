// Package tail reads topics back for people: every record with its partition, offset,
// headers, key and value (or "tombstone"), or the materialised last value per key, which is
// what a compacted topic, a KTable or Flink's upsert-kafka table ends up holding.
package tail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Config says what to read.
type Config struct {
	// Topics are read from their start.
	Topics []string
	// ClientOpts connect to the cluster (seed brokers, TLS, SASL).
	ClientOpts []kgo.Opt
	// Follow keeps reading new records until ctx ends; otherwise reading stops at the end
	// offsets the topics had when it started.
	Follow bool
	// Materialize prints only the last value of each key, in key order, leaving out keys
	// whose last record is a tombstone.
	Materialize bool
	// ReadUncommitted also shows records of open or aborted transactions.
	ReadUncommitted bool
	// Warn, if set, is told about topics that do not exist when the read starts. Without
	// Follow the others are read and Read then returns a *MissingTopicsError; with Follow
	// the read goes on and picks a missing topic up once it is created.
	Warn func(msg string)
}

// MissingTopicsError reports the topics of a read that do not exist; the others were read.
type MissingTopicsError struct{ Topics []string }

func (e *MissingTopicsError) Error() string {
	return fmt.Sprintf("tail: topic %s does not exist (the other topics were read)", strings.Join(e.Topics, ", "))
}

// Record is one record read back.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte // nil: a tombstone
	Headers   []kgo.RecordHeader
}

// Run prints the records of cfg.Topics to w.
func Run(ctx context.Context, cfg Config, w io.Writer) error {
	latest := map[string]Record{}
	err := Read(ctx, cfg, func(r Record) error {
		if cfg.Materialize {
			latest[r.Topic+"\x00"+string(r.Key)] = r
			return nil
		}
		_, err := fmt.Fprintln(w, Format(r))
		return err
	})
	if err != nil || !cfg.Materialize {
		return err
	}
	keys := make([]string, 0, len(latest))
	for k, r := range latest {
		if r.Value != nil {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		r := latest[k]
		if _, err := fmt.Fprintf(w, "%s %s %s\n", r.Topic, r.Key, r.Value); err != nil {
			return err
		}
	}
	return nil
}

// Format renders a record on one line: topic/partition@offset [headers] key value.
func Format(r Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%d@%d", r.Topic, r.Partition, r.Offset)
	if len(r.Headers) > 0 {
		b.WriteString(" [")
		for i, h := range r.Headers {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%s=%q", h.Key, h.Value)
		}
		b.WriteByte(']')
	}
	b.WriteByte(' ')
	b.Write(r.Key)
	if r.Value == nil {
		b.WriteString(" tombstone")
	} else {
		b.WriteByte(' ')
		b.Write(r.Value)
	}
	return b.String()
}

// Read calls fn for every record of cfg.Topics, in offset order per partition.
func Read(ctx context.Context, cfg Config, fn func(Record) error) error {
	iso := kgo.ReadCommitted()
	if cfg.ReadUncommitted {
		iso = kgo.ReadUncommitted()
	}
	meta, err := kgo.NewClient(cfg.ClientOpts...)
	if err != nil {
		return fmt.Errorf("tail: %w", err)
	}
	present, missing, err := existing(ctx, kadm.NewClient(meta), cfg.Topics)
	meta.Close()
	if err != nil {
		return err
	}
	for _, t := range missing {
		if cfg.Warn != nil {
			cfg.Warn(fmt.Sprintf("tail: topic %s does not exist; reading the others", t))
		}
	}
	if cfg.Follow {
		present = cfg.Topics // a missing topic is consumed once it is created
	}
	if len(present) == 0 {
		return &MissingTopicsError{Topics: missing}
	}
	if err := read(ctx, cfg, present, iso, fn); err != nil {
		return err
	}
	if len(missing) > 0 && !cfg.Follow {
		return &MissingTopicsError{Topics: missing}
	}
	return nil
}

// existing splits topics into those that exist and those that do not.
func existing(ctx context.Context, adm *kadm.Client, topics []string) (present, missing []string, err error) {
	details, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return nil, nil, fmt.Errorf("tail: list topics: %w", err)
	}
	for _, t := range topics {
		d, ok := details[t]
		switch {
		case !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition):
			missing = append(missing, t)
		case d.Err != nil:
			return nil, nil, fmt.Errorf("tail: topic %s: %w", t, d.Err)
		default:
			present = append(present, t)
		}
	}
	return present, missing, nil
}

// read calls fn for every record of topics.
func read(ctx context.Context, cfg Config, topics []string, iso kgo.IsolationLevel, fn func(Record) error) error {
	opts := append([]kgo.Opt{kgo.ConsumeTopics(topics...), kgo.FetchIsolationLevel(iso),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, cfg.ClientOpts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("tail: %w", err)
	}
	defer cl.Close()
	var remaining map[string]map[int32]int64
	if !cfg.Follow {
		if remaining, err = endOffsets(ctx, kadm.NewClient(cl), topics); err != nil {
			return err
		}
	}
	for cfg.Follow || len(remaining) > 0 {
		fs, idle := poll(ctx, cl, cfg.Follow)
		if ctx.Err() != nil || idle {
			// Without Follow, a quiet spell ends the read: the partitions' last offsets may
			// be transaction markers or aborted records, which are never returned.
			return nil
		}
		if err := fs.Err0(); err != nil {
			return fmt.Errorf("tail: %w", err)
		}
		var ferr error
		fs.EachRecord(func(kr *kgo.Record) {
			if ferr == nil {
				ferr = fn(Record{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Key: kr.Key, Value: kr.Value, Headers: kr.Headers})
			}
			done(remaining, kr.Topic, kr.Partition, kr.Offset+1)
		})
		if ferr != nil {
			return ferr
		}
	}
	return nil
}

// quiet is how long a read without Follow waits for more records before it ends.
const quiet = 2 * time.Second

// poll fetches once; idle reports that nothing came for the quiet spell (never with follow).
func poll(ctx context.Context, cl *kgo.Client, follow bool) (kgo.Fetches, bool) {
	if follow {
		return cl.PollFetches(ctx), false
	}
	pctx, cancel := context.WithTimeout(ctx, quiet)
	defer cancel()
	fs := cl.PollFetches(pctx)
	return fs, pctx.Err() != nil && ctx.Err() == nil && fs.NumRecords() == 0
}

// endOffsets returns the end offset of every non-empty partition of topics.
func endOffsets(ctx context.Context, adm *kadm.Client, topics []string) (map[string]map[int32]int64, error) {
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("tail: list end offsets: %w", err)
	}
	out := map[string]map[int32]int64{}
	var terr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			terr = fmt.Errorf("tail: topic %s: %w", o.Topic, o.Err)
			return
		}
		if o.Offset > 0 {
			if out[o.Topic] == nil {
				out[o.Topic] = map[int32]int64{}
			}
			out[o.Topic][o.Partition] = o.Offset
		}
	})
	return out, terr
}

// done records that a partition was read up to next and drops it once it is complete.
func done(remaining map[string]map[int32]int64, topic string, p int32, next int64) {
	parts := remaining[topic]
	if end, ok := parts[p]; ok && next >= end {
		delete(parts, p)
		if len(parts) == 0 {
			delete(remaining, topic)
		}
	}
}
