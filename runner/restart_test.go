package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ingestkit/ingest/cdc/binlog"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/fault"
	"github.com/ingestkit/ingest/schemachange"
	"github.com/ingestkit/ingest/upsert"
)

// attempt is what one call of the pipeline returns in TestRestarting.
type attempt struct {
	running bool
	err     error
}

func TestRestarting(t *testing.T) {
	down := &upsert.Error{Op: "commit", Retryable: true, Err: errors.New("unable to dial")}
	fatal := &upsert.Error{Op: "produce", Err: errors.New("record too large")}
	refused := &schemachange.RefusedError{Table: change.TableID{DB: "app", Table: "t"}, Statement: "ALTER TABLE t ADD c INT"}
	// The snapshot's and the stream's errors, as internal/fault marks them.
	killed := fault.MySQL(fmt.Errorf("snapshot: app.t chunk (10, 20]: %w", &mysql.MySQLError{Number: 1927, Message: "Connection was killed"}))
	denied := fault.MySQL(fmt.Errorf("snapshot: connect: %w", &mysql.MySQLError{Number: 1045, Message: "Access denied"}))
	gaveUp := fault.Terminal(&binlog.RetryableError{Op: "read binlog", Err: errors.New("connection refused")})
	unmarked := errors.New("decode: bad DATETIME")
	ok := attempt{running: true}
	for _, c := range []struct {
		name     string
		attempts []attempt
		calls    int
		want     error
	}{
		{"first start fails", []attempt{{false, down}}, 1, down},
		{"clean stop", []attempt{ok}, 1, nil},
		{"fatal while running", []attempt{{true, fatal}}, 1, fatal},
		{"schema change refused (EXCEPTION)", []attempt{{true, refused}}, 1, refused},
		{"restarted", []attempt{{true, down}, ok}, 2, nil},
		// The broker is still away when the restart starts: it is restarted again.
		{"restart fails while starting", []attempt{{true, down}, {false, down}, {false, down}, ok}, 4, nil},
		{"fatal while restarting", []attempt{{true, down}, {false, fatal}}, 2, fatal},
		{"gives up", repeat(attempt{true, down}, maxRestarts+5), maxRestarts + 1, down},
		{"snapshot connection killed", []attempt{{true, killed}, ok}, 2, nil},
		{"snapshot connection killed at the first start", []attempt{{false, killed}}, 1, killed},
		{"password refused at a restart", []attempt{{true, killed}, {false, denied}}, 2, denied},
		{"stream gave up reconnecting", []attempt{{true, gaveUp}}, 1, gaveUp},
		{"stream lost before its own retries", []attempt{{true, &binlog.RetryableError{Op: "connect", Err: errors.New("refused")}}, ok}, 2, nil},
		{"unmarked is terminal", []attempt{{true, unmarked}}, 1, unmarked},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls, retries := 0, 0
			once := func(context.Context) (bool, error) {
				a := c.attempts[calls]
				calls++
				return a.running, a.err
			}
			retried := func(error, int, time.Duration) { retries++ }
			err := restarting(context.Background(), once, retried, time.Microsecond)
			if err != c.want || calls != c.calls || retries != calls-1 {
				t.Errorf("returned %v after %d calls and %d retries; want %v after %d calls", err, calls, retries, c.want, c.calls)
			}
		})
	}
}

func repeat(a attempt, n int) []attempt {
	out := make([]attempt, n)
	for i := range out {
		out[i] = a
	}
	return out
}

// TestStoppedDuringBackOff: a stop (ctx cancelled) while the run waits to restart after a
// broker outage, or while the sink could not reach the broker before the stop deadline, is
// a clean stop (exit 0); a fatal error stays one, and without a stop nothing changes.
func TestStoppedDuringBackOff(t *testing.T) {
	down := &upsert.Error{Op: "flush", Retryable: true, Err: context.DeadlineExceeded}
	fatal := &upsert.Error{Op: "produce", Err: errors.New("record too large")}
	r := &run{log: slog.New(slog.DiscardHandler)}
	stoppedCtx, cancel := context.WithCancel(context.Background())
	cancel()

	// restarting itself, stopped in the middle of its back-off.
	ctx, stop := context.WithCancel(context.Background())
	calls := 0
	once := func(context.Context) (bool, error) { calls++; return true, down }
	time.AfterFunc(100*time.Millisecond, stop)
	err := restarting(ctx, once, func(error, int, time.Duration) {}, time.Minute)
	if got := r.stopped(ctx, err); got != nil || calls != 1 {
		t.Errorf("stopped during the back-off: %v after %d calls, want nil after 1", got, calls)
	}

	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		want error
	}{
		{"retryable at the stop", stoppedCtx, down, nil},
		{"cancelled", stoppedCtx, context.Canceled, nil},
		{"fatal at the stop", stoppedCtx, fatal, fatal},
		{"snapshot connection lost at the stop", stoppedCtx, fault.Retryable(errors.New("connection was killed")), nil},
		{"retryable without a stop", context.Background(), down, down},
	} {
		if got := r.stopped(c.ctx, c.err); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if upsert.DefaultStopTimeout >= 30*time.Second {
		t.Errorf("default stop timeout %v: want under Kubernetes' 30s grace period", upsert.DefaultStopTimeout)
	}
}
