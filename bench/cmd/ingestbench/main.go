// Command ingestbench is ingest's benchmark suite (make bench). Against the local test
// services (scripts/services up) it generates its data, runs bin/ingest as a subprocess for
// the initial snapshot, the binlog catch-up and the streaming latency, with each delivery
// guarantee, measures in the same run the raw limits (go-mysql decoding the same binlog, a
// plain SELECT scan of the same table, franz-go producing the same records), and prints a
// table of every figure with its ratio to its limit and the targets met. It writes the
// results as JSON, a Markdown table and a PNG chart into bench/results.
//
// See bench/README.md for the flags and the BENCH_* variables.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	log.SetFlags(log.Ltime)
	log.SetPrefix("ingestbench: ")
	if len(os.Args) == 3 && os.Args[1] == "-rejudge" {
		if err := rejudge(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "ingestbench:", err)
			os.Exit(1)
		}
		return
	}
	cfg, err := parseConfig(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingestbench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "ingestbench:", err)
		stop()
		os.Exit(1)
	}
}

// run runs the selected parts, then reports; a failed part ends the run, and the results
// so far are still reported.
func run(ctx context.Context, cfg config) error {
	s, err := newSuite(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.close(context.WithoutCancel(ctx))
	runErr := s.runParts(ctx)
	if runErr != nil {
		s.res.Errors = append(s.res.Errors, runErr.Error())
	}
	s.res.Seconds = round(time.Since(s.res.Started).Seconds(), 1)
	s.res.Machine.LoadAvgEnd = loadAverage()
	s.res.evaluate(cfg.Guarantees)
	s.res.print(os.Stdout)
	paths, err := s.res.write(cfg.OutDir)
	if err != nil {
		return errors.Join(runErr, fmt.Errorf("write results: %w", err))
	}
	fmt.Printf("\nwritten: %v (%.0fs in all)\n", paths, s.res.Seconds)
	return runErr
}

// rejudge reads a results file, judges its measurements again with this build's targets and
// writes its reports (the file itself, the Markdown, the charts) again beside it:
// `ingestbench -rejudge bench/results/curves-….json`.
func rejudge(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r results
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var guarantees []string
	if gs, ok := r.Config["guarantees"].([]any); ok {
		for _, g := range gs {
			if s, ok := g.(string); ok {
				guarantees = append(guarantees, s)
			}
		}
	}
	r.evaluate(guarantees)
	r.print(os.Stdout)
	paths, err := r.write(filepath.Dir(path))
	if err != nil {
		return err
	}
	fmt.Printf("\nwritten: %v\n", paths)
	return nil
}

func (s *suite) runParts(ctx context.Context) error {
	if s.cfg.runs(partPeers) {
		return s.peers(ctx)
	}
	if s.cfg.runs(partCurves) {
		return s.curves(ctx)
	}
	if s.cfg.runs(partSnapshot) {
		if err := s.snapshot(ctx); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	if s.cfg.runs(partCatchup) {
		for _, k := range s.cfg.TxnSizes {
			if err := s.catchup(ctx, k); err != nil {
				return fmt.Errorf("catch-up txn=%d: %w", k, err)
			}
		}
	}
	if s.cfg.runs(partLatency) {
		for _, rate := range s.cfg.latencyRates() {
			if err := s.rawLatency(ctx, rate); err != nil {
				return fmt.Errorf("latency at %d rows/s, raw relay: %w", rate, err)
			}
			for _, g := range s.cfg.Guarantees {
				if err := s.latency(ctx, g, rate); err != nil {
					return fmt.Errorf("latency %s at %d rows/s: %w", g, rate, err)
				}
			}
		}
	}
	return nil
}
