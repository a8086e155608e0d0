package fleet

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/ingestkit/ingest/pipeline"
)

const testTopic = TopicPrefix + "g"

func testDef(name string, g pipeline.DeliveryGuarantee, bootstrap string) *pipeline.Definition {
	def := &pipeline.Definition{File: name + ".yaml"}
	def.Pipeline.Name = name
	def.Sink.DeliveryGuarantee = g
	def.Sink.BootstrapServers = bootstrap
	return def
}

// testSet is a set of n exactly-once pipelines p00…; variant changes the files' content.
func testSet(t *testing.T, n int, variant string) *Set {
	t.Helper()
	var ps []Pipeline
	for i := range n {
		name := fmt.Sprintf("p%02d", i)
		ps = append(ps, Pipeline{Def: testDef(name, pipeline.DeliveryExactlyOnce, "k:9092"), Raw: []byte(name + variant)})
	}
	s, err := NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type testMember struct {
	id  string
	set *Set
}

// balance runs one generation: every member joins with its balancer's metadata, the first
// member leads, and each member parses its assignment. It returns each member's pipelines
// and refusal.
func balance(t *testing.T, ms []testMember, current map[string][]int32) (map[string][]string, map[string]string) {
	t.Helper()
	bals := map[string]*Balancer{}
	refusals := map[string]string{}
	var members []kmsg.JoinGroupResponseMember
	for _, m := range ms {
		id := m.id
		b := NewBalancer(m.set, testTopic, "", func(r string) { refusals[id] = r })
		b.self = func() string { return id }
		bals[id] = b
		var own map[string][]int32
		if ps, ok := current[id]; ok {
			own = map[string][]int32{testTopic: ps}
		}
		members = append(members, kmsg.JoinGroupResponseMember{MemberID: id,
			ProtocolMetadata: b.JoinGroupMetadata([]string{testTopic}, own, 1)})
	}
	leader := bals[ms[0].id]
	mb, topics, err := leader.MemberBalancer(members)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := topics[testTopic]; !ok {
		t.Fatalf("topics %v: want %s", topics, testTopic)
	}
	into, err := mb.(*memberBalancer).BalanceOrError(map[string]int32{testTopic: 64})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, a := range into.IntoSyncAssignment() {
		b := bals[a.MemberID]
		parts, err := b.ParseSyncAssignment(a.MemberAssignment)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("%s: %v", a.MemberID, err)
			}
			continue
		}
		names := []string{}
		for _, p := range parts[testTopic] {
			names = append(names, b.set.At(int(p)).Name())
		}
		slices.Sort(names)
		dec, err := DecodeAssignment(a.MemberAssignment)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(dec.Pipelines, names) && !(len(dec.Pipelines) == 0 && len(names) == 0) {
			t.Errorf("%s: the assignment names %v, its partitions %v", a.MemberID, dec.Pipelines, names)
		}
		got[a.MemberID] = names
	}
	return got, refusals
}

func TestBalancer(t *testing.T) {
	same, other := testSet(t, 12, ""), testSet(t, 12, "changed")
	tests := []struct {
		name    string
		members []testMember
		// owners are the members that must share all 12 pipelines; refused those refused.
		owners, refused []string
	}{
		{"three equal workers", []testMember{{"a", same}, {"b", same}, {"c", same}}, []string{"a", "b", "c"}, nil},
		{"a worker with another set is refused", []testMember{{"a", same}, {"b", other}, {"c", same}}, []string{"a", "c"}, []string{"b"}},
		{"a leader in the minority refuses itself", []testMember{{"a", other}, {"b", same}, {"c", same}}, nil, []string{"a"}},
		{"a tie goes to the leader's set", []testMember{{"a", same}, {"b", other}}, []string{"a"}, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, refusals := balance(t, tt.members, nil)
			owner := map[string]string{}
			for id, names := range got {
				for _, n := range names {
					if prev, dup := owner[n]; dup {
						t.Errorf("%s is assigned to %s and %s", n, prev, id)
					}
					owner[n] = id
				}
				if len(names) > 0 && !slices.Contains(tt.owners, id) {
					t.Errorf("%s got %v; want nothing", id, names)
				}
			}
			if tt.owners != nil {
				if len(owner) != 12 {
					t.Errorf("%d pipelines assigned, want 12: %v", len(owner), got)
				}
				for _, id := range tt.owners {
					if n := len(got[id]); n < 12/len(tt.owners) {
						t.Errorf("%s has %d pipelines; want an even share of 12", id, n)
					}
				}
			}
			var ids []string
			for id, reason := range refusals {
				ids = append(ids, id)
				if !strings.Contains(reason, "differs from the group's") {
					t.Errorf("refusal of %s: %q", id, reason)
				}
			}
			slices.Sort(ids)
			if !slices.Equal(ids, tt.refused) {
				t.Errorf("refused %v, want %v", ids, tt.refused)
			}
		})
	}
}

// TestBalancerSticky: a worker joining takes only its share; the others keep the rest.
func TestBalancerSticky(t *testing.T) {
	set := testSet(t, 12, "")
	first, _ := balance(t, []testMember{{"a", set}, {"b", set}}, nil)
	current := map[string][]int32{}
	for id, names := range first {
		for _, n := range names {
			current[id] = append(current[id], int32(set.index[n]))
		}
	}
	// Cooperative: in the first generation with c, a and b give up what moves to c but c gets
	// nothing yet; nothing a or b keep moves between them.
	second, _ := balance(t, []testMember{{"a", set}, {"b", set}, {"c", set}}, current)
	for _, id := range []string{"a", "b"} {
		for _, n := range second[id] {
			if !slices.Contains(first[id], n) {
				t.Errorf("%s got %s, which it did not own: a join must not move pipelines between the others", id, n)
			}
		}
		if len(second[id]) != 4 {
			t.Errorf("%s keeps %d pipelines, want 4 (12 over 3 workers)", id, len(second[id]))
		}
	}
}

func TestNewSet(t *testing.T) {
	eo, alo := pipeline.DeliveryExactlyOnce, pipeline.DeliveryAtLeastOnce
	tests := []struct {
		name string
		defs []*pipeline.Definition
		want string // in the error; "" for none
	}{
		{"ok", []*pipeline.Definition{testDef("b", eo, "k"), testDef("a", eo, "k")}, ""},
		{"at-least-once", []*pipeline.Definition{testDef("a", alo, "k")}, "serve runs exactly-once pipelines only"},
		{"same name", []*pipeline.Definition{testDef("a", eo, "k"), testDef("a", eo, "k")}, "must be unique"},
		{"two clusters", []*pipeline.Definition{testDef("a", eo, "k1"), testDef("b", eo, "k2")}, "one Kafka cluster"},
		{"none", nil, "no pipeline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ps []Pipeline
			for _, d := range tt.defs {
				ps = append(ps, Pipeline{Def: d, Raw: []byte(d.Pipeline.Name)})
			}
			s, err := NewSet(ps)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := s.Names(); !slices.Equal(got, []string{"a", "b"}) {
					t.Errorf("names %v, want sorted", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one with %q", err, tt.want)
			}
		})
	}
}

func TestSetHash(t *testing.T) {
	a, b, c := testSet(t, 3, ""), testSet(t, 3, ""), testSet(t, 3, "x")
	if a.Hash() != b.Hash() {
		t.Error("the same files hash differently")
	}
	if a.Hash() == c.Hash() {
		t.Error("other files hash the same")
	}
	if d := testSet(t, 4, ""); d.Hash() == a.Hash() {
		t.Error("a set with one more pipeline hashes the same")
	}
}
