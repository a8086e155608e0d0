package aliyun

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/aliyun/aliyuntest"
)

// isolateCredentialChain keeps the SDK's default chain away from the
// developer's own credentials and from the ECS metadata service.
func isolateCredentialChain(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("ALIBABA_CLOUD_ECS_METADATA_DISABLED", "true")
	t.Setenv("ALIBABA_CLOUD_CLI_PROFILE_DISABLED", "true")
	for _, v := range []string{
		"ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ALIBABA_CLOUD_SECURITY_TOKEN",
		"ALIBABA_CLOUD_ROLE_ARN", "ALIBABA_CLOUD_OIDC_PROVIDER_ARN", "ALIBABA_CLOUD_OIDC_TOKEN_FILE",
		"ALIBABA_CLOUD_CREDENTIALS_FILE", "ALIBABA_CLOUD_CREDENTIALS_URI", "ALIBABA_CLOUD_PROFILE",
		"ALIBABA_CLOUD_ECS_METADATA",
	} {
		t.Setenv(v, "")
	}
}

func TestCredentialsFromEnvironment(t *testing.T) {
	isolateCredentialChain(t)
	const id, secret, token = "STS.EnvKeyId0001", "EnvSecretValue0123456789", "EnvStsToken+/abc=="
	t.Setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", id)
	t.Setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", secret)
	t.Setenv("ALIBABA_CLOUD_SECURITY_TOKEN", token)

	s := newFake(t)
	s.AddCredential(id, secret, token)
	s.PutSecret("kafka-sk", "v")
	cfg := topicConfig(s, quietLogger())
	cfg.AccessKeyID, cfg.AccessKeySecret = "", ""
	if _, err := newManager(t, cfg).ListTopics(context.Background()); err != nil {
		t.Fatal(err)
	}
	kcfg := kmsConfig(s)
	kcfg.AccessKeyID, kcfg.AccessKeySecret = "", ""
	k, err := NewKMSProvider(kcfg)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := k.Lookup(context.Background(), "kafka-sk"); err != nil || v != "v" {
		t.Fatalf("Lookup = %q, %v", v, err)
	}
	for _, c := range s.Calls("") {
		if c.Params.Get("AccessKeyId") != id || c.Params.Get("SecurityToken") != token {
			t.Errorf("%s sent AccessKeyId %q, SecurityToken %q", c.Action, c.Params.Get("AccessKeyId"), c.Params.Get("SecurityToken"))
		}
	}
}

func TestExplicitCredentialsWinOverEnvironment(t *testing.T) {
	isolateCredentialChain(t)
	t.Setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", "EnvIdThatMustNotBeUsed")
	t.Setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", "EnvSecretThatMustNotBeUsed")
	s := newFake(t)
	if _, err := newManager(t, topicConfig(s, quietLogger())).ListTopics(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := s.Calls("")[0].Params.Get("AccessKeyId"); got == "EnvIdThatMustNotBeUsed" {
		t.Error("environment credentials used although options were set")
	}
}

func TestNoCredentialsAnywhere(t *testing.T) {
	isolateCredentialChain(t)
	s := newFake(t)
	cfg := topicConfig(s, quietLogger())
	cfg.AccessKeyID, cfg.AccessKeySecret = "", ""
	m := newManager(t, cfg)
	_, err := m.ListTopics(context.Background())
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != codeCredentials || ae.Retryable {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"aliyun.kafka.accessKeyId/accessKeySecret", "ALIBABA_CLOUD_ACCESS_KEY_ID"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if n := s.CallCount(""); n != 0 {
		t.Errorf("%d calls sent without credentials", n)
	}

	// Credentials that appear later are found: the chain starts over.
	t.Setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", aliyuntest.AccessKeyID)
	t.Setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", aliyuntest.AccessKeySecret)
	if _, err := m.ListTopics(context.Background()); err != nil {
		t.Fatalf("after setting the environment: %v", err)
	}
}
