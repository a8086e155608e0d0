package fleet

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ProtocolName is the group protocol of the workers' balancer. A consumer of another
// protocol cannot join the group (the broker refuses it: no common protocol).
const ProtocolName = "ingest-fleet-v1"

// MemberMeta is what a worker tells the group when it joins, ahead of the cooperative-sticky
// metadata.
type MemberMeta struct {
	// Set is the hash of the worker's pipeline set ([Set.Hash]).
	Set string `json:"set"`
	// Pipelines is the number of pipelines in it.
	Pipelines int `json:"pipelines"`
	// Status is the address of the worker's /status page, "" when it serves none.
	Status string `json:"status,omitempty"`
}

// Assignment is what the leader tells a member, ahead of the cooperative-sticky assignment.
type Assignment struct {
	// Pipelines are the names of the pipelines assigned to the member.
	Pipelines []string `json:"pipelines,omitempty"`
	// Refused, when set, says why the member may not take part: its set differs from the
	// group's. It then has no pipeline.
	Refused string `json:"refused,omitempty"`
}

// ErrRefused is the error of a worker that the group refused (see [Assignment.Refused]).
var ErrRefused = errors.New("fleet: refused by the group")

// Balancer is the workers' kgo.GroupBalancer: franz-go's cooperative-sticky balancer over
// the partitions of the group's topic, with [MemberMeta] prefixed to the user data of each
// member's metadata and [Assignment] to that of each assignment (both stay valid consumer
// protocol messages, which the group coordinator reads). The leader balances among the members whose set is
// the group's (the one most members have; on a tie, the leader's own), and refuses the
// others. A leader whose own set is not the group's assigns nothing and refuses itself, so
// that it exits and a member of the group's set leads.
type Balancer struct {
	set   *Set
	topic string
	meta  MemberMeta
	inner kgo.GroupBalancer
	// refused is called with the reason when this worker's assignment refuses it.
	refused func(string)
	// self returns this worker's member id (set by the worker once its client exists).
	self func() string
}

// NewBalancer returns the balancer of a worker with set, for the group topic topic.
// refused is told when the group refuses this worker.
func NewBalancer(set *Set, topic, statusAddr string, refused func(reason string)) *Balancer {
	return &Balancer{set: set, topic: topic, inner: kgo.CooperativeStickyBalancer(), refused: refused,
		meta: MemberMeta{Set: set.Hash(), Pipelines: set.Len(), Status: statusAddr}}
}

// ProtocolName implements kgo.GroupBalancer.
func (*Balancer) ProtocolName() string { return ProtocolName }

// IsCooperative implements kgo.GroupBalancer: a member keeps what it is not asked to give up.
func (*Balancer) IsCooperative() bool { return true }

// JoinGroupMetadata implements kgo.GroupBalancer.
func (b *Balancer) JoinGroupMetadata(topics []string, current map[string][]int32, generation int32) []byte {
	inner := b.inner.JoinGroupMetadata(topics, current, generation)
	var m kmsg.ConsumerMemberMetadata
	if err := m.ReadFrom(inner); err != nil {
		panic(fmt.Sprintf("fleet: franz-go's own member metadata does not decode: %v", err))
	}
	m.UserData = prefix(b.meta, m.UserData)
	return m.AppendTo(nil)
}

// ParseSyncAssignment implements kgo.GroupBalancer. A refusal is reported to the worker and
// returned as an error wrapping [ErrRefused] (the group then has the member retry; the worker
// exits).
func (b *Balancer) ParseSyncAssignment(assignment []byte) (map[string][]int32, error) {
	a, inner, err := splitAssignment(assignment)
	if err != nil {
		return nil, fmt.Errorf("fleet: assignment: %w", err)
	}
	if a.Refused != "" {
		if b.refused != nil {
			b.refused(a.Refused)
		}
		return nil, fmt.Errorf("%w: %s", ErrRefused, a.Refused)
	}
	return b.inner.ParseSyncAssignment(inner)
}

// MemberBalancer implements kgo.GroupBalancer.
func (b *Balancer) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	metas := make([]MemberMeta, len(members))
	counts := map[string]int{}
	for i, m := range members {
		meta, inner, err := splitMember(m.ProtocolMetadata)
		metas[i] = meta
		if err != nil {
			metas[i] = MemberMeta{} // refused below: no set
			continue
		}
		members[i].ProtocolMetadata = inner
		counts[metas[i].Set]++
	}
	group := groupSet(counts, b.meta.Set)
	mb := &memberBalancer{b: b, refused: map[string]string{}, group: group}
	var ok []kmsg.JoinGroupResponseMember
	for i, m := range members {
		switch {
		case metas[i].Set == "":
			mb.refused[m.MemberID] = "its group metadata is not ingest-fleet's (an ingest of another version?)"
		case group != b.meta.Set:
			// This leader is in the minority: refuse itself, give nothing to the others.
			if b.isSelf(m.MemberID, metas[i]) {
				mb.refused[m.MemberID] = b.disagree(metas[i], group, counts)
			} else {
				mb.idle = append(mb.idle, m.MemberID)
			}
		case metas[i].Set != group:
			mb.refused[m.MemberID] = b.disagree(metas[i], group, counts)
		default:
			ok = append(ok, m)
		}
	}
	if len(ok) == 0 {
		return mb, map[string]struct{}{b.topic: {}}, nil
	}
	inner, topics, err := b.inner.MemberBalancer(ok)
	if err != nil {
		return nil, nil, err
	}
	mb.inner = inner
	return mb, topics, nil
}

// isSelf reports whether the member is the leader itself: by its member id, or, when that is
// not known, by its exact metadata.
func (b *Balancer) isSelf(id string, m MemberMeta) bool {
	if b.self != nil {
		if me := b.self(); me != "" {
			return id == me
		}
	}
	return m == b.meta
}

// disagree is the refusal of a member whose set is not the group's.
func (b *Balancer) disagree(m MemberMeta, group string, counts map[string]int) string {
	return fmt.Sprintf("this worker's pipeline set %s (%d pipelines) differs from the group's, set %s (%d of %d workers): "+
		"every worker of a group must be given the same pipeline files (same names, same content); "+
		"compare `ingest serve --print-set` on both machines", short(m.Set), m.Pipelines, short(group), counts[group], total(counts))
}

// groupSet is the group's set: the one most members have; on a tie, mine.
func groupSet(counts map[string]int, mine string) string {
	best, n := mine, counts[mine]
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != "" && counts[k] > n {
			best, n = k, counts[k]
		}
	}
	return best
}

func total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// memberBalancer is the leader's balance of one generation.
type memberBalancer struct {
	b       *Balancer
	inner   kgo.GroupMemberBalancer // nil: no member may have pipelines
	group   string
	refused map[string]string // member id → reason
	idle    []string          // members that get nothing this time
}

// Balance implements kgo.GroupMemberBalancer.
func (mb *memberBalancer) Balance(topics map[string]int32) kgo.IntoSyncAssignment {
	into, err := mb.BalanceOrError(topics)
	if err != nil {
		return syncAssignment(nil)
	}
	return into
}

// BalanceOrError implements kgo.GroupMemberBalancerOrError. The topic's partition count is
// taken as the set's size: partitions beyond it (a set that shrank) are not assigned.
func (mb *memberBalancer) BalanceOrError(topics map[string]int32) (kgo.IntoSyncAssignment, error) {
	var out syncAssignment
	if mb.inner != nil {
		n := map[string]int32{mb.b.topic: int32(mb.b.set.Len())}
		var into kgo.IntoSyncAssignment
		if eb, ok := mb.inner.(kgo.GroupMemberBalancerOrError); ok {
			var err error
			if into, err = eb.BalanceOrError(n); err != nil {
				return nil, err
			}
		} else {
			into = mb.inner.Balance(n)
		}
		for _, a := range into.IntoSyncAssignment() {
			var ca kmsg.ConsumerMemberAssignment
			if err := ca.ReadFrom(a.MemberAssignment); err != nil {
				return nil, fmt.Errorf("fleet: read the assignment of %s: %w", a.MemberID, err)
			}
			var names []string
			for _, t := range ca.Topics {
				if t.Topic != mb.b.topic {
					continue
				}
				for _, p := range t.Partitions {
					if int(p) < mb.b.set.Len() {
						names = append(names, mb.b.set.At(int(p)).Name())
					}
				}
			}
			sort.Strings(names)
			ca.UserData = prefix(Assignment{Pipelines: names}, ca.UserData)
			out = append(out, kmsg.SyncGroupRequestGroupAssignment{MemberID: a.MemberID, MemberAssignment: ca.AppendTo(nil)})
		}
	}
	empty := func(a Assignment) []byte {
		ca := kmsg.NewConsumerMemberAssignment()
		ca.UserData = prefix(a, nil)
		return ca.AppendTo(nil)
	}
	for _, id := range mb.idle {
		out = append(out, kmsg.SyncGroupRequestGroupAssignment{MemberID: id, MemberAssignment: empty(Assignment{})})
	}
	ids := make([]string, 0, len(mb.refused))
	for id := range mb.refused {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		out = append(out, kmsg.SyncGroupRequestGroupAssignment{MemberID: id,
			MemberAssignment: empty(Assignment{Refused: mb.refused[id]})})
	}
	return out, nil
}

type syncAssignment []kmsg.SyncGroupRequestGroupAssignment

func (s syncAssignment) IntoSyncAssignment() []kmsg.SyncGroupRequestGroupAssignment { return s }

// prefix returns v's JSON, length-prefixed (uvarint), followed by inner.
func prefix(v any, inner []byte) []byte {
	j, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs of strings and ints
	}
	out := binary.AppendUvarint(nil, uint64(len(j)))
	out = append(out, j...)
	return append(out, inner...)
}

// unprefix decodes what prefix encoded into v and returns the rest.
func unprefix(b []byte, v any) ([]byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, errors.New("no ingest-fleet header")
	}
	if err := json.Unmarshal(b[k:k+int(n)], v); err != nil {
		return nil, fmt.Errorf("ingest-fleet header: %w", err)
	}
	return b[k+int(n):], nil
}

// splitMember splits a member's metadata into its [MemberMeta] and the inner balancer's
// metadata.
func splitMember(b []byte) (MemberMeta, []byte, error) {
	var meta MemberMeta
	var m kmsg.ConsumerMemberMetadata
	if err := m.ReadFrom(b); err != nil {
		return meta, nil, err
	}
	rest, err := unprefix(m.UserData, &meta)
	if err != nil {
		return meta, nil, err
	}
	m.UserData = rest
	return meta, m.AppendTo(nil), nil
}

// splitAssignment splits an assignment into its [Assignment] and the inner balancer's
// assignment.
func splitAssignment(b []byte) (Assignment, []byte, error) {
	var a Assignment
	if len(b) == 0 {
		return a, b, nil
	}
	var ca kmsg.ConsumerMemberAssignment
	if err := ca.ReadFrom(b); err != nil {
		return a, nil, err
	}
	rest, err := unprefix(ca.UserData, &a)
	if err != nil {
		return a, nil, err
	}
	ca.UserData = rest
	return a, ca.AppendTo(nil), nil
}

// DecodeMember decodes a member's metadata as the group holds it ([MemberMeta]).
func DecodeMember(b []byte) (MemberMeta, error) {
	m, _, err := splitMember(b)
	return m, err
}

// DecodeAssignment decodes a member's assignment as the group holds it ([Assignment]).
func DecodeAssignment(b []byte) (Assignment, error) {
	a, _, err := splitAssignment(b)
	return a, err
}
