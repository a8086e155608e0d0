package pipeline

import (
	"fmt"
	"strings"

	"github.com/ingestkit/ingest/internal/jdbctls"
	"github.com/ingestkit/ingest/internal/suggest"
)

// This file checks the source's jdbc.properties.*: only the MySQL Connector/J properties that
// ingest honours (its TLS options, and two it already behaves as) are accepted, with
// Connector/J's case-sensitive names; see internal/jdbctls.

// checkJDBCKey checks the name of one jdbc.properties.* option.
func checkJDBCKey(key string) error {
	err := jdbctls.CheckKey(key)
	if err != nil && jdbctls.IsUnknown(err) {
		return fmt.Errorf("%w%s", err, suggest.DidYouMean(key, jdbctls.Names()))
	}
	return err
}

// checkJDBCTogether reports the jdbc.properties that contradict the others, or that the others
// make useless (Connector/J would ignore them silently).
// They are checked only when each of them is valid on its own.
func (l *loader) checkJDBCTogether(props map[string]string) {
	const prefix = "source.jdbc.properties."
	for path := range l.bad {
		if strings.HasPrefix(path, prefix) {
			return
		}
	}
	for _, p := range jdbctls.Check(props) {
		l.at(prefix+p.Key, "%s", p.Message)
	}
}
