package aliyun

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ingestkit/ingest/aliyun/aliyuntest"
)

// Credentials of the leak test: an STS triple the fake server accepts.
const (
	leakID     = "STS.NUkXleakIdentifier42"
	leakSecret = "LeakSecretValue-8f3a9c1e77d24b"
	leakToken  = "CAIS8QF1q6Ft5B2yfSjIr5bSEtL+leakToken/With+Base64=="
)

// TestNoCredentialLeaks makes every call fail in every way the package knows
// and checks that neither the error texts nor the log output hold the
// AccessKey ID, the secret, the STS token or any request signature, in raw
// or encoded form.
func TestNoCredentialLeaks(t *testing.T) {
	s := newFake(t)
	s.AddCredential(leakID, leakSecret, leakToken)
	logger, logs := testLogger()

	cfg := topicConfig(s, logger)
	cfg.AccessKeyID, cfg.AccessKeySecret, cfg.SecurityToken = leakID, leakSecret, leakToken
	cfg.Backoff = Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond, Attempts: 3}
	cfg.ReadyTimeout = 30 * time.Millisecond
	m := newManager(t, cfg)

	kcfg := KMSConfig{
		AccessKeyID: leakID, AccessKeySecret: leakSecret, SecurityToken: leakToken,
		RegionID: aliyuntest.RegionID, Endpoint: s.Host(), TLSConfig: s.TLSConfig(),
		Backoff: cfg.Backoff, Logger: logger,
	}
	k, err := NewKMSProvider(kcfg)
	if err != nil {
		t.Fatal(err)
	}

	wrong := cfg
	wrong.AccessKeySecret = "Wrong" + leakSecret
	mWrong := newManager(t, wrong)

	closed := aliyuntest.NewServer()
	closedHost, closedTLS := closed.Host(), closed.TLSConfig()
	closed.Close()
	dead := cfg
	dead.Endpoint, dead.TLSConfig = closedHost, closedTLS
	mDead := newManager(t, dead)

	ctx := context.Background()
	var texts []string
	record := func(what string, err error) {
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		texts = append(texts, fmt.Sprintf("%s: %v | %+v | %#v", what, err, err, err))
	}

	record("wrong secret (server quotes its string-to-sign)", mWrong.CreateTopic(ctx, "orders", 1, false, ""))
	s.Inject("", 1, aliyuntest.SignatureMismatch())
	record("forced signature mismatch", m.CreateTopic(ctx, "orders", 1, false, ""))
	s.Inject("", 1, aliyuntest.EchoURL(502))
	record("proxy page echoing the signed URL", m.CreateTopic(ctx, "orders", 1, false, ""))
	s.Inject("", 1, aliyuntest.Response{Status: 500, RawBody: "AccessKeyId=" + leakID + "&SecurityToken=" + url.QueryEscape(leakToken)})
	_, err = m.ListTopics(ctx)
	record("raw body with credentials", err)
	s.Inject("", aliyuntest.Forever, aliyuntest.ThrottlingUser())
	_, err = m.ListTopics(ctx)
	record("throttled forever", err)
	record("throttled wait", m.WaitReady(ctx, "orders"))
	s.ClearInjected()
	s.Inject("", 1, aliyuntest.NumericCode(400))
	record("numeric code", m.CreateTopic(ctx, "orders", 1, false, ""))
	s.Inject("", 1, aliyuntest.SuccessFalse("X", "failed"))
	record("success false", m.EnsureTopics(ctx, []string{"orders"}, 1))
	_, err = mDead.ListTopics(ctx)
	record("transport error (connection refused)", err)
	s.Inject("GetSecretValue", 1, aliyuntest.EchoURL(500))
	_, err = k.Lookup(ctx, "kafka-sk")
	record("kms echo", err)
	s.Inject("GetSecretValue", 1, aliyuntest.SignatureMismatch())
	_, err = k.Lookup(ctx, "kafka-sk")
	record("kms signature", err)
	_, err = k.Lookup(ctx, "missing")
	record("kms not found", err)

	forbidden := []string{leakID, leakSecret, leakToken, "Wrong" + leakSecret}
	for _, c := range s.Calls("") {
		if sig := c.Params.Get("Signature"); sig != "" {
			forbidden = append(forbidden, sig)
		}
	}
	var expanded []string
	for _, f := range forbidden {
		expanded = append(expanded, f, url.QueryEscape(f), aliyuntest.PercentEncode(f),
			aliyuntest.PercentEncode(aliyuntest.PercentEncode(f)))
	}
	output := strings.Join(texts, "\n") + "\n" + logs.String()
	for _, f := range expanded {
		if len(f) >= 8 && strings.Contains(output, f) {
			t.Errorf("output contains credential material %q", f)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("output:\n%s", output)
	}
	// The texts still say what went wrong.
	for _, want := range []string{"SignatureDoesNotMatch", "Throttling.User", "connection refused", "check aliyun.kafka.accessKeyId/accessKeySecret"} {
		if !strings.Contains(output, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if !strings.Contains(logs.String(), "retrying") {
		t.Error("no retry was logged")
	}
}
