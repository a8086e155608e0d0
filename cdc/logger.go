package cdc

import (
	"context"
	"log/slog"
)

// quieter lowers go-mysql's log records by one step (Info to Debug, Warn to Info): its
// connection chatter (the whole syncer config on every connect) is not news to a user of
// ingest, while the source's own logs keep their levels.
type quieter struct{ h slog.Handler }

func (q quieter) Enabled(ctx context.Context, l slog.Level) bool { return q.h.Enabled(ctx, lower(l)) }

func (q quieter) Handle(ctx context.Context, r slog.Record) error {
	r.Level = lower(r.Level)
	return q.h.Handle(ctx, r)
}

func (q quieter) WithAttrs(as []slog.Attr) slog.Handler { return quieter{q.h.WithAttrs(as)} }
func (q quieter) WithGroup(name string) slog.Handler    { return quieter{q.h.WithGroup(name)} }

func lower(l slog.Level) slog.Level {
	if l >= slog.LevelError {
		return l
	}
	return l - 4
}

func libraryLogger(l *slog.Logger) *slog.Logger { return slog.New(quieter{l.Handler()}) }
