package aliyun

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestkit/ingest/aliyun/aliyuntest"
)

func TestCreateTopicEnvelopes(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(s *aliyuntest.Server)
		compact   bool
		wantErr   bool
		wantCode  string
		wantRetry bool
		wantHTTP  int
		wantCalls int
		wantText  []string
	}{
		{name: "created", wantCalls: 1},
		{name: "created compact on local storage", compact: true, wantCalls: 1},
		{
			name:      "already exists on the server counts as success",
			setup:     func(s *aliyuntest.Server) { s.AddTopic("orders", 3) },
			wantCalls: 1,
		},
		{
			name:      "injected already exists counts as success",
			setup:     func(s *aliyuntest.Server) { s.Inject("CreateTopic", 1, aliyuntest.AlreadyExists()) },
			wantCalls: 1,
		},
		{
			name:      "Throttling.User twice, then success",
			setup:     func(s *aliyuntest.Server) { s.Inject("CreateTopic", 2, aliyuntest.ThrottlingUser()) },
			wantCalls: 3,
		},
		{
			name:      "HTTP 503 once, then success",
			setup:     func(s *aliyuntest.Server) { s.Inject("CreateTopic", 1, aliyuntest.ServiceUnavailable()) },
			wantCalls: 2,
		},
		{
			name: "HTTP 429 with a plain-text body, then success",
			setup: func(s *aliyuntest.Server) {
				s.Inject("CreateTopic", 1, aliyuntest.Response{Status: 429, RawBody: "Too Many Requests"})
			},
			wantCalls: 2,
		},
		{
			name: "bad signature is fatal and names the fix",
			setup: func(s *aliyuntest.Server) {
				s.Inject("CreateTopic", aliyuntest.Forever, aliyuntest.SignatureMismatch())
			},
			wantErr:   true,
			wantCode:  "SignatureDoesNotMatch",
			wantHTTP:  400,
			wantCalls: 1,
			wantText:  []string{"check aliyun.kafka.accessKeyId/accessKeySecret", "alikafka CreateTopic", "request id FAKE-"},
		},
		{
			name: "Success:false in HTTP 200 is an error",
			setup: func(s *aliyuntest.Server) {
				s.Inject("CreateTopic", 1, aliyuntest.SuccessFalse("BIZ_PARTITION_QUOTA_EXCEEDED", "partition quota exhausted"))
			},
			wantErr:   true,
			wantCode:  "BIZ_PARTITION_QUOTA_EXCEEDED",
			wantHTTP:  200,
			wantCalls: 1,
			wantText:  []string{"partition quota exhausted", "Success:false"},
		},
		{
			name:      "Success:false with a numeric code",
			setup:     func(s *aliyuntest.Server) { s.Inject("CreateTopic", 1, aliyuntest.SuccessFalse(500, "internal")) },
			wantErr:   true,
			wantCode:  "500",
			wantHTTP:  200,
			wantCalls: 1,
		},
		{
			name:      "numeric Code in an HTTP 400 does not panic",
			setup:     func(s *aliyuntest.Server) { s.Inject("CreateTopic", 1, aliyuntest.NumericCode(400)) },
			wantErr:   true,
			wantCode:  "400",
			wantHTTP:  400,
			wantCalls: 1,
		},
		{
			name:      "RAM permission missing names the actions",
			setup:     func(s *aliyuntest.Server) { s.Inject("CreateTopic", 1, aliyuntest.Forbidden()) },
			wantErr:   true,
			wantCode:  "Forbidden.RAM",
			wantHTTP:  403,
			wantCalls: 1,
			wantText:  []string{"alikafka:CreateTopic"},
		},
		{
			name:      "proxy error page is fatal",
			setup:     func(s *aliyuntest.Server) { s.Inject("CreateTopic", 1, aliyuntest.EchoURL(502)) },
			wantErr:   true,
			wantHTTP:  502,
			wantCalls: 1,
			wantText:  []string{"non-JSON error response"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			if tc.setup != nil {
				tc.setup(s)
			}
			m := newManager(t, topicConfig(s, quietLogger()))
			err := m.CreateTopic(context.Background(), "orders", 6, tc.compact, "")
			if got := s.CallCount("CreateTopic"); got != tc.wantCalls {
				t.Errorf("CreateTopic calls = %d, want %d", got, tc.wantCalls)
			}
			if !tc.wantErr {
				if err != nil {
					t.Fatalf("CreateTopic: %v", err)
				}
				if tc.setup != nil {
					return
				}
				top, ok := s.Topic("orders")
				if !ok {
					t.Fatal("topic not on the server")
				}
				if top.Partitions != 6 || top.Compact != tc.compact || top.Local != tc.compact || top.Remark != DefaultRemark {
					t.Errorf("created %+v", top)
				}
				return
			}
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("error %v (%T) is not an *APIError", err, err)
			}
			if ae.Code != tc.wantCode || ae.Retryable != tc.wantRetry || ae.HTTPStatus != tc.wantHTTP {
				t.Errorf("APIError{Code %q, Retryable %v, HTTP %d}, want {%q, %v, %d}",
					ae.Code, ae.Retryable, ae.HTTPStatus, tc.wantCode, tc.wantRetry, tc.wantHTTP)
			}
			for _, want := range tc.wantText {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if !strings.HasPrefix(err.Error(), "aliyun: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestThrottlingForever(t *testing.T) {
	t.Run("retry budget", func(t *testing.T) {
		s := newFake(t)
		s.Inject("GetTopicList", aliyuntest.Forever, aliyuntest.ThrottlingUser())
		cfg := topicConfig(s, quietLogger())
		cfg.Backoff = Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond, Attempts: 3}
		_, err := newManager(t, cfg).ListTopics(context.Background())
		var ae *APIError
		if !errors.As(err, &ae) || ae.Code != "Throttling.User" || !ae.Retryable {
			t.Fatalf("err = %v", err)
		}
		if !strings.Contains(err.Error(), "gave up after 3 attempts") {
			t.Errorf("error %q does not say it gave up", err)
		}
		if n := s.CallCount("GetTopicList"); n != 3 {
			t.Errorf("calls = %d, want 3", n)
		}
	})
	t.Run("context deadline", func(t *testing.T) {
		s := newFake(t)
		s.Inject("GetTopicList", aliyuntest.Forever, aliyuntest.ThrottlingUser())
		cfg := topicConfig(s, quietLogger())
		cfg.Backoff = Backoff{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond, Attempts: 1 << 20}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := newManager(t, cfg).ListTopics(ctx)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("returned after %v", d)
		}
		var ae *APIError
		if !errors.As(err, &ae) || ae.Code != "Throttling.User" {
			t.Fatalf("err = %v", err)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v does not match context.DeadlineExceeded", err)
		}
		if n := s.CallCount("GetTopicList"); n < 2 {
			t.Errorf("only %d calls before giving up", n)
		}
	})
}

func TestCredentialErrors(t *testing.T) {
	tests := []struct {
		name     string
		id, sec  string
		wantCode string
	}{
		{"wrong secret", aliyuntest.AccessKeyID, "not-the-secret-123", "SignatureDoesNotMatch"},
		{"unknown AccessKey ID", "LTAI5tUnknownKeyId9999", aliyuntest.AccessKeySecret, "InvalidAccessKeyId.NotFound"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			cfg := topicConfig(s, quietLogger())
			cfg.AccessKeyID, cfg.AccessKeySecret = tc.id, tc.sec
			_, err := newManager(t, cfg).ListTopics(context.Background())
			var ae *APIError
			if !errors.As(err, &ae) || ae.Code != tc.wantCode || ae.Retryable {
				t.Fatalf("err = %v", err)
			}
			text := err.Error()
			if !strings.Contains(text, "check aliyun.kafka.accessKeyId/accessKeySecret") {
				t.Errorf("error %q does not name the fix", text)
			}
			for _, leak := range []string{tc.id, tc.sec} {
				if strings.Contains(text, leak) {
					t.Errorf("error %q contains %q", text, leak)
				}
			}
			if n := s.CallCount(""); n != 1 {
				t.Errorf("%d calls; a credential error must not be retried", n)
			}
		})
	}
}

func TestListTopicsPagination(t *testing.T) {
	s := newFake(t)
	for i := range 25 {
		s.AddTopic(fmt.Sprintf("topic_%02d", i), i%4+1)
	}
	cfg := topicConfig(s, quietLogger())
	cfg.PageSize = 10
	got, err := newManager(t, cfg).ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 25 {
		t.Fatalf("%d topics, want 25", len(got))
	}
	ti := got["topic_07"]
	if ti.Name != "topic_07" || ti.Partitions != 4 || !ti.InService() || ti.Remark != "preexisting" || ti.Created.IsZero() {
		t.Errorf("topic_07 = %+v", ti)
	}
	calls := s.Calls("GetTopicList")
	if len(calls) != 3 {
		t.Fatalf("%d GetTopicList calls, want 3", len(calls))
	}
	for i, c := range calls {
		if c.Params.Get("CurrentPage") != fmt.Sprint(i+1) || c.Params.Get("PageSize") != "10" ||
			c.Params.Get("InstanceId") != aliyuntest.InstanceID {
			t.Errorf("call %d params %v", i, c.Params)
		}
	}
}

func TestEnsureTopics(t *testing.T) {
	s := newFake(t)
	s.AddTopic("existing_a", 3)
	s.SetReadyAfter(2)
	logger, logs := testLogger()
	m := newManager(t, topicConfig(s, logger))
	ctx := context.Background()

	if err := m.EnsureTopics(ctx, []string{"existing_a", "new_b", "new_c", "new_b"}, 6); err != nil {
		t.Fatal(err)
	}
	var created []string
	for _, c := range s.Calls("CreateTopic") {
		created = append(created, c.Params.Get("Topic"))
	}
	if strings.Join(created, ",") != "new_b,new_c" {
		t.Errorf("created %v, want only the missing new_b,new_c", created)
	}
	for _, name := range []string{"new_b", "new_c"} {
		top, _ := s.Topic(name)
		if top.Partitions != 6 || !top.Ready || top.StatusPolls != 3 || top.Compact {
			t.Errorf("%s = %+v, want 6 partitions, ready after 3 polls, not compact", name, top)
		}
	}
	if top, _ := s.Topic("existing_a"); top.StatusPolls != 0 {
		t.Errorf("existing_a polled %d times", top.StatusPolls)
	}
	if !strings.Contains(logs.String(), "created topic") {
		t.Errorf("no creation logged: %s", logs)
	}

	// A second run finds everything in service.
	before := s.CallCount("")
	if err := m.EnsureTopics(ctx, []string{"existing_a", "new_b", "new_c"}, 6); err != nil {
		t.Fatal(err)
	}
	if n := s.CallCount("") - before; n != 1 {
		t.Errorf("second run made %d calls, want 1 (the list)", n)
	}
}

func TestEnsureTopicsCompact(t *testing.T) {
	s := newFake(t)
	cfg := topicConfig(s, quietLogger())
	cfg.CompactTopics = true
	cfg.Remark = "cdc-topics"
	if err := newManager(t, cfg).EnsureTopics(context.Background(), []string{"orders"}, 12); err != nil {
		t.Fatal(err)
	}
	top, _ := s.Topic("orders")
	if !top.Compact || !top.Local || top.Partitions != 12 || top.Remark != "cdc-topics" {
		t.Errorf("orders = %+v", top)
	}
}

func TestEnsureTopicsRejectsBadInputBeforeCalling(t *testing.T) {
	s := newFake(t)
	m := newManager(t, topicConfig(s, quietLogger()))
	err := m.EnsureTopics(context.Background(), []string{"app_db.orders", "ok_name", "x"}, 0)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`"app_db.orders"`, `"x"`, "partition count 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %s", err, want)
		}
	}
	if n := s.CallCount(""); n != 0 {
		t.Errorf("%d calls made", n)
	}
}

func TestWaitReady(t *testing.T) {
	t.Run("times out while not ready", func(t *testing.T) {
		s := newFake(t)
		s.SetReadyAfter(1 << 30)
		cfg := topicConfig(s, quietLogger())
		cfg.ReadyTimeout = 60 * time.Millisecond
		m := newManager(t, cfg)
		if err := m.CreateTopic(context.Background(), "slow_topic", 2, false, ""); err != nil {
			t.Fatal(err)
		}
		err := m.WaitReady(context.Background(), "slow_topic")
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "not ready") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("topic not found yet keeps polling", func(t *testing.T) {
		s := newFake(t)
		m := newManager(t, topicConfig(s, quietLogger()))
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Millisecond)
		defer cancel()
		err := m.WaitReady(ctx, "missing_topic")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		if n := s.CallCount("GetTopicStatus"); n < 2 {
			t.Errorf("%d polls", n)
		}
	})
	t.Run("other errors are fatal", func(t *testing.T) {
		s := newFake(t)
		s.Inject("GetTopicStatus", 1, aliyuntest.Forbidden())
		err := newManager(t, topicConfig(s, quietLogger())).WaitReady(context.Background(), "any_topic")
		var ae *APIError
		if !errors.As(err, &ae) || ae.Code != "Forbidden.RAM" {
			t.Fatalf("err = %v", err)
		}
	})
}

// The SDK's own call path has no context; this one must stop a hanging
// request when the context ends.
func TestContextCancelsHangingRequest(t *testing.T) {
	hang := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer hang.Close()
	s := newFake(t)
	cfg := topicConfig(s, quietLogger())
	cfg.Endpoint = "https://" + strings.TrimPrefix(hang.URL, "https://")
	cfg.Transport = hang.Client().Transport
	m := newManager(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := m.ListTopics(ctx)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned after %v", d)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}

	cancelled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	if err := m.CreateTopic(cancelled, "orders", 1, false, ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", err)
	}
}

// Values with spaces, '*', '~', '+', '/' and non-ASCII must be signed the
// way the server checks.
func TestSignatureWithUnusualValues(t *testing.T) {
	s := newFake(t)
	m := newManager(t, topicConfig(s, quietLogger()))
	const remark = "a b*~+/é&=%"
	if err := m.CreateTopic(context.Background(), "odd_remark", 1, false, remark); err != nil {
		t.Fatal(err)
	}
	if top, _ := s.Topic("odd_remark"); top.Remark != remark {
		t.Errorf("remark %q", top.Remark)
	}
}

func TestRequestShape(t *testing.T) {
	s := newFake(t)
	m := newManager(t, topicConfig(s, quietLogger()))
	if err := m.CreateTopic(context.Background(), "orders", 3, false, ""); err != nil {
		t.Fatal(err)
	}
	p := s.Calls("CreateTopic")[0].Params
	want := map[string]string{
		"Action": "CreateTopic", "Version": "2019-09-16", "Format": "JSON", "RegionId": aliyuntest.RegionID,
		"SignatureMethod": "HMAC-SHA1", "SignatureVersion": "1.0", "InstanceId": aliyuntest.InstanceID,
		"Topic": "orders", "PartitionNum": "3", "Remark": DefaultRemark,
	}
	for k, v := range want {
		if got := p.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	for _, absent := range []string{"CompactTopic", "LocalTopic", "SecurityToken"} {
		if p.Has(absent) {
			t.Errorf("%s sent: %q", absent, p.Get(absent))
		}
	}
}

func TestConcurrentEnsureTopics(t *testing.T) {
	s := newFake(t)
	s.SetReadyAfter(1)
	m := newManager(t, topicConfig(s, quietLogger()))
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- m.EnsureTopics(context.Background(), []string{"t_shared", fmt.Sprintf("t_own_%d", i)}, 2)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := len(s.Topics()); n != 5 {
		t.Errorf("%d topics, want 5", n)
	}
}

func TestNewTopicManagerValidation(t *testing.T) {
	base := TopicConfig{
		AccessKeyID: "LTAI5tSomeKeyId", AccessKeySecret: "very-secret-value",
		InstanceID: "alikafka_post-cn-x", RegionID: "cn-hangzhou",
	}
	tests := []struct {
		name   string
		modify func(*TopicConfig)
		want   string // "" means valid
	}{
		{"valid", func(*TopicConfig) {}, ""},
		{"https endpoint", func(c *TopicConfig) { c.Endpoint = "https://alikafka.cn-hangzhou.aliyuncs.com/" }, ""},
		{"endpoint with port", func(c *TopicConfig) { c.Endpoint = "127.0.0.1:8443" }, ""},
		{"default chain", func(c *TopicConfig) { c.AccessKeyID, c.AccessKeySecret = "", "" }, ""},
		{"missing region", func(c *TopicConfig) { c.RegionID = "" }, "aliyun.kafka.regionId is required"},
		{"bad region", func(c *TopicConfig) { c.RegionID = "cn hangzhou" }, "aliyun.kafka.regionId"},
		{"missing instance", func(c *TopicConfig) { c.InstanceID = "" }, "aliyun.kafka.instanceId is required"},
		{"http endpoint", func(c *TopicConfig) { c.Endpoint = "http://alikafka.cn-hangzhou.aliyuncs.com" }, "only https"},
		{"endpoint with path", func(c *TopicConfig) { c.Endpoint = "alikafka.cn-hangzhou.aliyuncs.com/x" }, "only a host name"},
		{"secret without id", func(c *TopicConfig) { c.AccessKeyID = "" }, "set both"},
		{"id without secret", func(c *TopicConfig) { c.AccessKeySecret = "" }, "set both"},
		{"token alone", func(c *TopicConfig) { c.AccessKeyID, c.AccessKeySecret, c.SecurityToken = "", "", "tok-123456" }, "set both"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			tc.modify(&cfg)
			_, err := NewTopicManager(cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "very-secret-value") {
				t.Errorf("error leaks the secret: %v", err)
			}
		})
	}
}
