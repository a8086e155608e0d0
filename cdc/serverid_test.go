package cdc

import (
	"reflect"
	"strings"
	"testing"
)

func TestServerIdentityText(t *testing.T) {
	for _, id := range []ServerIdentity{
		{ServerID: 1},
		{ServerID: 1, Domains: []uint32{0, 7}},
		{ServerID: 42, UUID: "3e11fa47-71ca-11e1-9e33-c80aa9429562"},
	} {
		got, err := ParseServerIdentity(id.String())
		if err != nil || !reflect.DeepEqual(got, id) {
			t.Errorf("ParseServerIdentity(%q) = %+v, %v; want %+v", id.String(), got, err, id)
		}
	}
	for _, bad := range []string{"", "server_id=x", "server_id=1;color=red", "server_id=1;gtid_domains=a"} {
		if _, err := ParseServerIdentity(bad); err == nil {
			t.Errorf("ParseServerIdentity(%q) accepted", bad)
		}
	}
}

func TestCheckServerIdentity(t *testing.T) {
	tests := []struct {
		name, stored string
		now          ServerIdentity
		want         string // "" for no problem
	}{
		{"same", "server_id=1;gtid_domains=0", ServerIdentity{ServerID: 1, Domains: []uint32{0}}, ""},
		{"a new domain", "server_id=1;gtid_domains=0", ServerIdentity{ServerID: 1, Domains: []uint32{0, 3}}, ""},
		{"uuid unknown then", "server_id=1", ServerIdentity{ServerID: 1, UUID: "u2"}, ""},
		{"other server_id", "server_id=1", ServerIdentity{ServerID: 2}, "server_id was 1, is 2"},
		{"other uuid", "server_id=1;server_uuid=u1", ServerIdentity{ServerID: 1, UUID: "u2"}, "server_uuid was u1, is u2"},
		{"domain gone", "server_id=1;gtid_domains=0,7", ServerIdentity{ServerID: 1, Domains: []uint32{0}}, "GTID domain 7"},
	}
	for _, tc := range tests {
		problems := checkServerIdentity(tc.stored, tc.now)
		switch {
		case tc.want == "" && len(problems) > 0:
			t.Errorf("%s: %v", tc.name, problems)
		case tc.want != "" && (len(problems) != 1 || problems[0].Severity != Error ||
			!strings.Contains(problems[0].Message, tc.want) || !strings.Contains(problems[0].Message, tc.stored) ||
			!strings.Contains(problems[0].Message, "re-snapshot")):
			t.Errorf("%s: %v; want one error naming %q, the stored identity and the choices", tc.name, problems, tc.want)
		}
	}
}
