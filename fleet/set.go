package fleet

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ingestkit/ingest/pipeline"
)

// Pipeline is one pipeline of a [Set]: its definition and the bytes of its file.
type Pipeline struct {
	// Def is the loaded definition.
	Def *pipeline.Definition
	// Raw is the content of the pipeline file, as read: the set's hash is computed from it
	// (placeholders unresolved, so that no secret enters the hash and workers may resolve
	// them from their own stores).
	Raw []byte
}

// Name is the pipeline's pipeline.name.
func (p Pipeline) Name() string { return p.Def.Pipeline.Name }

// Set is the pipelines of a group, sorted by name: the i-th one is partition i of the
// group's topic.
type Set struct {
	pipelines []Pipeline
	index     map[string]int
	hash      string
}

// NewSet checks the pipelines for a group and returns them as a set: names unique, every
// sink exactly-once (its transactional id fences a previous owner), and one Kafka cluster
// (the same properties.bootstrap.servers) for all.
func NewSet(ps []Pipeline) (*Set, error) {
	if len(ps) == 0 {
		return nil, errors.New("fleet: no pipeline given")
	}
	ps = slices.Clone(ps)
	slices.SortFunc(ps, func(a, b Pipeline) int { return strings.Compare(a.Name(), b.Name()) })
	s := &Set{pipelines: ps, index: map[string]int{}}
	var errs []error
	h := sha256.New()
	for i, p := range ps {
		name := p.Name()
		if j, dup := s.index[name]; dup {
			errs = append(errs, fmt.Errorf("%s and %s: both are pipeline %q; a pipeline name must be unique in a group",
				ps[j].Def.File, p.Def.File, name))
			continue
		}
		s.index[name] = i
		if g := p.Def.Sink.DeliveryGuarantee; g != pipeline.DeliveryExactlyOnce {
			errs = append(errs, fmt.Errorf("%s: pipeline %q: sink.delivery-guarantee is %s, but serve runs exactly-once pipelines only: "+
				"a pipeline that moves to another worker must fence its previous owner, which only the transactional id of "+
				"exactly-once does (docs/scaling.md); set sink.delivery-guarantee: exactly-once, or run it with ingest apply",
				p.Def.File, name, g))
		}
		if b, b0 := p.Def.Sink.BootstrapServers, ps[0].Def.Sink.BootstrapServers; b != b0 {
			errs = append(errs, fmt.Errorf("%s: pipeline %q writes to %q, but pipeline %q to %q: the pipelines of a group "+
				"must write to one Kafka cluster, which coordinates the group", p.Def.File, name, b, ps[0].Name(), b0))
		}
		sum := sha256.Sum256(p.Raw)
		fmt.Fprintf(h, "%s\x00%x\n", name, sum)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s.hash = hex.EncodeToString(h.Sum(nil))
	return s, nil
}

// Len is the number of pipelines.
func (s *Set) Len() int { return len(s.pipelines) }

// At returns the i-th pipeline (partition i).
func (s *Set) At(i int) Pipeline { return s.pipelines[i] }

// Names returns the pipeline names in order.
func (s *Set) Names() []string {
	out := make([]string, len(s.pipelines))
	for i, p := range s.pipelines {
		out[i] = p.Name()
	}
	return out
}

// Hash identifies the set: the SHA-256 of every pipeline's name and file content. Two
// workers with the same hash run the same pipelines from the same files.
func (s *Set) Hash() string { return s.hash }

// Short is the first 12 hex digits of the hash, for messages.
func (s *Set) Short() string { return s.hash[:12] }
