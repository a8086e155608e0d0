package secrets

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
)

// Resolver expands placeholders with ordered providers: one list for
// secrets and one for variables. The first provider that knows a name
// decides its value. A Resolver is safe for concurrent use and caches what
// it has looked up.
type Resolver struct {
	secrets []Provider
	vars    []Provider

	mu    sync.Mutex
	cache map[cacheKey]string
	scrub *Scrubber
}

type cacheKey struct {
	secret bool
	name   string
}

// NewResolver returns a Resolver that asks secretProviders, in order, for
// ${secret_values.NAME} and varProviders, in order, for ${NAME}.
//
// The ingest command uses, for secrets, the --secrets file and then
// INGEST_SECRET_*; for variables, --var flags, then the --vars file, then
// INGEST_VAR_*, so that the most explicit source wins.
func NewResolver(secretProviders, varProviders []Provider) *Resolver {
	return &Resolver{
		secrets: secretProviders,
		vars:    varProviders,
		cache:   make(map[cacheKey]string),
	}
}

// SetScrubber makes r add every secret value it looks up from now on to
// s, so that s can mask it in output. The ingest command sets one before
// it loads a pipeline.
func (r *Resolver) SetScrubber(s *Scrubber) {
	r.mu.Lock()
	r.scrub = s
	r.mu.Unlock()
}

// Expansion is the result of [Resolver.Expand].
type Expansion struct {
	// Value is the string with its placeholders replaced. It is a Secret so
	// that it is never printed by accident; when Secret is false it may be
	// revealed freely.
	Value Secret
	// Secret is true when the string contained a secret placeholder; the
	// whole value is then secret.
	Secret bool
}

// Expand replaces the placeholders of s and turns $${ into ${. Every
// placeholder that cannot be expanded is reported: the error is then a
// [PlaceholderErrors], and Expansion holds only Secret.
func (r *Resolver) Expand(ctx context.Context, s string) (Expansion, error) {
	segs, errs := scan(s)
	var (
		out strings.Builder
		exp Expansion
	)
	for _, seg := range segs {
		if seg.ref == nil {
			out.WriteString(seg.literal)
			continue
		}
		exp.Secret = exp.Secret || seg.ref.Secret
		v, err := r.lookup(ctx, *seg.ref)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out.WriteString(v)
	}
	if len(errs) > 0 {
		return Expansion{Secret: exp.Secret}, PlaceholderErrors(sortByOffset(errs))
	}
	exp.Value = Secret(out.String())
	return exp, nil
}

// Secret looks up the secret name, as ${secret_values.NAME} would.
func (r *Resolver) Secret(ctx context.Context, name string) (Secret, error) {
	v, err := r.lookup(ctx, Ref{Name: name, Secret: true, Text: "${" + secretPrefix + name + "}"})
	if err != nil {
		return "", err
	}
	return Secret(v), nil
}

// lookup asks the providers for ref in order. A provider's ErrNotFound
// moves on to the next one; any other error stops the lookup.
func (r *Resolver) lookup(ctx context.Context, ref Ref) (string, *PlaceholderError) {
	key := cacheKey{ref.Secret, ref.Name}
	r.mu.Lock()
	v, ok := r.cache[key]
	r.mu.Unlock()
	if ok {
		return v, nil
	}
	providers := r.vars
	if ref.Secret {
		providers = r.secrets
	}
	var hints []string
	for _, p := range providers {
		v, err := p.Lookup(ctx, ref.Name)
		switch {
		case err == nil:
			r.mu.Lock()
			r.cache[key] = v
			scrub := r.scrub
			r.mu.Unlock()
			if ref.Secret {
				scrub.Add(ref.Name, v)
			}
			return v, nil
		case !errors.Is(err, ErrNotFound):
			return "", &PlaceholderError{Ref: ref, Err: err}
		}
		if h, ok := p.(Hinter); ok && h.Hint(ref.Name) != "" {
			hints = append(hints, h.Hint(ref.Name))
		}
	}
	return "", &PlaceholderError{Ref: ref, Hints: hints, Err: ErrNotFound}
}

// sortByOffset orders errors by their position in the string; scan errors
// and lookup errors are collected separately.
func sortByOffset(errs []*PlaceholderError) []*PlaceholderError {
	slices.SortStableFunc(errs, func(a, b *PlaceholderError) int { return a.Ref.Offset - b.Ref.Offset })
	return errs
}
