package aliyun

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestScrub(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		literals []string
		want     string
	}{
		{
			name: "signed URL",
			in:   `Post "https://h/?AccessKeyId=AKID1&Action=X&SecurityToken=TOK%2Bx&Signature=ab%2Bc%3D&SignatureMethod=HMAC-SHA1&SignatureNonce=n1": dial tcp`,
			want: `Post "https://h/?AccessKeyId=[redacted]&Action=X&SecurityToken=[redacted]&Signature=[redacted]&SignatureMethod=HMAC-SHA1&SignatureNonce=n1": dial tcp`,
		},
		{
			name: "string to sign",
			in:   "server string to sign is:POST&%2F&AccessKeyId%3DAKID1%26Action%3DX%26SecurityToken%3DTOK%252Bx%26SignatureMethod%3DHMAC-SHA1",
			want: "server string to sign is:POST&%2F&AccessKeyId%3D[redacted]%26Action%3DX%26SecurityToken%3D[redacted]%26SignatureMethod%3DHMAC-SHA1",
		},
		{
			name: "doubly encoded",
			in:   "x%26AccessKeyId%253DAKID1%2526Action%253DX",
			want: "x%26AccessKeyId%253D[redacted]%2526Action%253DX",
		},
		{
			name: "JSON",
			in:   `{"AccessKeyId": "AKID1", "AccessKeySecret":"S3CRET","SecurityToken":"TOK","Expiration":"2026"}`,
			want: `{"AccessKeyId": "[redacted]", "AccessKeySecret":"[redacted]","SecurityToken":"[redacted]","Expiration":"2026"}`,
		},
		{
			name: "names that only start like a credential stay",
			in:   "SignatureMethod=HMAC-SHA1&SignatureVersion=1.0&SignatureType=&x-acs-signature-nonce=1 SignatureDoesNotMatch",
			want: "SignatureMethod=HMAC-SHA1&SignatureVersion=1.0&SignatureType=&x-acs-signature-nonce=1 SignatureDoesNotMatch",
		},
		{
			name:     "literal values in any encoding",
			in:       "secret a/b+c d, encoded a%2Fb%2Bc+d, percent a%2Fb%2Bc%20d, id LTAIxyz",
			literals: []string{"a/b+c d", "LTAIxyz"},
			want:     "secret [redacted], encoded [redacted], percent [redacted], id [redacted]",
		},
		{
			name:     "short literals are not replaced",
			in:       "abc abc",
			literals: []string{"abc", ""},
			want:     "abc abc",
		},
		{
			name: "value at the end",
			in:   "Signature=xyz",
			want: "Signature=[redacted]",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := scrub(tc.in, tc.literals...); got != tc.want {
				t.Errorf("scrub:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestGuard(t *testing.T) {
	s := &secretSet{}
	s.add("TopSecretValue", "", "TopSecretValue")
	if len(s.vals) != 1 {
		t.Fatalf("vals = %v", s.vals)
	}
	clean := errors.New("aliyun: fine")
	if s.guard(clean) != clean {
		t.Error("clean error replaced")
	}
	if s.guard(nil) != nil {
		t.Error("nil not kept")
	}
	dirty := errors.Join(context.Canceled, errors.New("oops TopSecretValue"))
	got := s.guard(dirty)
	if strings.Contains(got.Error(), "TopSecretValue") {
		t.Errorf("guard kept the secret: %v", got)
	}
	if !errors.Is(got, context.Canceled) {
		t.Error("guard lost errors.Is")
	}
	if errors.Unwrap(got) != nil {
		t.Error("guarded error unwraps to the raw one")
	}
}

func TestSecretSetBounded(t *testing.T) {
	s := &secretSet{}
	for i := range maxLiterals + 10 {
		s.add(strings.Repeat("x", 5) + string(rune('a'+i%26)) + strings.Repeat("y", i))
	}
	if len(s.vals) != maxLiterals {
		t.Fatalf("%d values kept", len(s.vals))
	}
}
