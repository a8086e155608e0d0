package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/aliyun/aliyuntest"
)

// kmsServer starts a fake KMS that the CLI trusts.
func kmsServer(t *testing.T) *aliyuntest.Server {
	t.Helper()
	srv := aliyuntest.NewServer()
	t.Cleanup(srv.Close)
	kmsTestTLS = srv.TLSConfig()
	t.Cleanup(func() { kmsTestTLS = nil })
	return srv
}

// kmsEnv is testEnv without INGEST_SECRET_KAFKA_PW (so that KMS is asked for
// kafka-pw), with the Alibaba Cloud credentials and extra variables.
func kmsEnv(extra map[string]string) func(string) (string, bool) {
	return func(key string) (string, bool) {
		if v, ok := extra[key]; ok {
			return v, true
		}
		switch key {
		case "INGEST_SECRET_KAFKA_PW":
			return "", false
		case "ALIBABA_CLOUD_ACCESS_KEY_ID":
			return aliyuntest.AccessKeyID, true
		case "ALIBABA_CLOUD_ACCESS_KEY_SECRET":
			return aliyuntest.AccessKeySecret, true
		}
		return testEnv(key)
	}
}

func runWithEnv(t *testing.T, env func(string) (string, bool), args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut, env)
	return code, out.String(), errOut.String()
}

func TestKMSSecrets(t *testing.T) {
	good := writeFile(t, "pipeline.yaml", goodPipeline, 0o644)
	const kmsValue = "kms-VALUE-never-printed"
	cases := []struct {
		name       string
		setup      func(*aliyuntest.Server)
		args       []string
		env        map[string]string
		code       int
		wantStdout string
		wantStderr []string
	}{
		{name: "found", setup: func(s *aliyuntest.Server) { s.PutSecret("ingest/kafka-pw", kmsValue) },
			args: []string{"validate", good, "--kms-secret-prefix", "ingest/"}, code: exitOK, wantStdout: "ok: "},
		{name: "found plan", setup: func(s *aliyuntest.Server) { s.PutSecret("kafka-pw", kmsValue) },
			args: []string{"plan", good, "--offline", "-o", "json"}, code: exitOK, wantStdout: `"******"`},
		{name: "found with environment settings", setup: func(s *aliyuntest.Server) { s.PutSecret("p-kafka-pw", kmsValue) },
			args: []string{"validate", good}, env: map[string]string{"INGEST_KMS_SECRET_PREFIX": "p-"}, code: exitOK, wantStdout: "ok: "},
		{name: "not found", setup: func(*aliyuntest.Server) {},
			args: []string{"validate", good}, code: exitInvalid,
			wantStderr: []string{`unresolved secret ${secret_values.kafka-pw}: set INGEST_SECRET_KAFKA_PW, add "kafka-pw" to a file given with --secrets or create the secret "kafka-pw" in KMS Secrets Manager of cn-hangzhou`}},
		{name: "not found apply", setup: func(*aliyuntest.Server) {},
			args: []string{"apply", good}, code: exitInvalid, wantStderr: []string{"unresolved secret ${secret_values.kafka-pw}"}},
		{name: "failure", setup: func(s *aliyuntest.Server) {
			s.PutSecret("kafka-pw", kmsValue)
			s.Inject("GetSecretValue", aliyuntest.Forever, aliyuntest.Forbidden())
		}, args: []string{"validate", good}, code: exitFailure,
			wantStderr: []string{"cannot look up secret ${secret_values.kafka-pw}: KMS failed: aliyun: kms GetSecretValue: Forbidden.RAM", "grant the RAM identity kms:GetSecretValue"}},
		{name: "failure apply json logs", setup: func(s *aliyuntest.Server) {
			s.PutSecret("kafka-pw", kmsValue)
			s.Inject("GetSecretValue", aliyuntest.Forever, aliyuntest.SignatureMismatch())
		}, args: []string{"apply", good, "--log-format", "json"}, code: exitFailure,
			wantStderr: []string{"KMS failed", "SignatureDoesNotMatch", "check the KMS AccessKey ID and secret"}},
		{name: "failure echoing the signed URL", setup: func(s *aliyuntest.Server) {
			s.PutSecret("kafka-pw", kmsValue)
			s.Inject("GetSecretValue", aliyuntest.Forever, aliyuntest.EchoURL(403))
		}, args: []string{"plan", good, "--offline"}, code: exitFailure, wantStderr: []string{"KMS failed"}},
		{name: "environment wins over KMS", setup: func(s *aliyuntest.Server) {
			s.PutSecret("kafka-pw", kmsValue)
			s.PutSecret("mysql-password", "kms-would-be-wrong")
		}, args: []string{"validate", good}, code: exitOK, wantStdout: "ok: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := kmsServer(t)
			c.setup(srv)
			env := map[string]string{}
			for k, v := range c.env {
				env[k] = v
			}
			args := c.args
			if strings.Contains(c.name, "environment settings") {
				env["INGEST_KMS_REGION"] = aliyuntest.RegionID
				env["INGEST_KMS_ENDPOINT"] = srv.Host()
			} else {
				args = append(args, "--kms-region", aliyuntest.RegionID, "--kms-endpoint", srv.Host())
			}
			code, stdout, stderr := runWithEnv(t, kmsEnv(env), args...)
			if code != c.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			if !strings.Contains(stdout, c.wantStdout) {
				t.Errorf("stdout %q does not contain %q", stdout, c.wantStdout)
			}
			for _, w := range c.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not contain %q", stderr, w)
				}
			}
			for _, secret := range []string{kmsValue, secretValue, aliyuntest.AccessKeySecret, aliyuntest.AccessKeyID} {
				if strings.Contains(stdout+stderr, secret) {
					t.Errorf("%q was printed:\nstdout:\n%s\nstderr:\n%s", secret, stdout, stderr)
				}
			}
			// Only the name the earlier providers did not know reaches KMS.
			for _, call := range srv.Calls("GetSecretValue") {
				if n := call.Params.Get("SecretName"); !strings.HasSuffix(n, "kafka-pw") {
					t.Errorf("KMS was asked for %q", n)
				}
			}
		})
	}
}

func TestKMSFlagsNeedRegion(t *testing.T) {
	good := writeFile(t, "pipeline.yaml", goodPipeline, 0o644)
	code, _, stderr := runWithEnv(t, kmsEnv(nil), "validate", good, "--kms-endpoint", "kms.cn-hangzhou.aliyuncs.com")
	if code != exitInvalid || !strings.Contains(stderr, "need --kms-region") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runWithEnv(t, kmsEnv(nil), "validate", good, "--kms-region", "cn hangzhou")
	if code != exitInvalid || !strings.Contains(stderr, "not a region ID") {
		t.Fatalf("bad region: exit %d, stderr %q", code, stderr)
	}
}
