package state

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Secrets tells a Store which of what it stores is secret; *secrets.Scrubber implements it.
type Secrets interface {
	// Contains reports whether s holds a secret value.
	Contains(s string) bool
	// HideJSON replaces the secret values in the strings of a JSON document by placeholders.
	HideJSON(b []byte) []byte
	// RevealJSON puts back the values that HideJSON replaced.
	RevealJSON(b []byte) []byte
}

// hashPrefix starts a field of the identity that is stored as a salted hash.
const hashPrefix = "sha256:"

// hashed returns the salted hash of v as stored: "sha256:" and 64 hex digits.
func hashed(salt, v string) string {
	sum := sha256.Sum256([]byte(salt + "\x00" + v))
	return hashPrefix + hex.EncodeToString(sum[:])
}

// newSalt returns 16 random bytes in hex.
func newSalt() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// stored returns id as it is written to identity.json: each field that holds a secret
// (by sec) replaced by its hash with salt, and Salt set when one is. The pipeline's
// identity fields are the ones listed in fields.
func (id Identity) stored(salt string, sec Secrets) Identity {
	out := id
	out.Salt = ""
	for _, f := range out.fields() {
		if sec != nil && sec.Contains(*f) {
			*f = hashed(salt, *f)
			out.Salt = salt
		}
	}
	return out
}

// fields returns pointers to the fields that identify a pipeline's state.
func (id *Identity) fields() []*string { return []*string{&id.Pipeline, &id.Source, &id.Tables} }

// matches reports whether the stored identity is the one requested, its table selection
// aside (a selection may change, see Store.RecordTables): a hashed field is
// compared with the requested value hashed with the stored salt, any other as it is. An
// identity stored before secrets were hashed (plain values) thus still matches.
func (id Identity) matches(stored Identity) bool {
	want, have := id.fields(), stored.fields()
	for i := range want[:2] { // Pipeline and Source
		w, h := *want[i], *have[i]
		if strings.HasPrefix(h, hashPrefix) && stored.Salt != "" {
			w = hashed(stored.Salt, w)
		}
		if w != h {
			return false
		}
	}
	return true
}
