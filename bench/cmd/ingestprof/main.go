// Command ingestprof is `ingest apply` with a CPU and heap profile, for the benchmark
// suite's -profile mode (ingest itself has no profiling flag). It accepts the subset of
// apply's command line that ingestbench uses:
//
//	ingestprof apply PIPELINE.yaml --state DIR [--until-caught-up] [--log-format json|text] --cpuprofile FILE
//
// Placeholders are resolved from INGEST_SECRET_* and INGEST_VAR_* only. The heap profile is
// written beside the CPU profile (FILE with .heap instead of .pprof) when the run ends.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/ingestkit/ingest/internal/gctune"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/runner"
	"github.com/ingestkit/ingest/secrets"
)

func main() {
	gctune.Apply(os.LookupEnv) // as ingest does
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ingestprof:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 || args[0] != "apply" {
		return errors.New("usage: ingestprof apply PIPELINE.yaml --state DIR [--until-caught-up] --cpuprofile FILE")
	}
	file := args[1]
	fs := flag.NewFlagSet("ingestprof apply", flag.ContinueOnError)
	state := fs.String("state", "", "state directory")
	until := fs.Bool("until-caught-up", false, "stop once caught up")
	logFormat := fs.String("log-format", "text", "text or json")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile here")
	if err := fs.Parse(args[2:]); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res := secrets.NewResolver([]secrets.Provider{secrets.NewEnv(secrets.SecretEnvPrefix, os.LookupEnv)},
		[]secrets.Provider{secrets.NewEnv(secrets.VarEnvPrefix, os.LookupEnv)})
	def, err := pipeline.Load(file, pipeline.LoadOptions{Context: ctx, Resolver: res})
	if err != nil {
		return err
	}
	if *cpuProfile != "" {
		done, err := startProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer done()
	}
	var h slog.Handler = slog.NewTextHandler(os.Stderr, nil)
	if *logFormat == "json" {
		h = slog.NewJSONHandler(os.Stderr, nil)
	}
	return runner.Run(ctx, def, runner.Options{StateDir: *state, UntilCaughtUp: *until, Logger: slog.New(h)})
}

// startProfile starts the CPU profile into path; the returned function stops it and writes
// the heap profile beside it.
func startProfile(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		heap, err := os.Create(strings.TrimSuffix(path, ".pprof") + ".heap")
		if err != nil {
			fmt.Fprintln(os.Stderr, "ingestprof: heap profile:", err)
			return
		}
		defer heap.Close()
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(heap, 0); err != nil {
			fmt.Fprintln(os.Stderr, "ingestprof: heap profile:", err)
		}
	}, nil
}
