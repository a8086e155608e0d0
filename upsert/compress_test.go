package upsert

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
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

// variedBatch is about 1 MiB of records shaped like the benchmark table's (bench/README.md):
// distinct names, e-mails and hex notes, which compress far less than benchBatch's rows.
func variedBatch() []byte {
	var src []byte
	for i := 0; len(src) < 1<<20; i++ {
		sum := md5.Sum([]byte(strconv.Itoa(i)))
		note := strings.Repeat(hex.EncodeToString(sum[:8]), 2+i%3)
		src = fmt.Appendf(src, `{"id":%d}{"id":%d,"account_id":%d,"name":"customer-%d","email":"user%d@example.com",`+
			`"amount":"%d.%02d","score":%g,"active":%d,"status":"paid","created_at":"2024-01-01 00:%02d:%02d.%06d",`+
			`"updated_at":"2023-11-14 22:13:%02d.000","note":"%s","attrs":"{\"color\":\"red\",\"size\":%d}"}`,
			i, i, i%100000, i, i, i%10000, i%100, float64(i%10007)/7, i%2, i/60%60, i%60, i*7%1000000, i%60, note, i%50)
	}
	return src
}

func TestLZ4CompressorRoundTrip(t *testing.T) {
	random := make([]byte, 200_000)
	rand.NewChaCha8([32]byte{1}).Read(random)
	tests := []struct {
		name string
		src  []byte
	}{
		{"records", benchBatch(t)},
		{"varied records", variedBatch()},
		{"incompressible", random},
		{"one byte", []byte{'x'}},
		{"a block and a byte", bytes.Repeat([]byte("abcdefgh"), 64<<10/8+1)[:64<<10+1]},
		{"empty", nil},
	}
	c := newLZ4Compressor()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 3 { // pooled compressors are reused
				out, codec := c.Compress(new(bytes.Buffer), tc.src)
				if codec != kgo.CodecLz4 {
					t.Fatalf("codec %v", codec)
				}
				got, err := io.ReadAll(lz4.NewReader(bytes.NewReader(out)))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, tc.src) {
					t.Fatalf("round trip: %d bytes back for %d", len(got), len(tc.src))
				}
				// The frame descriptor's BD byte: block maximum size 4 is 64 KiB.
				if bd := out[5]; bd>>4&7 != 4 {
					t.Fatalf("frame block size index %d, want 4 (64 KiB)", bd>>4&7)
				}
			}
		})
	}
}

// BenchmarkCompressLZ4 compares franz-go's default lz4 codec with the sink's on 1 MiB
// batches of records.
func BenchmarkCompressLZ4(b *testing.B) {
	def, err := kgo.DefaultCompressor(kgo.Lz4Compression())
	if err != nil {
		b.Fatal(err)
	}
	for _, batch := range []struct {
		name string
		src  []byte
	}{{"repetitive", benchBatch(b)}, {"varied", variedBatch()}} {
		for _, tc := range []struct {
			name string
			c    kgo.Compressor
		}{{"franz-go-default", def}, {"sink-64k-blocks", newLZ4Compressor()}} {
			b.Run(batch.name+"/"+tc.name, func(b *testing.B) {
				var dst bytes.Buffer
				var out []byte
				b.SetBytes(int64(len(batch.src)))
				b.ReportAllocs()
				for b.Loop() {
					dst.Reset()
					var codec kgo.CompressionCodecType
					if out, codec = tc.c.Compress(&dst, batch.src); codec != kgo.CodecLz4 {
						b.Fatal(codec)
					}
				}
				b.ReportMetric(float64(len(out))/float64(len(batch.src)), "ratio")
			})
		}
	}
}

func benchChange(i int64) change.Change {
	return change.Change{Schema: benchSchema, Op: change.Insert, After: benchRow(i)}
}
