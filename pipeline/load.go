package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ingestkit/ingest/internal/suggest"
	"github.com/ingestkit/ingest/secrets"
)

// LoadOptions configures [Load] and [Parse].
type LoadOptions struct {
	// Context bounds the lookups of secrets and variables; nil means
	// context.Background().
	Context context.Context
	// Resolver expands the ${...} placeholders. With nil, no provider is
	// configured and every placeholder is an error.
	Resolver *secrets.Resolver
}

// Load reads, checks and resolves the pipeline file at path. When the file
// has problems the error is an [Errors] holding all of them, each with its
// file:line:col; when the file cannot be read it is the wrapped read error.
func Load(path string, opts LoadOptions) (*Definition, error) {
	data, err := readLimited(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("read pipeline: %w", err)
	}
	return Parse(path, data, opts)
}

// MaxFileSize is the largest pipeline file Load reads: far more than any hand-written
// pipeline, and small enough that a mistaken file (a dump, a log) is refused at once
// instead of taking minutes and gigabytes to check.
const MaxFileSize = 1 << 20

// readLimited reads the file at path, or fails when it has more than limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d KiB, the most a pipeline file may have; "+
			"is it the right file? (many tables need one pattern, such as app.\\.*, not one route each)", path, limit>>10)
	}
	return data, nil
}

// Parse is [Load] for a file already in memory; name is used in errors and
// to derive a default pipeline name. Its error is always an [Errors].
func Parse(name string, data []byte, opts LoadOptions) (*Definition, error) {
	l := newLoader(name, data, opts)
	l.load()
	if len(l.errs) > 0 {
		l.errs.sort()
		return nil, l.errs
	}
	return l.def, nil
}

// loader holds the state of one Parse.
type loader struct {
	ctx   context.Context
	res   *secrets.Resolver
	data  []byte
	lines []string
	def   *Definition
	errs  Errors
	bad   map[string]bool // paths whose value could not be used
	// nodes are the value nodes of the options by path, for positions inside a value.
	nodes map[string]*yaml.Node
}

func newLoader(name string, data []byte, opts LoadOptions) *loader {
	l := &loader{ctx: opts.Context, res: opts.Resolver, data: data, bad: make(map[string]bool), nodes: make(map[string]*yaml.Node)}
	if l.ctx == nil {
		l.ctx = context.Background()
	}
	if l.res == nil {
		l.res = secrets.NewResolver(nil, nil)
	}
	l.lines = strings.Split(string(data), "\n")
	l.def = &Definition{File: name, Pos: make(map[string]Position), secret: make(map[string]bool)}
	return l
}

// load walks the file; problems are collected in l.errs.
func (l *loader) load() {
	root := l.parseYAML()
	if root == nil {
		return
	}
	blocks := l.topLevel(root)
	l.loadSource(blocks["source"], root)
	l.loadSink(blocks["sink"], root)
	l.loadRoutes(blocks["route"])
	l.loadTransforms(blocks["transform"])
	l.loadSettings(blocks["pipeline"])
	l.validate()
}

// parseYAML returns the root mapping of the file, or nil after reporting
// why there is none.
func (l *loader) parseYAML() (root *yaml.Node) {
	defer func() {
		// yaml.v3 has panicked on hostile input before; a pipeline file
		// must give an error, not a crash.
		if r := recover(); r != nil {
			l.errorf(Position{1, 1}, "", "invalid YAML: the parser failed on this file")
			root = nil
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(l.data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			l.errorf(Position{1, 1}, "", "the file is empty; a pipeline needs a source and a sink block")
		} else {
			l.yamlError(err)
		}
		return nil
	}
	l.checkSingleDocument(dec)
	if len(doc.Content) == 0 {
		l.errorf(Position{1, 1}, "", "the file is empty; a pipeline needs a source and a sink block")
		return nil
	}
	root = resolveAlias(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		l.errorAt(root, "", "a pipeline file must be a map with source and sink blocks")
		return nil
	}
	return root
}

func (l *loader) checkSingleDocument(dec *yaml.Decoder) {
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		at := &extra
		if len(extra.Content) > 0 {
			at = extra.Content[0]
		}
		l.errorAt(at, "", "a pipeline file holds one YAML document; remove the one after ---")
	case !errors.Is(err, io.EOF):
		l.yamlError(err)
	}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlParserErrors are the messages of yaml.v3's parser (as opposed to its scanner). yaml.v3
// reports a parser error's line counted from 0 (decode.go, parser.fail: only scanner errors
// get the +1), so the line it prints is one early; these need the +1 it leaves out.
var yamlParserErrors = []string{
	"did not find expected <document start>",
	"did not find expected node content",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found undefined tag handle",
	"found duplicate %TAG directive",
}

// yamlError reports a yaml.v3 syntax error, which carries a line but no
// column.
func (l *loader) yamlError(err error) {
	msg, line := strings.TrimPrefix(err.Error(), "yaml: "), 1
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if slices.Contains(yamlParserErrors, msg) {
			line++
		}
	}
	l.errorf(Position{max(line, 1), 1}, "", "invalid YAML: %s", msg)
}

// pair is a key and its value in a mapping.
type pair struct {
	key, val *yaml.Node
}

// topLevel returns the blocks of the file by name, reporting unknown and
// repeated ones.
func (l *loader) topLevel(root *yaml.Node) map[string]pair {
	blocks := make(map[string]pair)
	for _, e := range l.entries("", root) {
		switch {
		case !slices.Contains(topLevelKeys, e.key):
			l.errorAt(e.keyNode, "", "unknown block %q%s; a pipeline file has the blocks source, sink, route, transform and pipeline",
				e.key, suggest.DidYouMean(e.key, topLevelKeys))
		default:
			blocks[e.key] = pair{e.keyNode, e.valNode}
			l.def.Pos[e.key] = pos(e.keyNode)
		}
	}
	return blocks
}

// defaultName derives pipeline.name from the file name: its stem, or the
// name of its directory when the stem is the generic "pipeline"
// (examples/quickstart/pipeline.yaml gives "quickstart"). Characters other
// than letters, digits, '.', '-' and '_' become '-'.
func defaultName(file string) string {
	base := filepath.Base(file)
	name := strings.TrimSuffix(base, filepath.Ext(base))
	if strings.EqualFold(name, "pipeline") {
		dir := filepath.Dir(file)
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		if d := filepath.Base(dir); d != "." && d != string(filepath.Separator) {
			name = d
		}
	}
	return strings.Map(func(r rune) rune {
		if r < 128 && secrets.ValidName(string(r)) {
			return r
		}
		return '-'
	}, name)
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func pos(n *yaml.Node) Position { return Position{Line: max(n.Line, 1), Col: max(n.Column, 1)} }

// errorf records a problem at p.
func (l *loader) errorf(p Position, path, format string, args ...any) {
	l.errs = append(l.errs, &Error{File: l.def.File, Line: p.Line, Col: p.Col, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// errorAt records a problem at the node n.
func (l *loader) errorAt(n *yaml.Node, path, format string, args ...any) {
	l.errorf(pos(n), path, format, args...)
}
