//go:build integration

package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSmokeMariaDB reads the binlog position with the CDC user's grants and checks the server
// settings CDC depends on, on every server of the matrix.
func TestSmokeMariaDB(t *testing.T) { RunMatrix(t, smokeMariaDB) }

func smokeMariaDB(t *testing.T, srv Server) {
	u, p := CDCUser()
	conn, err := client.Connect(srv.Addr, u, p, "")
	if err != nil {
		t.Fatalf("connect %s as %s: %v", srv.Addr, u, err)
	}
	defer conn.Close()
	r, err := conn.Execute("SHOW MASTER STATUS")
	if err != nil {
		t.Fatalf("SHOW MASTER STATUS: %v", err)
	}
	if r.RowNumber() != 1 {
		t.Fatalf("SHOW MASTER STATUS: %d rows, want 1 (is log_bin on?)", r.RowNumber())
	}
	file, _ := r.GetString(0, 0)
	pos, _ := r.GetInt(0, 1)
	if file == "" || pos < 4 {
		t.Fatalf("binlog position %q:%d", file, pos)
	}
	t.Logf("binlog position %s:%d", file, pos)

	want := map[string]string{"binlog_format": "ROW", "binlog_row_image": "FULL", "binlog_row_metadata": "FULL", "gtid_strict_mode": "1"}
	for name, v := range want {
		r, err := conn.Execute("SELECT @@" + name)
		if err != nil {
			t.Fatalf("SELECT @@%s: %v", name, err)
		}
		got, _ := r.GetString(0, 0)
		if got != v {
			t.Errorf("@@%s = %q, want %q", name, got, v)
		}
	}
}

// TestSmokeKafkaTransaction produces a record inside a committed transaction and reads it
// back with read_committed, and checks that an aborted record stays invisible.
func TestSmokeKafkaTransaction(t *testing.T) {
	topic := Topic(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	prod := Kafka(t, kgo.TransactionalID(Name(t)), kgo.DefaultProduceTopic(topic))
	produce := func(value string, commit kgo.TransactionEndTry) {
		t.Helper()
		if err := prod.BeginTransaction(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(`{"id":1}`), Value: []byte(value)}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
		if err := prod.EndTransaction(ctx, commit); err != nil {
			t.Fatalf("end transaction: %v", err)
		}
	}
	produce(`{"id":1,"v":"aborted"}`, kgo.TryAbort)
	produce(`{"id":1,"v":"committed"}`, kgo.TryCommit)

	cons := Kafka(t, kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) == 0 {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("no committed record within the deadline")
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if len(got) != 1 || got[0] != `{"id":1,"v":"committed"}` {
		t.Fatalf("read_committed saw %q, want only the committed record", got)
	}
}
