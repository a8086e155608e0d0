//go:build integration

package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTableLifecycle runs, beside the workload of t0..t2 and SIGKILLs of ingest at random
// moments, random table lifecycle DDL on side tables s1..s3: CREATE TABLE followed by ALTER
// TABLE … ADD PRIMARY KEY, writes, TRUNCATE, RENAME out of source.tables (tables.exclude
// out_*) and back in, DROP, and CREATE TABLEs without a key (kl_*). The workload's checker
// must still pass for t0..t2; every side table's materialised topic must equal the table
// (empty once the table is gone), and no keyless table may have a record.
//
// It found the bugs mended in runner/join.go (a request against an interrupted join, two
// joins' chunks), cdc/snapshot/table.go (a table gone while described) and
// cdc/history/history.go (a table renamed back in across a restart); it runs in `make test`.
func TestTableLifecycle(t *testing.T) {
	guarantees(t, func(t *testing.T, g string) {
		s := newSubject(t, subjectConfig{guarantee: g, sourceExtra: []string{
			"scan.binlog.newly-added-table.enabled: true", `tables.exclude: chaos_\.*.out_\.*`}})
		l := &lifecycle{db: s.workload.DB, rng: rand.New(rand.NewPCG(rand.Uint64(), 1)),
			state: map[string]string{}, next: map[string]int{}, ops: map[string]int{}}
		t.Cleanup(func() { l.deleteTopics(t, s) })
		s.startWorkload()
		s.start()
		s.waitFor("the snapshot", 2*time.Minute, func() bool { return s.proc.LogContains("initial snapshot finished") })
		deadline := time.Now().Add(budget(0.15, 20*time.Second))
		for i := 0; time.Now().Before(deadline) || i < 30; i++ {
			if err := l.step(context.Background()); err != nil {
				t.Fatal(err)
			}
			if i%8 == 7 {
				s.kill()
				s.start()
			}
			sleepRandom(50*time.Millisecond, 600*time.Millisecond)
			s.alive("during the table lifecycle DDL")
		}
		s.logf("table lifecycle: %v", l.ops)
		s.finish(strictFor(g))
		l.check(t, s)
	})
}

// lifecycle is the DDL driver of the side tables. state holds each side table's state:
// "" (absent), "present" or "out" (renamed to out_<name>).
type lifecycle struct {
	db      *sql.DB
	rng     *rand.Rand
	state   map[string]string
	next    map[string]int // the next fresh id per side table
	keyless []string
	ops     map[string]int
}

// step runs one lifecycle statement (or a few writes) on a random side table.
func (l *lifecycle) step(ctx context.Context) error {
	name := fmt.Sprintf("s%d", 1+l.rng.IntN(3))
	var stmts []string
	op := ""
	switch l.state[name] {
	case "":
		op = "create, then add the key"
		stmts = []string{fmt.Sprintf("CREATE TABLE %s (id INT NOT NULL, v VARCHAR(20))", name),
			fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (id)", name), l.insert(name, 20)}
		l.state[name] = "present"
	case "out":
		op = "rename in"
		stmts = []string{fmt.Sprintf("RENAME TABLE out_%s TO %s", name, name)}
		l.state[name] = "present"
	default:
		switch p := l.rng.IntN(10); {
		case p < 5:
			op = "writes"
			stmts = []string{l.insert(name, 3), fmt.Sprintf("UPDATE %s SET v = CONCAT(v, 'u') WHERE id %% 3 = %d", name, l.rng.IntN(3)),
				fmt.Sprintf("DELETE FROM %s WHERE id %% 7 = %d", name, l.rng.IntN(7))}
		case p < 7:
			op = "truncate"
			stmts = []string{"TRUNCATE TABLE " + name, l.insert(name, 5)}
		case p < 9:
			op = "rename out"
			stmts = []string{fmt.Sprintf("RENAME TABLE %s TO out_%s", name, name)}
			l.state[name] = "out"
		default:
			op = "drop"
			stmts = []string{"DROP TABLE " + name, "DROP TABLE IF EXISTS out_" + name}
			l.state[name] = ""
		}
	}
	if l.rng.IntN(6) == 0 {
		kl := fmt.Sprintf("kl_%d", len(l.keyless)+1)
		l.keyless = append(l.keyless, kl)
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE %s (a INT, b VARCHAR(10))", kl), fmt.Sprintf("INSERT INTO %s VALUES (1, 'x'), (2, 'y')", kl))
		l.ops["create keyless"]++
	}
	for _, q := range stmts {
		if _, err := l.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("table lifecycle: %s: %w", q, err)
		}
	}
	l.ops[op]++
	return nil
}

// insert returns an INSERT of n rows with fresh ids into table.
func (l *lifecycle) insert(table string, n int) string {
	rows := make([]string, n)
	for i := range rows {
		l.next[table]++
		rows[i] = fmt.Sprintf("(%d, 'v%d')", l.next[table], l.next[table])
	}
	return fmt.Sprintf("INSERT INTO %s VALUES %s", table, strings.Join(rows, ", "))
}

// check compares the topic of each side table with the table (empty when the table is
// absent or renamed out) and requires that the keyless tables have no record.
func (l *lifecycle) check(t *testing.T, s *subject) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(l.state)) {
		want := map[string]string{}
		if l.state[name] == "present" {
			want = sideRows(t, l.db, name)
		}
		got := materialized(t, s, s.name+"."+name)
		if !maps.Equal(got, want) {
			t.Errorf("%s: side table %s (%s): the topic holds %d keys, the table %d rows; e.g. %s", s.cfg.guarantee, name,
				l.state[name], len(got), len(want), firstDiff(got, want))
		}
	}
	for _, name := range l.keyless {
		if got := materialized(t, s, s.name+"."+name); len(got) > 0 {
			t.Errorf("%s: keyless table %s has records: %v", s.cfg.guarantee, name, got)
		}
	}
	s.logf("table lifecycle: %d side tables and %d keyless tables checked", len(l.state), len(l.keyless))
}

// firstDiff names one key on which got and want differ.
func firstDiff(got, want map[string]string) string {
	for k, v := range want {
		if got[k] != v {
			return fmt.Sprintf("key %s: %q, want %q", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			return fmt.Sprintf("key %s: %q, not in the table", k, v)
		}
	}
	return "none"
}

// sideRows renders the rows of a side table as the topic holds them.
func sideRows(t *testing.T, db *sql.DB, table string) map[string]string {
	t.Helper()
	rows, err := db.Query("SELECT id, v FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var id int
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		m[fmt.Sprintf(`{"id":%d}`, id)] = fmt.Sprintf(`{"id":%d,"v":%q}`, id, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// materialized reads topic (read_committed with exactly-once) up to its end offsets and
// returns the last value per key; a topic that does not exist is empty.
func materialized(t *testing.T, s *subject, topic string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	iso := kgo.ReadUncommitted()
	if s.cfg.guarantee == exactlyOnce {
		iso = kgo.ReadCommitted()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.svc.KafkaAddr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	behind := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			behind[o.Partition] = o.Offset
		}
	})
	m := map[string]string{}
	for len(behind) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: not read to its end offsets within 30s", topic)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := behind[r.Partition]; ok && r.Offset+1 >= end {
				delete(behind, r.Partition)
			}
			switch {
			case r.Attrs.IsControl():
			case r.Value == nil:
				delete(m, string(r.Key))
			default:
				m[string(r.Key)] = string(r.Value)
			}
		})
	}
	return m
}

// deleteTopics removes the topics ingest created for the side and keyless tables.
func (l *lifecycle) deleteTopics(t *testing.T, s *subject) {
	var topics []string
	for name := range l.state {
		topics = append(topics, s.name+"."+name)
	}
	for _, name := range l.keyless {
		topics = append(topics, s.name+"."+name)
	}
	if len(topics) == 0 {
		return
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.svc.KafkaAddr))
	if err != nil {
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = kadm.NewClient(cl).DeleteTopics(ctx, topics...)
}
