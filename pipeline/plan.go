package pipeline

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ingestkit/ingest/secrets"
)

// Plan describes a loaded pipeline for `ingest plan`: every option with
// its effective value, secrets masked as [secrets.Mask]. [NewPlan] builds
// it from the Definition alone; what connecting to the source and the
// broker finds (matched tables, keys, topics, start position) is added by
// the runner's online report.
type Plan struct {
	File string `json:"file"`
	// Mode is "offline" for a plan built from the file alone (NewPlan's
	// value) and "online" when the caller also connected to the source
	// and the broker.
	Mode       string      `json:"mode"`
	Source     []Setting   `json:"source"`
	Sink       []Setting   `json:"sink"`
	Routes     [][]Setting `json:"route"`
	Transforms [][]Setting `json:"transform"`
	Pipeline   []Setting   `json:"pipeline"`
}

// Setting is one option of a Plan.
type Setting struct {
	Key string `json:"key"`
	// Value is the effective value, [secrets.Mask] for a secret and empty
	// for an option that is not set and has no default.
	Value string `json:"value"`
	// From is "file", "default", "derived" (computed from other input, like
	// the default pipeline name) or "unset".
	From   string `json:"from"`
	Secret bool   `json:"secret,omitempty"`
	// Line is the option's line in the file, when the file sets it.
	Line int `json:"line,omitempty"`
}

// NewPlan returns the offline plan of d. It reveals no secret: values that
// are secret, or whose option is a credential, become [secrets.Mask].
func NewPlan(d *Definition) *Plan {
	p := &Plan{File: d.File, Mode: "offline"}
	p.Source = d.settings("source", sourceOptions(&d.Source), &jdbcProperties, d.Source.JDBCProperties)
	p.Sink = d.settings("sink", sinkOptions(&d.Sink), &kafkaProperties, d.Sink.Properties)
	for i := range d.Routes {
		p.Routes = append(p.Routes, d.settings(fmt.Sprintf("route[%d]", i), routeOptions(&d.Routes[i]), nil, nil))
	}
	for i := range d.Transforms {
		p.Transforms = append(p.Transforms, d.settings(fmt.Sprintf("transform[%d]", i), transformOptions(&d.Transforms[i]), nil, nil))
	}
	p.Pipeline = d.settings("pipeline", settingsOptions(&d.Pipeline), nil, nil)
	if p.Pipeline[0].From == "unset" { // name, derived from the file name
		p.Pipeline[0].Value, p.Pipeline[0].From = d.Pipeline.Name, "derived"
	}
	return p
}

// settings lists the options of one block, then its pass-through options
// sorted by name.
func (d *Definition) settings(path string, opts []option, pt *passThrough, props map[string]secrets.Secret) []Setting {
	var out []Setting
	for _, o := range opts {
		s := d.setting(join(path, o.key), o.key, o.val.get(), o.secret)
		switch {
		case s.From == "file":
		case o.def != "":
			s.From = "default"
		default:
			s.From, s.Value = "unset", ""
		}
		out = append(out, s)
	}
	if pt == nil {
		return out
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		secret := pt.secret != nil && pt.secret(k)
		out = append(out, d.setting(join(path, pt.prefix+k), pt.prefix+k, props[k].Reveal(), secret))
	}
	return out
}

// setting describes the option at path, masking its value when it is a
// credential or secret.
func (d *Definition) setting(path, key, value string, credential bool) Setting {
	s := Setting{Key: key, Value: value}
	if credential || d.IsSecret(path) {
		s.Value, s.Secret = secrets.Mask, true
	}
	if pos, ok := d.Pos[path]; ok {
		s.From, s.Line = "file", pos.Line
	}
	return s
}

// WriteJSON writes the plan as indented JSON.
func (p *Plan) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// WriteText writes the plan in a YAML-like layout, one option per line,
// with a comment on options the file does not set.
func (p *Plan) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# ingest plan (%s): %s\n", p.Mode, p.File)
	fmt.Fprintf(&b, "# every option with its effective value; %s hides a secret\n", secrets.Mask)
	writeBlock(&b, "source:", "  ", p.Source)
	writeBlock(&b, "sink:", "  ", p.Sink)
	writeList(&b, "route:", p.Routes)
	writeList(&b, "transform:", p.Transforms)
	writeBlock(&b, "pipeline:", "  ", p.Pipeline)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeList(b *strings.Builder, title string, items [][]Setting) {
	if len(items) == 0 {
		fmt.Fprintf(b, "%s []\n", title)
		return
	}
	fmt.Fprintln(b, title)
	for _, it := range items {
		writeBlock(b, "", "  - ", it[:1])
		writeBlock(b, "", "    ", it[1:])
	}
}

// writeBlock writes settings under title, with their comments aligned.
func writeBlock(b *strings.Builder, title, indent string, settings []Setting) {
	if title != "" {
		fmt.Fprintln(b, title)
	}
	width := 0
	for _, s := range settings {
		width = max(width, len(s.Key)+len(s.Value))
	}
	for _, s := range settings {
		if s.Value == "" && s.From == "file" {
			s.Value = `""` // set to the empty string, as opposed to not set
		}
		line := indent + s.Key + ": " + s.Value
		if c := comment(s.From); c != "" {
			line += strings.Repeat(" ", width-len(s.Key)-len(s.Value)+2) + c
		}
		fmt.Fprintln(b, strings.TrimRight(line, " "))
	}
}

func comment(from string) string {
	switch from {
	case "default":
		return "# default"
	case "derived":
		return "# derived from the file name"
	case "unset":
		return "# not set"
	}
	return ""
}
