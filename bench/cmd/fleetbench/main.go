// Command fleetbench is `make bench-fleet`: many small pipelines on a few `ingest serve`
// workers on this machine (default 100 pipelines on 3 workers, loopback, the local test
// services). It measures each worker's memory and goroutines against the number of pipelines
// it owns, idle and under a write load, and the time the group takes to have every pipeline
// streaming again when a worker leaves (SIGTERM: drained) and when one dies (SIGKILL). It
// prints a table and writes bench/results/fleet-<date>T<time>-<host>.json and
// bench/results/latest-fleet.md. See bench/README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
)

// config is the command line.
type config struct {
	ingest    string
	pipelines int
	workers   int
	rows      int
	rate      float64
	settle    int // seconds of each idle and busy sample window
	outDir    string
	keep      bool
}

func parseConfig(args []string) (config, error) {
	c := config{}
	fs := flag.NewFlagSet("fleetbench", flag.ContinueOnError)
	fs.StringVar(&c.ingest, "ingest", "bin/ingest", "the ingest binary")
	fs.IntVar(&c.pipelines, "pipelines", envInt("BENCH_FLEET_PIPELINES", 100), "pipelines (one database with one table each)")
	fs.IntVar(&c.workers, "workers", envInt("BENCH_FLEET_WORKERS", 3), "workers (ingest serve processes)")
	fs.IntVar(&c.rows, "rows", 200, "rows per table at the start (snapshotted)")
	fs.Float64Var(&c.rate, "rate", 2, "transactions per second per pipeline while busy")
	fs.IntVar(&c.settle, "window", 10, "seconds of each idle and busy window before a sample")
	fs.StringVar(&c.outDir, "out", "bench/results", "where the results are written")
	fs.BoolVar(&c.keep, "keep", false, "keep the databases, topics and the work directory")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.workers < 2 || c.pipelines < c.workers {
		return c, fmt.Errorf("-workers %d -pipelines %d: at least 2 workers and a pipeline per worker", c.workers, c.pipelines)
	}
	return c, nil
}

func main() {
	log.SetFlags(log.Ltime)
	log.SetPrefix("fleetbench: ")
	cfg, err := parseConfig(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		stop()
		os.Exit(1)
	}
}
