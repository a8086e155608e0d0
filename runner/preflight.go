package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/ingestkit/ingest/cdc"
	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/upsert"
)

// sourceChecks runs the source checks that `ingest plan` shows and `ingest apply` enforces
// (cdc.Preflight): the server's binlog settings, the grants, the server's identity against
// the one recorded with the state (server, when known) and the position the stream reads
// from (from; zero for none stored).
func sourceChecks(ctx context.Context, src cdc.Config, from binlogpos.Position, server string) []cdc.Problem {
	src.Position, src.Server = from, server
	return cdc.Preflight(ctx, src)
}

// preflight runs sourceChecks before the pipeline reads from the source (before the
// snapshot, and again before the stream starts after one): an Error problem stops the run
// with a terminal *cdc.PreflightError naming the fix, before any record is written; warnings
// are logged once per process. The first run that passes records the server's identity in
// the state, and the stream compares it on every reconnect (cdc.Config.Server).
func (r *run) preflight(ctx context.Context, from binlogpos.Position) error {
	problems := sourceChecks(ctx, r.src, from, r.store.Server())
	if err := ctx.Err(); err != nil {
		return err // stopped (SIGTERM) while checking: the problems are the cancellation's
	}
	for _, p := range problems {
		if p.Severity == cdc.Warning && !r.warned[p.Check] {
			r.warned[p.Check] = true
			r.log.Warn("source: "+p.Message, "check", p.Check)
		}
	}
	if err := cdc.Refuse(r.src.Addr, problems); err != nil {
		return r.withStateHint(err)
	}
	if r.store.Server() == "" {
		id, err := cdc.ReadServerIdentity(ctx, r.src)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return err
		}
		if err := r.store.RecordServer(id.String()); err != nil {
			return err
		}
	}
	r.src.Server = r.store.Server()
	return nil
}

// withStateHint adds to a refused position or server where the pipeline's state is, which
// is what removing it to re-snapshot means.
func (r *run) withStateHint(err error) error {
	var pe *cdc.PreflightError
	if !errors.As(err, &pe) || !pe.Has("position") && !pe.Has("server") {
		return err
	}
	if r.exactlyOnce() {
		topic := r.snk.StateTopic
		if topic == "" {
			topic = upsert.DefaultStateTopic
		}
		return fmt.Errorf("%w (the stored position of pipeline %s is in Kafka, topic %s; to re-snapshot, give the "+
			"pipeline a new pipeline.name and remove the state directory %s)", err, r.def.Pipeline.Name,
			topic, r.store.Dir())
	}
	return fmt.Errorf("%w (the stored state is the directory %s; to re-snapshot, remove it)", err, r.store.Dir())
}
