package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/go-sql-driver/mysql"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ingestkit/ingest/upsert"
)

// rawResult is one measurement of a raw limit.
type rawResult struct {
	Rows  int
	Bytes int64 // payload bytes: column bytes of a scan, event bytes of a decode, key+value of a produce
	Wall  time.Duration
	CPU   time.Duration // this process's CPU time during the measurement
}

// rawScan reads table with one plain `SELECT *` through go-sql-driver (text protocol) into
// sql.RawBytes, as the CDC user: what the server and driver can deliver with no decoding.
// With prepared, the SELECT is a prepared statement, whose rows come in the binary protocol
// (as ingest's chunk SELECTs do): the server formats no numbers or dates.
func rawScan(ctx context.Context, s services, table string, prepared bool) (rawResult, error) {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = s.CDCUser, s.CDCPass, "tcp", s.MySQLAddr(), benchDB
	db, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		return rawResult{}, err
	}
	defer db.Close()
	cpu0, start := selfCPU(), time.Now()
	query, args := "SELECT * FROM "+table, []any(nil)
	if prepared {
		query, args = query+" WHERE ? = 1", []any{1} // go-sql-driver prepares a query with arguments
	}
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return rawResult{}, fmt.Errorf("raw scan of %s: %w", table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return rawResult{}, err
	}
	raw := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(raw))
	for i := range raw {
		dest[i] = &raw[i]
	}
	var r rawResult
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return r, fmt.Errorf("raw scan of %s: %w", table, err)
		}
		r.Rows++
		for _, v := range raw {
			r.Bytes += int64(len(v))
		}
	}
	if err := rows.Err(); err != nil {
		return r, fmt.Errorf("raw scan of %s: %w", table, err)
	}
	r.Wall, r.CPU = time.Since(start), selfCPU()-cpu0
	return r, nil
}

// rawDecode streams the binlog from from to to with go-mysql's BinlogSyncer alone (the
// decode options ingest uses: ParseTime, UTC timestamps) and counts the row changes of
// table: an update's before and after images count once.
func rawDecode(ctx context.Context, s services, flavor string, table string, from, to binlogPos) (rawResult, error) {
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID: 70000 + rand.Uint32N(1<<20), Flavor: flavor, Host: s.MySQLHost, Port: uint16(s.MySQLPort),
		User: s.CDCUser, Password: s.CDCPass, ParseTime: true, TimestampStringLocation: time.UTC,
		DisableRetrySync: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	defer syncer.Close()
	cpu0, start := selfCPU(), time.Now()
	st, err := syncer.StartSync(gomysql.Position{Name: from.File, Pos: from.Pos})
	if err != nil {
		return rawResult{}, fmt.Errorf("raw decode from %s: %w", from, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	var r rawResult
	file := from.File
	for {
		ev, err := st.GetEvent(ctx)
		if err != nil {
			return r, fmt.Errorf("raw decode from %s to %s: %w", from, to, err)
		}
		r.Bytes += int64(ev.Header.EventSize)
		switch e := ev.Event.(type) {
		case *replication.RotateEvent:
			// Its LogPos is in the file it ends, not in NextLogName: comparing it with the
			// end would stop at the first rotation.
			file = string(e.NextLogName)
			continue
		case *replication.RowsEvent:
			if string(e.Table.Table) == table && string(e.Table.Schema) == benchDB {
				n := len(e.Rows)
				if e.Type() == replication.EnumRowsEventTypeUpdate {
					n /= 2
				}
				r.Rows += n
			}
		}
		if ev.Header.LogPos > 0 && (binlogPos{File: file, Pos: ev.Header.LogPos}).after(to) {
			break
		}
	}
	r.Wall, r.CPU = time.Since(start), selfCPU()-cpu0
	return r, nil
}

// rawProduce produces n records to topic through a bare franz-go client (acks=all,
// idempotent: its defaults; the Java-compatible partitioner and the compression of the
// pipelines), cycling through sample: records ingest wrote, so the bytes are the same.
func rawProduce(ctx context.Context, c config, topic string, sample []*kgo.Record, n int) (rawResult, error) {
	if len(sample) == 0 {
		return rawResult{}, fmt.Errorf("raw produce to %s: no sample records", topic)
	}
	codec, err := codecOf(c.Compression)
	if err != nil {
		return rawResult{}, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.svc.Kafka), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(upsert.Partitioner()), kgo.ProducerBatchCompression(codec), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MetadataMinAge(250*time.Millisecond)) // as the sink sets it
	if err != nil {
		return rawResult{}, err
	}
	defer cl.Close()
	var failed atomic.Int64
	var firstErr atomic.Value
	promise := func(_ *kgo.Record, err error) {
		if err != nil && failed.Add(1) == 1 {
			firstErr.Store(err)
		}
	}
	if err := warmUp(ctx, cl, sample, c.Partitions); err != nil {
		return rawResult{}, fmt.Errorf("raw produce to %s: %w", topic, err)
	}
	var r rawResult
	cpu0, start := selfCPU(), time.Now()
	for i := range n {
		s := sample[i%len(sample)]
		cl.Produce(ctx, &kgo.Record{Key: s.Key, Value: s.Value, Headers: s.Headers}, promise)
		r.Bytes += int64(len(s.Key) + len(s.Value))
	}
	if err := cl.Flush(ctx); err != nil {
		return r, fmt.Errorf("raw produce to %s: flush: %w", topic, err)
	}
	r.Wall, r.CPU, r.Rows = time.Since(start), selfCPU()-cpu0, n
	if failed.Load() > 0 {
		return r, fmt.Errorf("raw produce to %s: %d records failed, the first: %v", topic, failed.Load(), firstErr.Load())
	}
	return r, nil
}

// warmUp produces sample records one by one until each of the partitions has had one, so
// that the measurement excludes connecting and loading the metadata.
func warmUp(ctx context.Context, cl *kgo.Client, sample []*kgo.Record, partitions int) error {
	seen := map[int32]bool{}
	for i := 0; i < len(sample) && i < 1000 && len(seen) < partitions; i++ {
		r := &kgo.Record{Key: sample[i].Key, Value: sample[i].Value}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			return err
		}
		seen[r.Partition] = true
	}
	return nil
}

func codecOf(name string) (kgo.CompressionCodec, error) {
	switch name {
	case "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.NoCompression(), fmt.Errorf("-compression %q: none, gzip, snappy, lz4 or zstd", name)
}

// relay is the raw streaming pipeline of the latency baseline: from the binlog position
// from, every row inserted into the latency table is produced at once as a record keyed
// like ingest's ({"id":N}) with a value of a typical record's size, until ctx is done.
func relay(ctx context.Context, c config, flavor string, from binlogPos, topic string) error {
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID: 70000 + rand.Uint32N(1<<20), Flavor: flavor, Host: c.svc.MySQLHost, Port: uint16(c.svc.MySQLPort),
		User: c.svc.CDCUser, Password: c.svc.CDCPass, ParseTime: true, TimestampStringLocation: time.UTC,
		DisableRetrySync: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	defer syncer.Close()
	st, err := syncer.StartSync(gomysql.Position{Name: from.File, Pos: from.Pos})
	if err != nil {
		return fmt.Errorf("raw relay from %s: %w", from, err)
	}
	codec, err := codecOf(c.Compression)
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.svc.Kafka), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(upsert.Partitioner()), kgo.ProducerBatchCompression(codec), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MetadataMinAge(250*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	var failed atomic.Value
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.Store(err)
		}
	}
	value := []byte(`{"payload":"` + strings.Repeat("x", 340) + `"}`)
	for {
		ev, err := st.GetEvent(ctx)
		if err != nil {
			return err
		}
		if err, _ := failed.Load().(error); err != nil {
			return fmt.Errorf("raw relay: produce: %w", err)
		}
		re, ok := ev.Event.(*replication.RowsEvent)
		if !ok || string(re.Table.Table) != "latency" || string(re.Table.Schema) != benchDB || re.Type() != replication.EnumRowsEventTypeInsert {
			continue
		}
		for _, row := range re.Rows {
			id, _ := row[0].(int64)
			cl.Produce(ctx, &kgo.Record{Key: fmt.Appendf(nil, `{"id":%d}`, id), Value: value}, promise)
		}
	}
}
