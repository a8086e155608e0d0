package aliyun

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/aliyun/aliyuntest"
)

func kmsConfig(s *aliyuntest.Server) KMSConfig {
	return KMSConfig{
		AccessKeyID:     aliyuntest.AccessKeyID,
		AccessKeySecret: aliyuntest.AccessKeySecret,
		RegionID:        aliyuntest.RegionID,
		Endpoint:        s.Host(),
		TLSConfig:       s.TLSConfig(),
		Backoff:         fastBackoff,
		Logger:          quietLogger(),
	}
}

func TestKMSLookup(t *testing.T) {
	const value = "p@ss w0rd-Ω-value"
	tests := []struct {
		name         string
		setup        func(s *aliyuntest.Server)
		prefix       string
		lookup       string
		want         string
		wantNotFound bool
		wantCode     string // for other failures
		wantCalls    int
	}{
		{
			name:      "found",
			setup:     func(s *aliyuntest.Server) { s.PutSecret("kafka-sk", value) },
			lookup:    "kafka-sk",
			want:      value,
			wantCalls: 1,
		},
		{
			name:      "found with prefix",
			setup:     func(s *aliyuntest.Server) { s.PutSecret("ingest/kafka-sk", value) },
			prefix:    "ingest/",
			lookup:    "kafka-sk",
			want:      value,
			wantCalls: 1,
		},
		{
			name:      "binary secret is decoded",
			setup:     func(s *aliyuntest.Server) { s.PutBinarySecret("blob", []byte{0, 1, 2, 'x'}) },
			lookup:    "blob",
			want:      "\x00\x01\x02x",
			wantCalls: 1,
		},
		{
			name: "throttled, then found",
			setup: func(s *aliyuntest.Server) {
				s.PutSecret("kafka-sk", value)
				s.Inject("GetSecretValue", 2, aliyuntest.Response{Status: 400, Code: "Rejected.Throttling", Message: "QPS Limit Exceeded"})
			},
			lookup:    "kafka-sk",
			want:      value,
			wantCalls: 3,
		},
		{
			name:         "not found",
			lookup:       "absent",
			wantNotFound: true,
			wantCalls:    1,
		},
		{
			name:      "permission denied is another error",
			setup:     func(s *aliyuntest.Server) { s.Inject("GetSecretValue", 1, aliyuntest.Forbidden()) },
			lookup:    "kafka-sk",
			wantCode:  "Forbidden.RAM",
			wantCalls: 1,
		},
		{
			name:      "bad signature is another error",
			setup:     func(s *aliyuntest.Server) { s.Inject("GetSecretValue", 1, aliyuntest.SignatureMismatch()) },
			lookup:    "kafka-sk",
			wantCode:  "SignatureDoesNotMatch",
			wantCalls: 1,
		},
		{
			name: "malformed answer does not quote the body",
			setup: func(s *aliyuntest.Server) {
				s.Inject("GetSecretValue", 1, aliyuntest.Response{Status: 200, RawBody: `{"SecretData":"` + value + `","SecretDataType":`})
			},
			lookup:    "kafka-sk",
			wantCode:  "InvalidResponse",
			wantCalls: 1,
		},
		{
			name: "bad base64 in a binary secret",
			setup: func(s *aliyuntest.Server) {
				s.Inject("GetSecretValue", 1, aliyuntest.Response{Status: 200, RawBody: `{"SecretData":"` + value + `","SecretDataType":"binary"}`})
			},
			lookup:    "kafka-sk",
			wantCode:  "InvalidResponse",
			wantCalls: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			if tc.setup != nil {
				tc.setup(s)
			}
			cfg := kmsConfig(s)
			cfg.Prefix = tc.prefix
			k, err := NewKMSProvider(cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := k.Lookup(context.Background(), tc.lookup)
			if n := s.CallCount("GetSecretValue"); n != tc.wantCalls {
				t.Errorf("%d calls, want %d", n, tc.wantCalls)
			}
			if calls := s.Calls("GetSecretValue"); len(calls) > 0 {
				p := calls[0].Params
				if p.Get("VersionStage") != "ACSCurrent" || p.Get("Version") != "2016-01-20" || p.Get("SecretName") != tc.prefix+tc.lookup {
					t.Errorf("request params %v", p)
				}
			}
			switch {
			case tc.want != "":
				if err != nil || got != tc.want {
					t.Fatalf("Lookup = %q, %v; want %q", got, err, tc.want)
				}
				return
			case tc.wantNotFound:
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("err = %v, want ErrNotFound", err)
				}
				var ae *APIError
				if errors.As(err, &ae) {
					t.Errorf("not-found error is also an *APIError: %v", err)
				}
				if !strings.Contains(err.Error(), tc.lookup) {
					t.Errorf("error %q does not name the secret", err)
				}
			default:
				var ae *APIError
				if !errors.As(err, &ae) || ae.Code != tc.wantCode || ae.Service != "kms" {
					t.Fatalf("err = %v, want an *APIError with code %s", err, tc.wantCode)
				}
				if errors.Is(err, ErrNotFound) {
					t.Errorf("failure %v matches ErrNotFound", err)
				}
			}
			if got != "" {
				t.Errorf("value %q returned with an error", got)
			}
			if strings.Contains(err.Error(), value) || strings.Contains(err.Error(), "w0rd") {
				t.Errorf("error %q holds the secret value", err)
			}
		})
	}
}

func TestKMSConfigValidation(t *testing.T) {
	_, err := NewKMSProvider(KMSConfig{Endpoint: "http://kms.cn-hangzhou.aliyuncs.com"})
	if err == nil || !strings.Contains(err.Error(), "KMS region is required") || !strings.Contains(err.Error(), "only https") {
		t.Fatalf("err = %v", err)
	}
	k, err := NewKMSProvider(KMSConfig{RegionID: "cn-hangzhou", AccessKeyID: "a-key-id", AccessKeySecret: "a-secret"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Lookup(context.Background(), ""); err == nil {
		t.Error("empty name accepted")
	}
}
