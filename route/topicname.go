package route

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kafka's own topic name rules (org.apache.kafka.common.internals.Topic).
const maxKafkaTopicLen = 249

// ApsaraMQ for Kafka topic name rules, from the CreateTopic API documentation
// (https://www.alibabacloud.com/help/en/apsaramq-for-kafka/api-createtopic,
// older versions at https://www.alibabacloud.com/help/doc-detail/157799.htm;
// summarised in docs/apsaramq.md): only
// letters, digits, '_' and '-', 3 to 64 characters; longer names are silently
// truncated, and a name cannot be changed later. '.' is not in the
// documented character set, so the default topic "<db>.<table>" is not
// usable.
const (
	minApsaraTopicLen = 3
	maxApsaraTopicLen = 64
)

// ValidateKafkaTopic checks name against Apache Kafka's topic name rules:
// 1 to 249 of the ASCII letters, digits, '.', '_' and '-', and not "." or
// "..". A table without a route whose name has other characters needs a
// route.
func ValidateKafkaTopic(name string) error {
	switch {
	case name == "":
		return errors.New("topic name is empty")
	case name == "." || name == "..":
		return fmt.Errorf("topic %s is not a valid Kafka topic name", quote(name))
	case len(name) > maxKafkaTopicLen:
		return fmt.Errorf("topic %s is %d characters long; Kafka allows at most %d; route the table to a shorter sink-table",
			quote(name), len(name), maxKafkaTopicLen)
	}
	if bad := invalidChars(name, isKafkaTopicChar); bad != "" {
		return fmt.Errorf("topic %s contains %s; Kafka topic names may contain only ASCII letters, digits, '.', '_' and '-'; route the table to a sink-table such as %s",
			quote(name), bad, sanitizeTopic(name, isKafkaTopicChar))
	}
	return nil
}

// ValidateApsaraTopic checks name against ApsaraMQ for Kafka's topic name
// rules: 3 to 64 characters, each an ASCII letter, a digit, '_' or '-'.
// Longer names are rejected rather than truncated as ApsaraMQ would, since
// truncation could silently merge two tables into one topic. The error says
// what is wrong and which route would fix it.
func ValidateApsaraTopic(name string) error {
	problems := apsaraProblems(name)
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("topic %s is not a valid ApsaraMQ topic name: %s; %s", quote(name), strings.Join(problems, "; "), apsaraFix(name))
}

func apsaraProblems(name string) []string {
	var problems []string
	if bad := invalidChars(name, isApsaraTopicChar); bad != "" {
		problems = append(problems, "it contains "+bad+", but only letters, digits, '_' and '-' are allowed")
	}
	switch n := utf8.RuneCountInString(name); {
	case n < minApsaraTopicLen:
		problems = append(problems, fmt.Sprintf("it has %d characters, fewer than the %d required", n, minApsaraTopicLen))
	case n > maxApsaraTopicLen:
		problems = append(problems, fmt.Sprintf("it has %d characters, more than %d (ApsaraMQ would silently truncate it, so two tables could share a topic)",
			n, maxApsaraTopicLen))
	}
	return problems
}

// apsaraFix suggests a route. A name with a '.' is most likely the default
// topic "<db>.<table>" of a table no route matched.
func apsaraFix(name string) string {
	db, _, isDefault := strings.Cut(name, ".")
	clean := sanitizeTopic(name, isApsaraTopicChar)
	// A suggestion of only underscores would not help anyone.
	cleanOK := len(apsaraProblems(clean)) == 0 && strings.IndexFunc(clean, isASCIIAlnum) >= 0
	if !isDefault {
		if cleanOK {
			return "route the table to a valid sink-table such as " + clean
		}
		return "route the table to a sink-table of 3 to 64 letters, digits, '_' and '-'"
	}
	fix := "the default topic of a table that no route matches is \"<db>.<table>\", which ApsaraMQ does not accept; route the table to a valid sink-table"
	if cleanOK {
		fix += " such as " + clean
	}
	if prefix := sanitizeTopic(db, isApsaraTopicChar); prefix != "" {
		fix += ", or use sink-table: " + prefix + "_<> with replace-symbol: <> to name each table's topic after it"
	}
	return fix
}

// invalidChars lists the distinct characters of s that ok rejects, quoted,
// or returns "" when there are none.
func invalidChars(s string, ok func(rune) bool) string {
	var bad []string
	for _, r := range s {
		q := strconv.QuoteRune(r)
		if !ok(r) && !slices.Contains(bad, q) {
			bad = append(bad, q)
		}
	}
	return strings.Join(bad, ", ")
}

// sanitizeTopic replaces every character that ok rejects with '_'.
func sanitizeTopic(s string, ok func(rune) bool) string {
	return strings.Map(func(r rune) rune {
		if ok(r) {
			return r
		}
		return '_'
	}, s)
}

func isApsaraTopicChar(r rune) bool {
	return isASCIIAlnum(r) || r == '_' || r == '-'
}

func isASCIIAlnum(r rune) bool {
	return r < utf8.RuneSelf && (isDigit(byte(r)) || isASCIILetter(byte(r)))
}

func isKafkaTopicChar(r rune) bool { return isApsaraTopicChar(r) || r == '.' }
