package upsert

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/ingestkit/ingest/change"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kgo"
)

// benchBatch is about 1 MiB of encoded records, as in a full produce batch.
func benchBatch(tb testing.TB) []byte {
	enc := NewEncoder(EncodeOptions{})
	var src []byte
	var msgs []Message
	for i := int64(0); len(src) < 1<<20; i++ {
		c := benchChange(i)
		var err error
		if msgs, err = enc.Encode(msgs[:0], &c, time.Unix(1714537800, 0)); err != nil {
			tb.Fatal(err)
		}
		src = append(append(src, msgs[0].Key...), msgs[0].Value...)
	}
	return src
}

func TestLZ4CompressorRoundTrip(t *testing.T) {
	src := benchBatch(t)
	c := newLZ4Compressor()
	for range 3 { // pooled writers are reused
		out, codec := c.Compress(new(bytes.Buffer), src)
		if codec != kgo.CodecLz4 {
			t.Fatalf("codec %v", codec)
		}
		got, err := io.ReadAll(lz4.NewReader(bytes.NewReader(out)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, src) {
			t.Fatalf("round trip: %d bytes back for %d", len(got), len(src))
		}
		// The frame descriptor's BD byte: block maximum size 4 is 64 KiB.
		if bd := out[5]; bd>>4&7 != 4 {
			t.Fatalf("frame block size index %d, want 4 (64 KiB)", bd>>4&7)
		}
	}
}

// BenchmarkCompressLZ4 compares franz-go's default lz4 codec with the sink's on a 1 MiB
// batch of records.
func BenchmarkCompressLZ4(b *testing.B) {
	src := benchBatch(b)
	def, err := kgo.DefaultCompressor(kgo.Lz4Compression())
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    kgo.Compressor
	}{{"franz-go-default", def}, {"sink-64k-blocks", newLZ4Compressor()}} {
		b.Run(tc.name, func(b *testing.B) {
			var dst bytes.Buffer
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				dst.Reset()
				if _, codec := tc.c.Compress(&dst, src); codec != kgo.CodecLz4 {
					b.Fatal(codec)
				}
			}
			b.ReportMetric(float64(dst.Len())/float64(len(src)), "ratio")
		})
	}
}

func benchChange(i int64) change.Change {
	return change.Change{Schema: benchSchema, Op: change.Insert, After: benchRow(i)}
}
