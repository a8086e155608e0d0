package fleet

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// GroupState is a group as the coordinator describes it (`ingest status --group`).
type GroupState struct {
	Group    string        `json:"group"`
	State    string        `json:"state"` // Stable, PreparingRebalance, CompletingRebalance, Empty, Dead
	Protocol string        `json:"protocol"`
	Members  []MemberState `json:"members"`
}

// MemberState is one worker of a group.
type MemberState struct {
	Member    string   `json:"member"`
	ClientID  string   `json:"client_id"`
	Host      string   `json:"host"`
	Status    string   `json:"status,omitempty"` // the address of its /status page
	Set       string   `json:"set"`
	Total     int      `json:"pipelines_total"`
	Pipelines []string `json:"pipelines"`
	Refused   string   `json:"refused,omitempty"`
}

// Describe describes the group from the coordinator (DescribeGroups), decoding each
// member's fleet metadata and assignment.
func Describe(ctx context.Context, cl *kgo.Client, group string) (*GroupState, error) {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{group}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("fleet: describe group %s: %w", group, err)
	}
	if len(resp.Groups) != 1 {
		return nil, fmt.Errorf("fleet: describe group %s: %d groups in the answer", group, len(resp.Groups))
	}
	g := resp.Groups[0]
	if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
		return nil, fmt.Errorf("fleet: describe group %s: %w", group, err)
	}
	out := &GroupState{Group: group, State: g.State, Protocol: g.Protocol, Members: []MemberState{}}
	if g.State == "Dead" {
		return out, nil
	}
	if g.Protocol != "" && g.Protocol != ProtocolName {
		return nil, fmt.Errorf("fleet: group %s uses protocol %q, not %s: it is not a group of ingest serve", group, g.Protocol, ProtocolName)
	}
	for _, m := range g.Members {
		ms := MemberState{Member: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost, Pipelines: []string{}}
		if meta, err := DecodeMember(m.ProtocolMetadata); err == nil {
			ms.Set, ms.Total, ms.Status = meta.Set, meta.Pipelines, meta.Status
		}
		if a, err := DecodeAssignment(m.MemberAssignment); err == nil {
			ms.Refused = a.Refused
			if a.Pipelines != nil {
				ms.Pipelines = a.Pipelines
			}
		}
		out.Members = append(out.Members, ms)
	}
	sort.Slice(out.Members, func(i, j int) bool { return out.Members[i].Member < out.Members[j].Member })
	return out, nil
}

// WriteText writes the group as a table of workers and their pipelines.
func (g *GroupState) WriteText(w io.Writer) error {
	n := 0
	for _, m := range g.Members {
		n += len(m.Pipelines)
	}
	if _, err := fmt.Fprintf(w, "group %s: %s, %d workers, %d pipelines assigned\n", g.Group, g.State, len(g.Members), n); err != nil {
		return err
	}
	for _, m := range g.Members {
		status := m.Status
		if status == "" {
			status = "-"
		}
		fmt.Fprintf(w, "\n%s  host %s  status %s  set %s (%d pipelines)\n", m.Member, m.Host, status, short(m.Set), m.Total)
		if m.Refused != "" {
			fmt.Fprintf(w, "  REFUSED: %s\n", m.Refused)
		}
		if len(m.Pipelines) > 0 {
			fmt.Fprintf(w, "  %d: %s\n", len(m.Pipelines), strings.Join(m.Pipelines, ", "))
		}
	}
	return nil
}
