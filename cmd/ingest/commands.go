package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ingestkit/ingest/pipeline"
	"github.com/ingestkit/ingest/secrets"
)

// resolver builds the placeholder providers from the flags and the
// environment. Secrets: --secrets, then INGEST_SECRET_*. Variables: --var,
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
	return secrets.NewResolver(secretProviders, varProviders), nil
}

// load loads the pipeline file. A secret store that failed is a runtime
// failure; every other problem makes the pipeline invalid.
func (a *app) load(ctx context.Context, path string) (*pipeline.Definition, error) {
	res, err := a.resolver()
	if err != nil {
		return nil, invalid(err)
	}
	def, err := pipeline.Load(path, pipeline.LoadOptions{Context: ctx, Resolver: res})
	if err != nil {
		if backendFailed(err) {
			return nil, failure(err)
		}
		return nil, invalid(err)
	}
	return def, nil
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
	if err := planOnline(ctx, def, p); err != nil {
		return failure(err)
	}
	if a.output == "json" {
		err = p.WriteJSON(a.stdout)
	} else {
		err = p.WriteText(a.stdout)
	}
	if err != nil {
		return failure(fmt.Errorf("plan: %w", err))
	}
	return nil
}

// planOnline is the online part of plan: connect to the source and the
// broker and add to p the matched tables with their keys and topics, the
// start position, the topics to create and the problems found. It is not
// built yet, so plan is offline; the runner's packages will fill it in.
func planOnline(ctx context.Context, def *pipeline.Definition, p *pipeline.Plan) error {
	_, _, _ = ctx, def, p
	return nil
}

func (a *app) apply(ctx context.Context, path string) error {
	def, err := a.load(ctx, path)
	if err != nil {
		return err
	}
	a.log.Info("pipeline loaded", "file", path, "pipeline", masked(def, "pipeline.name", def.Pipeline.Name),
		"state", a.stateDir, "until_caught_up", a.untilCaughtUp)
	return failure(errors.New("apply: the runner is not built yet in this version"))
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
