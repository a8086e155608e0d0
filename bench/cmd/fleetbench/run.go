package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ingestkit/ingest/chaos"
	"github.com/ingestkit/ingest/internal/testenv"
)

// run sets the pipelines up, runs the steps and reports.
func run(ctx context.Context, cfg config) error {
	repo, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	svc, err := chaos.NewShared(ctx, repo, "")
	if err != nil {
		return fmt.Errorf("services: %w", err)
	}
	dir, err := os.MkdirTemp("", "fleetbench-")
	if err != nil {
		return err
	}
	g := &group{cfg: cfg, svc: svc, dir: dir, name: "fb_" + strconv.FormatInt(time.Now().Unix()%100000, 36)}
	res := &results{Started: time.Now().UTC(), Pipelines: cfg.pipelines, Workers: cfg.workers, Rows: cfg.rows,
		Rate: cfg.rate, Window: cfg.settle, Machine: describeMachine(ctx)}
	defer func() {
		g.close(context.WithoutCancel(ctx))
		if !cfg.keep {
			_ = os.RemoveAll(dir)
		}
	}()
	log.Printf("setting up %d pipelines (one database and table of %d rows each) in %s", cfg.pipelines, cfg.rows, dir)
	if err := g.setup(ctx); err != nil {
		return err
	}
	runErr := steps(ctx, g, res)
	if runErr != nil {
		res.Errors = append(res.Errors, runErr.Error())
	}
	res.Seconds = time.Since(res.Started).Seconds()
	res.fit()
	res.print(os.Stdout)
	paths, err := res.write(cfg.outDir)
	if err != nil {
		return err
	}
	log.Printf("wrote %s", paths)
	return runErr
}

// steps starts the workers, samples them with every pipeline idle and busy, then makes one
// leave (SIGTERM) and one die (SIGKILL), sampling after each.
func steps(ctx context.Context, g *group, res *results) error {
	began := time.Now()
	for i := range g.cfg.workers {
		if err := g.start(i); err != nil {
			return err
		}
	}
	if _, err := g.waitStreaming(ctx, nil, 10*time.Minute); err != nil {
		return fmt.Errorf("the first assignment: %w", err)
	}
	res.StartSeconds = time.Since(began).Seconds()
	log.Printf("%d workers: %d pipelines assigned, snapshotted and streaming after %.1f s", g.cfg.workers, g.cfg.pipelines, res.StartSeconds)
	if err := sampleBoth(ctx, g, res, "start"); err != nil {
		return err
	}

	leaving := g.busiest()
	took, err := g.leave(ctx, leaving, false)
	if err != nil {
		return err
	}
	res.Moves = append(res.Moves, took)
	log.Printf("SIGTERM: worker %d handed %d pipelines over; every pipeline streams again after %.1f s (it exited after %.1f s)",
		took.Worker, took.Moved, took.Seconds, took.ExitSeconds)
	if err := sampleBoth(ctx, g, res, "after SIGTERM"); err != nil {
		return err
	}

	if len(g.live()) > 1 {
		victim := g.busiest()
		took, err := g.leave(ctx, victim, true)
		if err != nil {
			return err
		}
		res.Moves = append(res.Moves, took)
		log.Printf("SIGKILL: worker %d owned %d pipelines; every pipeline streams again after %.1f s", took.Worker, took.Moved, took.Seconds)
		if err := sampleBoth(ctx, g, res, "after SIGKILL"); err != nil {
			return err
		}
	}
	return nil
}

// sampleBoth samples every live worker after an idle window, then after a busy one.
func sampleBoth(ctx context.Context, g *group, res *results, step string) error {
	if err := sleep(ctx, time.Duration(g.cfg.settle)*time.Second); err != nil {
		return err
	}
	idle, err := g.sample(ctx, step, "idle")
	if err != nil {
		return err
	}
	res.Samples = append(res.Samples, idle...)
	stop := g.load()
	err = sleep(ctx, time.Duration(g.cfg.settle)*time.Second)
	busy, sErr := g.sample(ctx, step, "busy")
	written := stop()
	if err != nil {
		return err
	}
	if sErr != nil {
		return sErr
	}
	log.Printf("%s: busy window: %d transactions over %d pipelines", step, written, g.cfg.pipelines)
	res.Samples = append(res.Samples, busy...)
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// pipelinesDir is where the group's pipeline files are.
func (g *group) pipelinesDir() string { return filepath.Join(g.dir, "pipelines") }
