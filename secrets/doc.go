// Package secrets resolves the ${...} placeholders of a pipeline file and
// holds secret values so that they never show up in output.
//
// A placeholder is ${secret_values.NAME} (a secret) or ${NAME} (a
// variable); NAME may contain letters, digits, '.', '-' and '_', and $${
// writes a literal ${. [Resolver.Expand] replaces the placeholders of one
// string, looking each name up in an ordered list of [Provider]s: for
// secrets, usually a secrets file ([LoadSecretsFile]) and then the
// environment ([NewEnv] with [SecretEnvPrefix]); for variables, --var flags
// ([ParseVarFlags]), a vars file ([LoadVarsFile]) and the environment
// ([VarEnvPrefix]). A Provider answers [ErrNotFound] when it does not know a
// name; any other error is a backend failure and stops the lookup, so that a
// broken secret store never silently falls back to a lower-priority value.
//
// Placeholders are expanded in scalar values after YAML parsing, never in
// the file's text, so a value cannot inject YAML. A string that contains a
// secret placeholder anywhere is secret as a whole.
//
// [Secret] is a string that redacts itself in fmt, log/slog, encoding/json
// and encoding.TextMarshaler output; [Secret.Reveal] returns the value for
// the one place that needs it. Errors of this package name placeholders and
// providers, never values.
//
// [Scrubber] removes resolved secret values from any text: a Resolver
// given one with [Resolver.SetScrubber] adds each secret value it looks up,
// and the ingest command passes everything it prints through it
// ([Scrubber.Writer], [Scrubber.Handler]), as well as metrics labels and
// the state directory ([Scrubber.HideJSON]). Each value becomes
// ${secret_values.NAME}; values shorter than [MinScrubLen] are not masked.
//
// A [Resolver] is safe for concurrent use; it caches the values it has
// looked up for its lifetime.
package secrets
