package pipeline

import (
	"errors"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ingestkit/ingest/secrets"
)

// scalar returns the value of the option at path with its placeholders
// expanded, and records the option's position. secret is true when the
// value contains a secret placeholder, which makes the whole value secret.
// ok is false when the value cannot be used; the problems are reported.
func (l *loader) scalar(path string, n *yaml.Node) (v string, secret, ok bool) {
	l.def.Pos[path] = pos(n)
	l.nodes[path] = n
	if n.Kind != yaml.ScalarNode {
		l.errorAt(n, path, "must be a single value, not a %s; write a list as a comma-separated string", kindName(n))
		l.bad[path] = true
		return "", false, false
	}
	if n.Tag == "!!null" {
		l.errorAt(n, path, "has no value; write one or remove the option")
		l.bad[path] = true
		return "", false, false
	}
	if !strings.Contains(n.Value, "${") {
		return n.Value, false, true
	}
	exp, err := l.res.Expand(l.ctx, n.Value)
	if exp.Secret {
		l.def.secret[path] = true
	}
	if err != nil {
		l.placeholderErrors(path, n, err)
		l.bad[path] = true
		return "", exp.Secret, false
	}
	return exp.Value.Reveal(), exp.Secret, true
}

// placeholderErrors reports each placeholder that could not be expanded,
// at the position of its "${".
func (l *loader) placeholderErrors(path string, n *yaml.Node, err error) {
	var pes secrets.PlaceholderErrors
	if !errors.As(err, &pes) {
		l.errorAt(n, path, "%v", err)
		return
	}
	for _, pe := range pes {
		p := l.placeholderPos(n, pe.Ref.Offset)
		l.errs = append(l.errs, &Error{File: l.def.File, Line: p.Line, Col: p.Col, Path: path, Msg: pe.Error(), Err: pe})
	}
}

// placeholderPos returns the position of the byte at offset in the value
// of the scalar n. It is exact for a value on one line written as it is
// (plain, or quoted without escapes before the offset); otherwise, rather
// than guess, it returns the position of the scalar. The source line is
// compared with the value to tell which case applies.
func (l *loader) placeholderPos(n *yaml.Node, offset int) Position {
	base := pos(n)
	if n.Line < 1 || n.Line > len(l.lines) || offset > len(n.Value) {
		return base
	}
	line := []rune(l.lines[n.Line-1])
	start := n.Column - 1
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		start++
	}
	prefix := []rune(n.Value[:offset])
	col := start + len(prefix)
	if start < 0 || col+2 > len(line) || string(line[start:col]) != string(prefix) || string(line[col:col+2]) != "${" {
		return base
	}
	return Position{Line: n.Line, Col: col + 1}
}
