package secrets

import (
	"fmt"
	"log/slog"
	"strconv"
)

// Mask is what a [Secret] prints instead of its value.
const Mask = "******"

// Secret is a string that never prints its value: fmt (every verb,
// including %v, %+v, %#v, %q and %x), log/slog, encoding/json and
// encoding.TextMarshaler users (YAML encoders among them) all see [Mask].
// Use [Secret.Reveal] where the value is really needed.
//
// fmt and log/slog reach these methods only through exported struct fields,
// map values and slice elements: a Secret kept in an unexported field of a
// struct that is printed with %v is printed by reflection, value included.
// Keep Secrets in exported fields or in variables of their own.
type Secret string

// Reveal returns the secret value. Call it only where the value is handed
// to the system that needs it (a driver, a client), never for output.
func (s Secret) Reveal() string { return string(s) }

// IsEmpty reports whether the secret value is the empty string.
func (s Secret) IsEmpty() bool { return s == "" }

// String returns [Mask].
func (s Secret) String() string { return Mask }

// GoString returns a Go expression that does not contain the value, for %#v.
func (s Secret) GoString() string { return "secrets.Secret(" + strconv.Quote(Mask) + ")" }

// Format prints [Mask] for every verb, so that fmt never reaches the
// underlying string.
func (s Secret) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		fmt.Fprint(f, s.GoString())
	case verb == 'q':
		fmt.Fprint(f, strconv.Quote(Mask))
	default:
		fmt.Fprint(f, Mask)
	}
}

// LogValue returns [Mask] as a slog string value.
func (s Secret) LogValue() slog.Value { return slog.StringValue(Mask) }

// MarshalJSON returns [Mask] as a JSON string.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(Mask)), nil }

// MarshalText returns [Mask].
func (s Secret) MarshalText() ([]byte, error) { return []byte(Mask), nil }

// RevealMap returns the values of m, revealed, for the one place that hands them to a client
// library (the Kafka producer's or the MySQL connection's settings).
func RevealMap(m map[string]Secret) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v.Reveal()
	}
	return out
}
