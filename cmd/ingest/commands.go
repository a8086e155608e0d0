package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/ingestkit/ingest/consumer"
	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/progress"
	"github.com/ingestkit/ingest/runner"
	"github.com/ingestkit/ingest/secrets"
	"github.com/ingestkit/ingest/state"
	"github.com/ingestkit/ingest/tail"
	"github.com/ingestkit/ingest/upsert"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/term"
)

// resolver builds the placeholder providers from the flags and the
// environment. Secrets: --secrets, then INGEST_SECRET_*, then KMS when
// --kms-region or INGEST_KMS_REGION is set (kms.go). Variables: --var,
// then --vars, then INGEST_VAR_*, so that the most explicit wins. The
// message of an unresolved placeholder lists every way to supply it.
func (a *app) resolver() (*secrets.Resolver, error) {
	secretEnv := secrets.NewEnv(secrets.SecretEnvPrefix, a.lookupEnv)
	secretProviders := []secrets.Provider{secretEnv, &secrets.Map{HintFunc: func(name string) string {
		return fmt.Sprintf("add %q to a file given with --secrets", name)
	}}}
	if a.secretsFile != "" {
		m, err := secrets.LoadSecretsFile(a.secretsFile)
		if err != nil {
			return nil, err
		}
		secretProviders = []secrets.Provider{m, secretEnv}
	}
	secretProviders, err := a.addKMS(secretProviders)
	if err != nil {
		return nil, err
	}
	flags, err := secrets.ParseVarFlags(a.vars)
	if err != nil {
		return nil, err
	}
	varProviders := []secrets.Provider{flags}
	if a.varsFile != "" {
		m, err := secrets.LoadVarsFile(a.varsFile)
		if err != nil {
			return nil, fmt.Errorf("vars file: %w", err)
		}
		varProviders = append(varProviders, m)
	}
	varProviders = append(varProviders, secrets.NewEnv(secrets.VarEnvPrefix, a.lookupEnv))
	res := secrets.NewResolver(secretProviders, varProviders)
	res.SetScrubber(a.scrub)
	return res, nil
}

// load loads the pipeline file. A secret store that failed is a runtime
// failure; every other problem makes the pipeline invalid.
func (a *app) load(ctx context.Context, path string) (*pipeline.Definition, error) {
	res, err := a.resolver()
	if err != nil {
		return nil, invalid(err)
	}
	def, err := pipeline.Load(path, pipeline.LoadOptions{Context: ctx, Resolver: res})
	a.warnShortSecrets()
	if err != nil {
		if backendFailed(err) {
			return nil, failure(err)
		}
		return nil, invalid(err)
	}
	// The loader checks each properties.* option; the sink also checks them together
	// (security.protocol against ssl.* and sasl.*, the JAAS login module). Run that here
	// too, so that validate and plan refuse what apply would; the TLS stores the options name
	// are read by apply only (validate may run away from the machine that has them).
	if err := upsert.CheckProperties(secrets.RevealMap(def.Sink.Properties)); err != nil {
		return nil, invalid(fmt.Errorf("%s: sink: %w", path, err))
	}
	return def, nil
}

// warnShortSecrets warns about each secret whose value is too short to be
// masked in output (secrets.MinScrubLen).
func (a *app) warnShortSecrets() {
	for _, name := range a.scrub.Short() {
		a.log.Warn(fmt.Sprintf("secret ${secret_values.%s} is shorter than %d characters: it cannot be kept out of output, "+
			"so it is not masked there; use a longer value or do not make it a secret", name, secrets.MinScrubLen))
	}
}

// backendFailed reports whether err holds a placeholder whose provider
// failed, as opposed to one that is malformed or not found.
func backendFailed(err error) bool {
	var errs pipeline.Errors
	if !errors.As(err, &errs) {
		return false
	}
	for _, e := range errs {
		var pe *secrets.PlaceholderError
		if errors.As(e, &pe) && !errors.Is(pe, secrets.ErrNotFound) && !errors.Is(pe, secrets.ErrSyntax) {
			return true
		}
	}
	return false
}

func (a *app) validate(ctx context.Context, path string) error {
	def, err := a.load(ctx, path)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "ok: %s (%s, %s, %s)\n", path,
		plural(countPatterns(def.Source.Tables), "table pattern"),
		plural(len(def.Routes), "route"), plural(len(def.Transforms), "transform"))
	return nil
}

func (a *app) plan(ctx context.Context, path string) error {
	def, err := a.load(ctx, path)
	if err != nil {
		return err
	}
	p := pipeline.NewPlan(def)
	var rep *runner.Report
	if !a.offline {
		if rep, err = runner.Plan(ctx, def, runner.Options{StateDir: a.stateDir, Scrubber: a.scrub}); err != nil {
			return failure(fmt.Errorf("plan: %w", err))
		}
		p.Mode = "online"
	}
	if a.emit != "" {
		return a.emitConsumer(def, rep)
	}
	if err := writePlan(a.stdout, a.output, p, rep); err != nil {
		return failure(fmt.Errorf("plan: %w", err))
	}
	if rep != nil && rep.HasErrors() {
		// The report is printed; exit 1 so that plan can gate a deploy.
		return failure(fmt.Errorf("plan: %s found; see Problems above", plural(len(rep.Problems), "problem")))
	}
	return nil
}

// emitConsumer writes what `plan --emit` asks for, from the online report: the DDL or the
// JSON Schemas on stdout, the report's problems and warnings on stderr. A problem writes
// nothing and exits 1.
func (a *app) emitConsumer(def *pipeline.Definition, rep *runner.Report) error {
	for _, w := range rep.Warnings {
		fmt.Fprintf(a.stderr, "warning: %s\n", w)
	}
	if rep.HasErrors() {
		for _, p := range rep.Problems {
			fmt.Fprintf(a.stderr, "%s\n", p)
		}
		return failure(fmt.Errorf("plan: %s found; nothing emitted", plural(len(rep.Problems), "problem")))
	}
	sink := consumer.SinkOf(def)
	var err error
	if a.emit == "json-schema" {
		err = consumer.WriteJSONSchema(a.stdout, rep.ConsumerTopics(), sink)
	} else {
		err = consumer.WriteFlinkSQL(a.stdout, rep.ConsumerTopics(), sink)
	}
	if err != nil {
		return failure(fmt.Errorf("plan: %w", err))
	}
	return nil
}

// writePlan writes the resolved pipeline and, when there is one, the online report.
func writePlan(w io.Writer, format string, p *pipeline.Plan, rep *runner.Report) error {
	if format == "json" {
		if rep == nil {
			return p.WriteJSON(w)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Pipeline *pipeline.Plan `json:"pipeline"`
			Online   *runner.Report `json:"online"`
		}{p, rep})
	}
	if err := p.WriteText(w); err != nil || rep == nil {
		return err
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return rep.WriteText(w)
}

func (a *app) apply(ctx context.Context, path string) error {
	def, err := a.load(ctx, path)
	if err != nil {
		return err
	}
	a.log.Info("pipeline loaded", "file", path, "pipeline", masked(def, "pipeline.name", def.Pipeline.Name),
		"state", a.stateDir, "until_caught_up", a.untilCaughtUp)
	opts := runner.Options{StateDir: a.stateDir, UntilCaughtUp: a.untilCaughtUp, ResetState: a.resetState, MetricsAddr: a.metricsAddr,
		Pprof: a.pprof, Logger: a.log, Scrubber: a.scrub, StopTimeout: a.stopTimeout}
	if f, ok := a.rawStderr.(*os.File); ok && a.logFormat == "text" && term.IsTerminal(int(f.Fd())) {
		// On a terminal: progress bars and a status line, with the logs printed above them.
		d := progress.NewTerminal(a.scrub.FrameWriter(f))
		opts.Display = d
		opts.Logger = slog.New(a.scrub.Handler(slog.NewTextHandler(d, &slog.HandlerOptions{Level: slog.LevelInfo})))
	}
	err = runner.Run(ctx, def, opts)
	if err != nil {
		return failure(err)
	}
	a.log.Info("stopped; position stored", "pipeline", masked(def, "pipeline.name", def.Pipeline.Name))
	return nil
}

func (a *app) resnapshot(ctx context.Context, path string, tables []string) error {
	def, err := a.load(ctx, path)
	if err != nil {
		return err
	}
	ids, err := runner.ResnapshotTables(def, tables)
	if err != nil {
		return invalid(err)
	}
	dir := a.stateDir
	if dir == "" {
		dir = runner.DefaultStateDir(def.Pipeline.Name)
	}
	if err := state.RequestResnapshot(dir, ids); err != nil {
		return failure(err)
	}
	fmt.Fprintf(a.stdout, "re-snapshot requested: %s; a running `ingest apply` of %s takes it within seconds, "+
		"otherwise its next start does\n", strings.Join(tables, ", "), masked(def, "pipeline.name", def.Pipeline.Name))
	return nil
}

// masked returns value, or the mask when the option at path is secret.
func masked(def *pipeline.Definition, path, value string) string {
	if def.IsSecret(path) {
		return secrets.Mask
	}
	return value
}

// countPatterns counts the comma-separated items of a table pattern; `\,`
// does not separate.
func countPatterns(tables string) int {
	n := 0
	for item := range strings.SplitSeq(strings.ReplaceAll(tables, `\,`, ""), ",") {
		if strings.TrimSpace(item) != "" {
			n++
		}
	}
	return n
}

// plural returns "1 route" or "3 routes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func (a *app) runTail(ctx context.Context, topics []string) error {
	var opts []kgo.Opt
	switch {
	case a.tail.pipeline != "":
		def, err := a.load(ctx, a.tail.pipeline)
		if err != nil {
			return err
		}
		p, err := upsert.ParseProperties(secrets.RevealMap(def.Sink.Properties))
		if err != nil {
			return invalid(err)
		}
		opts = p.ClientOpts()
	case a.tail.bootstrap != "":
		opts = []kgo.Opt{kgo.SeedBrokers(strings.Split(a.tail.bootstrap, ",")...)}
	default:
		return invalid(errors.New("tail: give --bootstrap HOST:PORT or --pipeline FILE"))
	}
	err := tail.Run(ctx, tail.Config{Topics: topics, ClientOpts: opts, Follow: a.tail.follow,
		Materialize: a.tail.materialize, ReadUncommitted: a.tail.readUncommitted, Warn: func(m string) { a.log.Warn(m) }}, a.stdout)
	if err != nil {
		return failure(err)
	}
	return nil
}
