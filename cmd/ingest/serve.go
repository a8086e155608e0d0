package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"

	"github.com/ingestkit/ingest/fleet"
	"github.com/ingestkit/ingest/secrets"
	"github.com/ingestkit/ingest/upsert"
)

// serveFlags are the flags of `ingest serve` and `ingest status`.
type serveFlags struct {
	group             string
	statusAddr        string
	sessionTimeout    time.Duration
	heartbeatInterval time.Duration
	printSet          bool
	debugGroup        bool
}

// clientLogLevel is the level of the group client's logs: warnings, or with --debug-group
// everything.
func (s serveFlags) clientLogLevel() kgo.LogLevel {
	if s.debugGroup {
		return kgo.LogLevelDebug
	}
	return kgo.LogLevelWarn
}

func (a *app) serveCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve --group GROUP PIPELINE_FILE_OR_DIR...",
		Short: "Run as a worker of a group: the group's pipelines are shared among its workers, with failover",
		Long: `Run as a worker of a group. The workers of a group share its pipelines through Kafka's group
membership (the consumer group GROUP over the topic __ingest_fleet_GROUP); each pipeline runs on
exactly one live worker. A worker that dies is noticed within --session-timeout, and its pipelines
resume on the others from their last committed positions; SIGTERM, SIGINT and SIGHUP drain the
worker: its pipelines stop with their positions stored, and it leaves the group so that the others
take them over at once.

Every worker of a group must be given the same pipeline files (a directory gives its *.yaml and
*.yml files); a worker whose set differs from the group's is refused and exits 1. The pipelines
must be exactly-once (docs/scaling.md) and write to one Kafka cluster.

Each pipeline's state directory is --state/<pipeline.name> (default ./.ingest/<pipeline.name>).
--status-addr serves /status (JSON), / (the same as a page), /metrics and /healthz.

Exit codes: 0 drained, 1 runtime failure or refused by the group, 2 invalid pipeline or usage.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.serve.group == "" && !a.serve.printSet {
				return errors.New("--group: give the group's name")
			}
			if a.serve.statusAddr != "" {
				if _, _, err := net.SplitHostPort(a.serve.statusAddr); err != nil {
					return fmt.Errorf("--status-addr %q: want HOST:PORT", a.serve.statusAddr)
				}
			}
			if a.stopTimeout <= 0 {
				return fmt.Errorf("--stop-timeout %s: want a positive duration such as 20s", a.stopTimeout)
			}
			if a.serve.sessionTimeout <= 0 || a.serve.heartbeatInterval <= 0 || 3*a.serve.heartbeatInterval > a.serve.sessionTimeout {
				return fmt.Errorf("--session-timeout %s, --heartbeat-interval %s: want positive durations, the heartbeat a third of the session or less",
					a.serve.sessionTimeout, a.serve.heartbeatInterval)
			}
			return a.runServe(cmd.Context(), args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&a.serve.group, "group", "", "`NAME` of the group (the Kafka consumer group id; its topic is __ingest_fleet_NAME)")
	f.StringVar(&a.stateDir, "state", "", "`DIR` holding one state directory per pipeline, DIR/<pipeline.name> (default ./.ingest)")
	f.StringVar(&a.serve.statusAddr, "status-addr", "", "serve /status, /, /metrics and /healthz on `HOST:PORT`")
	f.DurationVar(&a.serve.sessionTimeout, "session-timeout", fleet.DefaultSessionTimeout, "group session timeout: a worker that stops heartbeating loses its pipelines after `DURATION` (the broker allows 6s to 30m by default)")
	f.DurationVar(&a.serve.heartbeatInterval, "heartbeat-interval", fleet.DefaultHeartbeatInterval, "group heartbeat interval, at most a third of --session-timeout")
	f.DurationVar(&a.stopTimeout, "stop-timeout", upsert.DefaultStopTimeout, "stopping one pipeline (revoked, or the worker drained) takes at most `DURATION`")
	f.BoolVar(&a.serve.debugGroup, "debug-group", false, "log every step of the Kafka group client (joins, syncs, heartbeats)")
	f.BoolVar(&a.serve.printSet, "print-set", false, "print the pipeline set (names, file hashes and the set's hash) and exit, to compare workers")
	return cmd
}

// pipelineFiles expands the arguments: files as given, directories to their *.yaml and
// *.yml files.
func pipelineFiles(args []string) ([]string, error) {
	var files []string
	for _, arg := range args {
		fi, err := os.Stat(arg)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			files = append(files, arg)
			continue
		}
		entries, err := os.ReadDir(arg)
		if err != nil {
			return nil, err
		}
		n := 0
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
				files = append(files, filepath.Join(arg, e.Name()))
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: no *.yaml or *.yml file", arg)
		}
	}
	return files, nil
}

// loadSet loads every pipeline file into a set.
func (a *app) loadSet(ctx context.Context, args []string) (*fleet.Set, error) {
	files, err := pipelineFiles(args)
	if err != nil {
		return nil, invalid(err)
	}
	var ps []fleet.Pipeline
	var errs []error
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, invalid(err)
		}
		def, err := a.load(ctx, file)
		if err != nil {
			var ee *exitError
			if errors.As(err, &ee) && ee.code == exitFailure {
				return nil, err
			}
			errs = append(errs, err)
			continue
		}
		ps = append(ps, fleet.Pipeline{Def: def, Raw: raw})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, invalid(err)
	}
	set, err := fleet.NewSet(ps)
	if err != nil {
		return nil, invalid(err)
	}
	return set, nil
}

func (a *app) runServe(ctx context.Context, args []string) error {
	set, err := a.loadSet(ctx, args)
	if err != nil {
		return err
	}
	if a.serve.printSet {
		fmt.Fprintf(a.stdout, "set %s: %d pipelines\n", set.Hash(), set.Len())
		for i := range set.Len() {
			p := set.At(i)
			fmt.Fprintf(a.stdout, "  %s  %s\n", p.Name(), p.Def.File)
		}
		return nil
	}
	p, err := upsert.ParseProperties(secrets.RevealMap(set.At(0).Def.Sink.Properties))
	if err != nil {
		return invalid(err)
	}
	var ln net.Listener
	if a.serve.statusAddr != "" {
		if ln, err = net.Listen("tcp", a.serve.statusAddr); err != nil {
			return failure(fmt.Errorf("--status-addr: %w", err))
		}
	}
	statusAddr := ""
	if ln != nil {
		statusAddr = ln.Addr().String()
	}
	w, err := fleet.NewWorker(fleet.Config{Group: a.serve.group, Set: set, ClientOpts: p.ClientOpts(),
		SessionTimeout: a.serve.sessionTimeout, HeartbeatInterval: a.serve.heartbeatInterval,
		StateRoot: a.stateDir, StopTimeout: a.stopTimeout, StatusAddr: statusAddr, Logger: a.log, Scrubber: a.scrub,
		ClientLogLevel: a.serve.clientLogLevel()})
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return invalid(err)
	}
	a.log.Info("serving", "group", a.serve.group, "pipelines", set.Len(), "set", set.Short(), "status", statusAddr)
	g, gctx := errgroup.WithContext(ctx)
	wctx, stopStatus := context.WithCancel(context.Background())
	if ln != nil {
		g.Go(func() error { return w.Serve(wctx, ln) })
	}
	g.Go(func() error {
		defer stopStatus()
		return w.Run(gctx)
	})
	if err := g.Wait(); err != nil {
		return failure(err)
	}
	return nil
}

func (a *app) statusCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status --group GROUP",
		Short: "List the workers of a serve group and the pipelines each runs",
		Long: "List the workers of a serve group and the pipelines each runs, as the group's coordinator\n" +
			"knows them. The cluster is --bootstrap, or the sink of --pipeline (with its security settings).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.serve.group == "" {
				return errors.New("--group: give the group's name")
			}
			if a.output != "text" && a.output != "json" {
				return fmt.Errorf("--output %q: want text or json", a.output)
			}
			return a.runStatus(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&a.serve.group, "group", "", "`NAME` of the group")
	f.StringVar(&a.tail.bootstrap, "bootstrap", "", "`HOST:PORT` of a broker")
	f.StringVar(&a.tail.pipeline, "pipeline", "", "take the cluster and its security settings from the sink of `PIPELINE.yaml`")
	f.StringVarP(&a.output, "output", "o", "text", "output format: text or json")
	return cmd
}

func (a *app) runStatus(ctx context.Context) error {
	opts, err := a.clusterOpts(ctx)
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return failure(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	g, err := fleet.Describe(ctx, cl, a.serve.group)
	if err != nil {
		return failure(err)
	}
	if a.output == "json" {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(g)
	}
	return g.WriteText(a.stdout)
}

// clusterOpts are the client options of --bootstrap or of --pipeline's sink.
func (a *app) clusterOpts(ctx context.Context) ([]kgo.Opt, error) {
	switch {
	case a.tail.pipeline != "":
		def, err := a.load(ctx, a.tail.pipeline)
		if err != nil {
			return nil, err
		}
		p, err := upsert.ParseProperties(secrets.RevealMap(def.Sink.Properties))
		if err != nil {
			return nil, invalid(err)
		}
		return p.ClientOpts(), nil
	case a.tail.bootstrap != "":
		return []kgo.Opt{kgo.SeedBrokers(strings.Split(a.tail.bootstrap, ",")...)}, nil
	default:
		return nil, invalid(errors.New("give --bootstrap HOST:PORT or --pipeline FILE"))
	}
}
