package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/secrets"
	"github.com/ingestkit/ingest/upsert"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // runtime failure
	exitInvalid = 2 // invalid pipeline or usage
)

// app holds what the commands share: the flags, the output streams and
// the environment.
type app struct {
	stdout, stderr io.Writer // both scrubbed by scrub
	rawStderr      io.Writer // the terminal, for the progress display
	lookupEnv      func(string) (string, bool)
	log            *slog.Logger
	scrub          *secrets.Scrubber // every secret value resolved, masked in all output

	secretsFile   string
	vars          []string
	varsFile      string
	logFormat     string
	stateDir      string
	untilCaughtUp bool
	resetState    bool
	metricsAddr   string
	stopTimeout   time.Duration
	pprof         bool
	showVersion   bool
	output        string
	offline       bool
	emit          string
	tail          tailFlags
	serve         serveFlags
	kms           kmsFlags
}

// tailFlags are the flags of `ingest tail`.
type tailFlags struct {
	bootstrap       string
	pipeline        string
	follow          bool
	materialize     bool
	readUncommitted bool
}

// exitError carries the exit code of a failed command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// invalid marks err as an invalid pipeline or usage (exit 2).
func invalid(err error) error { return &exitError{exitInvalid, err} }

// failure marks err as a runtime failure (exit 1).
func failure(err error) error { return &exitError{exitFailure, err} }

// run executes the command line args and returns the exit code. Errors
// that a command marks are reported by it; anything else cobra returns is
// a usage error.
//
// Everything the command writes to stdout and stderr passes through a
// secrets.Scrubber that the placeholder resolver feeds, so that no secret
// value resolved from the pipeline file is printed (docs/pipeline.md,
// "Placeholders"), whatever option it is in and whoever wrote the text.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	scrub := secrets.NewScrubber()
	out, errOut := scrub.Writer(stdout), scrub.Writer(stderr)
	defer func() { _, _ = out.Flush(), errOut.Flush() }()
	a := &app{stdout: out, stderr: errOut, rawStderr: stderr, lookupEnv: lookupEnv, scrub: scrub}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(errOut)
	cmd, err := root.ExecuteContextC(ctx)
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		a.report(ee)
		return ee.code
	default:
		fmt.Fprintf(errOut, "ingest: %v\nRun '%s --help' for usage.\n", err, cmd.CommandPath())
		return exitInvalid
	}
}

// report prints a command's error: problems of the pipeline or its use
// as plain lines, runtime failures through the logger. With --log-format
// json, everything goes through the logger: one record per problem of the
// pipeline file, with its file, line, column and option path as attributes.
func (a *app) report(e *exitError) {
	switch {
	case a.log == nil:
		fmt.Fprintln(a.stderr, e.err)
	case e.code == exitFailure:
		a.log.Error(e.err.Error())
	case a.logFormat == "json":
		a.reportJSON(e.err)
	default:
		fmt.Fprintln(a.stderr, e.err)
	}
}

// reportJSON logs an invalid pipeline or usage as JSON records.
func (a *app) reportJSON(err error) {
	var problems pipeline.Errors
	if !errors.As(err, &problems) {
		a.log.Error(err.Error(), "kind", "invalid")
		return
	}
	for _, p := range problems {
		a.log.Error(p.Msg, "kind", "invalid", "file", p.File, "line", p.Line, "col", p.Col, "path", p.Path)
	}
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:               "ingest",
		Short:             "Stream MySQL and MariaDB tables into Kafka as upserts",
		SilenceErrors:     true,
		SilenceUsage:      true,
		PersistentPreRunE: func(*cobra.Command, []string) error { return a.setup() },
		Args:              cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.showVersion {
				return a.printVersion()
			}
			return cmd.Help()
		},
	}
	root.Flags().BoolVar(&a.showVersion, "version", false, "print the version, as `ingest version` does")
	pf := root.PersistentFlags()
	pf.StringVar(&a.secretsFile, "secrets", "", "`FILE` with a YAML map of secret names to values, for ${secret_values.NAME} (chmod 600)")
	pf.StringArrayVar(&a.vars, "var", nil, "set the variable ${NAME} to VALUE (`NAME=VALUE`); repeatable; wins over --vars and INGEST_VAR_*")
	pf.StringVar(&a.varsFile, "vars", "", "`FILE` with a YAML map of variable names to values; wins over INGEST_VAR_*")
	pf.StringVar(&a.logFormat, "log-format", "text", "`FORMAT` of the logs on stderr: text or json")
	a.addKMSFlags(root)
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(a.validateCommand(), a.planCommand(), a.applyCommand(), a.resnapshotCommand(), a.serveCommand(), a.statusCommand(), a.tailCommand(), a.versionCommand())
	return root
}

// setup checks the shared flags and creates the logger.
func (a *app) setup() error {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	switch a.logFormat {
	case "text":
		a.log = slog.New(a.scrub.Handler(slog.NewTextHandler(a.stderr, opts)))
	case "json":
		a.log = slog.New(a.scrub.Handler(slog.NewJSONHandler(a.stderr, opts)))
	default:
		return fmt.Errorf("--log-format %q: want text or json", a.logFormat)
	}
	slog.SetDefault(a.log)
	return nil
}

func (a *app) validateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "validate PIPELINE.yaml",
		Short: "Check a pipeline file offline: syntax, options, placeholders; every error at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.validate(cmd.Context(), args[0])
		},
	}
}

func (a *app) planCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan PIPELINE.yaml",
		Short: "Print the resolved pipeline: every option with its effective value, secrets masked",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.output != "text" && a.output != "json" {
				return fmt.Errorf("--output %q: want text or json", a.output)
			}
			if a.emit != "" && a.emit != "flink-sql" && a.emit != "json-schema" {
				return fmt.Errorf("--emit %q: want flink-sql or json-schema", a.emit)
			}
			if a.emit != "" && a.offline {
				return fmt.Errorf("--emit %s needs the live schema: it cannot be used with --offline", a.emit)
			}
			return a.plan(cmd.Context(), args[0])
		},
	}
	cmd.Flags().StringVarP(&a.output, "output", "o", "text", "output format: text or json")
	cmd.Flags().BoolVar(&a.offline, "offline", false, "print the resolved pipeline only; do not connect to MySQL or Kafka")
	cmd.Flags().StringVar(&a.stateDir, "state", "", "`DIR` of the pipeline's state (for the start position)")
	cmd.Flags().StringVar(&a.emit, "emit", "", "print, instead of the plan, what consumers declare for each topic: "+
		"flink-sql (a Flink SQL CREATE TABLE) or json-schema (a JSON Schema of the values); the plan's warnings go to stderr")
	return cmd
}

func (a *app) applyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "apply PIPELINE.yaml",
		Short: "Run the pipeline until stopped (or, with --until-caught-up, until it has caught up)",
		Long: `Run the pipeline until stopped (or, with --until-caught-up, until it has caught up).

The state (lock, identity, position, topic partition counts) is kept in --state, by default
./.ingest/<pipeline.name>/; at-least-once also keeps a copy in Kafka's state topic, and
exactly-once keeps the position in Kafka only. SIGINT, SIGTERM and SIGHUP stop gracefully
within --stop-timeout, with the position stored.

Exit codes: 0 done (caught up, or stopped by a signal), 1 runtime failure (the fix is in the
last log line; nothing acknowledged is lost), 2 invalid pipeline or usage.

--metrics-addr serves /metrics and /healthz; --pprof adds /debug/pprof/ there.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.metricsAddr != "" {
				if _, _, err := net.SplitHostPort(a.metricsAddr); err != nil {
					return fmt.Errorf("--metrics-addr %q: want HOST:PORT", a.metricsAddr)
				}
			}
			if a.stopTimeout <= 0 {
				return fmt.Errorf("--stop-timeout %s: want a positive duration such as 20s", a.stopTimeout)
			}
			if a.pprof && a.metricsAddr == "" {
				return errors.New("--pprof serves the profiles on the metrics address: give --metrics-addr too")
			}
			return a.apply(cmd.Context(), args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&a.stateDir, "state", "", "`DIR` that holds the pipeline's position and lock")
	f.BoolVar(&a.untilCaughtUp, "until-caught-up", false, "run the snapshot if one is due and the binlog up to the position of the start, then exit 0")
	f.BoolVar(&a.resetState, "reset-state", false, "delete the pipeline's stored state (state directory and Kafka's state topic) and start afresh; for one run")
	f.StringVar(&a.metricsAddr, "metrics-addr", "", "serve /metrics and /healthz on `HOST:PORT` (127.0.0.1:9090: this host only; :9090: every interface, with a warning); bound first, exit 1 if it cannot be")
	f.BoolVar(&a.pprof, "pprof", false, "also serve the Go profiles under /debug/pprof/ on --metrics-addr (they show memory and the command line)")
	f.DurationVar(&a.stopTimeout, "stop-timeout", upsert.DefaultStopTimeout, "on SIGTERM, SIGINT or SIGHUP: exit within `DURATION`; what is not written to Kafka by then is left for the next run")
	return cmd
}

func (a *app) resnapshotCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "resnapshot PIPELINE.yaml TABLE...",
		Short: "Snapshot tables (db.table) of a pipeline again, and tombstone the keys their topics hold and the tables do not",
		Long: `Snapshot tables (db.table) of a pipeline again, while the other tables keep their position.

The request is stored in the pipeline's state directory (--state, by default
./.ingest/<pipeline.name>/). A running ` + "`ingest apply`" + ` of the pipeline takes it within seconds:
it stops its stream, snapshots the tables with the lock-free method of the initial snapshot,
writes a tombstone for each key their topics hold that the tables no longer have, and resumes
the stream from its stored position. A stopped pipeline does the same at its next start. This
repairs a topic after a lost state directory, or after anything that left keys in it that
the table does not have.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.resnapshot(cmd.Context(), args[0], args[1:])
		},
	}
	cmd.Flags().StringVar(&a.stateDir, "state", "", "`DIR` that holds the pipeline's state")
	return cmd
}

func (a *app) tailCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tail TOPIC...",
		Short: "Print what landed in topics: partition, offset, headers, key and value (or tombstone)",
		Long: "Print the records of the topics from their start to their current end (or, with --follow, until\n" +
			"interrupted). --materialize prints only the last value of each key, as a compacted topic keeps it.\n" +
			"The cluster is --bootstrap, or the sink of --pipeline (with its security settings).",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runTail(cmd.Context(), args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&a.tail.bootstrap, "bootstrap", "", "`HOST:PORT` of a broker")
	f.StringVar(&a.tail.pipeline, "pipeline", "", "take the cluster and its security settings from the sink of `PIPELINE.yaml`")
	f.BoolVarP(&a.tail.follow, "follow", "f", false, "keep printing new records until interrupted")
	f.BoolVar(&a.tail.materialize, "materialize", false, "print the last value per key only (tombstoned keys left out)")
	f.BoolVar(&a.tail.readUncommitted, "read-uncommitted", false, "also show records of open and aborted transactions")
	return cmd
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the Go version and the module versions",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return a.printVersion()
		},
	}
}
