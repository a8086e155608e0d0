package aliyuntest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var nonce atomic.Int64

// params returns the common parameters of a request for action.
func params(action, version, akid string) url.Values {
	p := url.Values{}
	p.Set("Action", action)
	p.Set("Version", version)
	p.Set("Format", "JSON")
	p.Set("RegionId", RegionID)
	p.Set("AccessKeyId", akid)
	p.Set("SignatureMethod", "HMAC-SHA1")
	p.Set("SignatureVersion", "1.0")
	p.Set("SignatureType", "")
	p.Set("SignatureNonce", "n"+strconv.FormatInt(nonce.Add(1), 10))
	p.Set("Timestamp", time.Now().UTC().Format("2006-01-02T15:04:05Z"))
	return p
}

// send signs p with secret (unless Signature is set) and POSTs it.
func send(t *testing.T, s *Server, p url.Values, secret string) (int, map[string]any) {
	t.Helper()
	if p.Get("Signature") == "" {
		p.Set("Signature", Sign(StringToSign("POST", p), secret))
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: s.TLSConfig()}}
	resp, err := c.Post(s.URL()+"/?"+p.Encode(), "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("body %q: %v", b, err)
	}
	return resp.StatusCode, body
}

func TestServerChecks(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.AddCredential("STSID", "STSSECRET", "TOKEN")

	tests := []struct {
		name     string
		params   func() url.Values
		secret   string
		wantHTTP int
		wantCode string
	}{
		{"valid", func() url.Values {
			p := params("GetTopicList", "2019-09-16", AccessKeyID)
			p.Set("InstanceId", InstanceID)
			return p
		}, AccessKeySecret, 200, "200"},
		{"unknown access key", func() url.Values {
			return params("GetTopicList", "2019-09-16", "NOPE")
		}, AccessKeySecret, 404, "InvalidAccessKeyId.NotFound"},
		{"wrong secret", func() url.Values {
			return params("GetTopicList", "2019-09-16", AccessKeyID)
		}, "wrong", 400, "SignatureDoesNotMatch"},
		{"tampered after signing", func() url.Values {
			p := params("GetTopicList", "2019-09-16", AccessKeyID)
			p.Set("Signature", Sign(StringToSign("POST", p), AccessKeySecret))
			p.Set("InstanceId", "other")
			return p
		}, AccessKeySecret, 400, "SignatureDoesNotMatch"},
		{"missing sts token", func() url.Values {
			return params("GetTopicList", "2019-09-16", "STSID")
		}, "STSSECRET", 400, "InvalidSecurityToken.Mismatch"},
		{"sts token", func() url.Values {
			p := params("GetTopicList", "2019-09-16", "STSID")
			p.Set("SecurityToken", "TOKEN")
			p.Set("InstanceId", InstanceID)
			return p
		}, "STSSECRET", 200, "200"},
		{"expired timestamp", func() url.Values {
			p := params("GetTopicList", "2019-09-16", AccessKeyID)
			p.Set("Timestamp", time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04:05Z"))
			return p
		}, AccessKeySecret, 400, "InvalidTimeStamp.Expired"},
		{"wrong version", func() url.Values {
			return params("GetSecretValue", "2019-09-16", AccessKeyID)
		}, AccessKeySecret, 400, "InvalidVersion"},
		{"unknown action", func() url.Values {
			return params("DeleteTopic", "2019-09-16", AccessKeyID)
		}, AccessKeySecret, 404, "InvalidAction.NotFound"},
		{"missing signature method", func() url.Values {
			p := params("GetTopicList", "2019-09-16", AccessKeyID)
			p.Del("SignatureMethod")
			return p
		}, AccessKeySecret, 400, "MissingSignatureMethod"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := send(t, s, tc.params(), tc.secret)
			if status != tc.wantHTTP || str(body["Code"]) != tc.wantCode {
				t.Fatalf("got HTTP %d %v, want HTTP %d %s", status, body, tc.wantHTTP, tc.wantCode)
			}
			if tc.wantHTTP != 200 && (body["RequestId"] == nil || body["HostId"] == nil) {
				t.Errorf("error envelope lacks RequestId/HostId: %v", body)
			}
		})
	}
}

func str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

func TestServerRejectsReusedNonce(t *testing.T) {
	s := NewServer()
	defer s.Close()
	p := params("GetTopicList", "2019-09-16", AccessKeyID)
	p.Set("InstanceId", InstanceID)
	if st, body := send(t, s, p, AccessKeySecret); st != 200 {
		t.Fatalf("first: %d %v", st, body)
	}
	if st, body := send(t, s, p, AccessKeySecret); st != 400 || body["Code"] != "SignatureNonceUsed" {
		t.Fatalf("replay: %d %v", st, body)
	}
}

func TestServerMismatchMessageQuotesStringToSign(t *testing.T) {
	s := NewServer()
	defer s.Close()
	p := params("GetTopicList", "2019-09-16", AccessKeyID)
	_, body := send(t, s, p, "wrong")
	msg, _ := body["Message"].(string)
	if !strings.Contains(msg, "server string to sign is:POST&%2F&AccessKeyId%3D"+AccessKeyID) {
		t.Fatalf("message %q does not quote the string-to-sign", msg)
	}
}

func TestServerTopicLifecycle(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.SetReadyAfter(2)
	create := func(topic string) (int, map[string]any) {
		p := params("CreateTopic", "2019-09-16", AccessKeyID)
		p.Set("InstanceId", InstanceID)
		p.Set("Topic", topic)
		p.Set("Remark", "r-1")
		p.Set("PartitionNum", "3")
		p.Set("LocalTopic", "true")
		p.Set("CompactTopic", "true")
		return send(t, s, p, AccessKeySecret)
	}
	if st, body := create("orders"); st != 200 || body["Success"] != true || body["Code"] != float64(200) {
		t.Fatalf("create: %d %v", st, body)
	}
	if st, body := create("orders"); st != 400 || body["Code"] != "BIZ_TOPIC_ALREADY_EXISTS" {
		t.Fatalf("create again: %d %v", st, body)
	}
	poll := func() int {
		p := params("GetTopicStatus", "2019-09-16", AccessKeyID)
		p.Set("InstanceId", InstanceID)
		p.Set("Topic", "orders")
		st, body := send(t, s, p, AccessKeySecret)
		if st != 200 {
			t.Fatalf("status: %d %v", st, body)
		}
		ot := body["TopicStatus"].(map[string]any)["OffsetTable"].(map[string]any)["OffsetTable"].([]any)
		return len(ot)
	}
	for i, want := range []int{0, 0, 3, 3} {
		if got := poll(); got != want {
			t.Fatalf("poll %d: %d partitions listed, want %d", i+1, got, want)
		}
	}
	top, ok := s.Topic("orders")
	if !ok || top.Partitions != 3 || !top.Compact || !top.Local || top.Remark != "r-1" || !top.Ready || top.StatusPolls != 4 {
		t.Fatalf("recorded topic %+v", top)
	}
}

func TestServerInject(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.Inject("GetTopicList", 2, ThrottlingUser())
	s.Inject("", 1, NumericCode(400))
	list := func() (int, map[string]any) {
		p := params("GetTopicList", "2019-09-16", AccessKeyID)
		p.Set("InstanceId", InstanceID)
		return send(t, s, p, AccessKeySecret)
	}
	var got []string
	for range 4 {
		st, body := list()
		got = append(got, strconv.Itoa(st)+" "+str(body["Code"]))
	}
	want := []string{"400 Throttling.User", "400 Throttling.User", "400 400", "200 200"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("answers %v, want %v", got, want)
	}
	if n := s.CallCount("GetTopicList"); n != 4 {
		t.Fatalf("CallCount = %d", n)
	}
}

func TestServerOnCreate(t *testing.T) {
	s := NewServer()
	defer s.Close()
	type created struct {
		name       string
		partitions int
		compact    bool
	}
	var got []created
	s.SetOnCreate(func(name string, partitions int, compact bool) error {
		got = append(got, created{name, partitions, compact})
		switch name {
		case "fails":
			return errors.New("broker said no")
		case "raced":
			// The hook runs without the lock: another client creates the
			// topic meanwhile.
			s.AddTopic("raced", 1)
		}
		return nil
	})
	create := func(topic string, compact bool) (int, map[string]any) {
		p := params("CreateTopic", "2019-09-16", AccessKeyID)
		p.Set("InstanceId", InstanceID)
		p.Set("Topic", topic)
		p.Set("Remark", "r-1")
		p.Set("PartitionNum", "6")
		if compact {
			p.Set("LocalTopic", "true")
			p.Set("CompactTopic", "true")
		}
		return send(t, s, p, AccessKeySecret)
	}
	if st, body := create("orders", true); st != 200 || body["Success"] != true {
		t.Fatalf("create: %d %v", st, body)
	}
	if st, body := create("orders", true); st != 400 || body["Code"] != "BIZ_TOPIC_ALREADY_EXISTS" {
		t.Fatalf("create again: %d %v", st, body)
	}
	if st, body := create("fails", false); st != 500 || body["Code"] != "ONS_SYSTEM_ERROR" ||
		!strings.Contains(str(body["Message"]), "broker said no") {
		t.Fatalf("failing hook: %d %v", st, body)
	}
	if _, ok := s.Topic("fails"); ok {
		t.Error("a topic whose hook failed was recorded")
	}
	if st, body := create("raced", false); st != 400 || body["Code"] != "BIZ_TOPIC_ALREADY_EXISTS" {
		t.Fatalf("raced: %d %v", st, body)
	}
	s.Inject("CreateTopic", 1, ThrottlingUser())
	if st, _ := create("throttled", false); st != 400 {
		t.Fatalf("injected answer: HTTP %d", st)
	}
	want := []created{{"orders", 6, true}, {"fails", 6, false}, {"raced", 6, false}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("hook calls %v, want %v (none for an existing topic or an injected answer)", got, want)
	}
}
