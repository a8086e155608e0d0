package cdc

import (
	"strings"
	"testing"
)

func TestTLSFromJDBC(t *testing.T) {
	tests := []struct {
		name      string
		props     map[string]string
		wantNil   bool
		insecure  bool
		verifyFn  bool
		wantErr   string
		wantIgnor string
	}{
		{name: "none", props: nil, wantNil: true},
		{name: "disabled", props: map[string]string{"sslMode": "disabled"}, wantNil: true},
		{name: "required", props: map[string]string{"sslMode": "REQUIRED"}, insecure: true},
		{name: "preferred is required", props: map[string]string{"sslMode": "PREFERRED"}, insecure: true},
		{name: "verify ca", props: map[string]string{"sslMode": "VERIFY_CA"}, insecure: true, verifyFn: true},
		{name: "verify identity", props: map[string]string{"sslMode": "VERIFY_IDENTITY"}},
		{name: "useSSL verifies", props: map[string]string{"useSSL": "true"}},
		{name: "useSSL unverified", props: map[string]string{"useSSL": "true", "verifyServerCertificate": "false"}, insecure: true},
		{name: "bad mode", props: map[string]string{"sslMode": "ALWAYS"}, wantErr: "valid values are DISABLED"},
		{name: "missing CA", props: map[string]string{"sslMode": "VERIFY_CA", "serverSslCert": "/nonexistent.pem"}, wantErr: "read CA /nonexistent.pem"},
		{name: "key store", props: map[string]string{"clientCertificateKeyStoreUrl": "file:/k.jks"}, wantErr: "key stores are not read"},
		{name: "ignored", props: map[string]string{"cachePrepStmts": "true", "useUnicode": "true"}, wantNil: true, wantIgnor: "cachePrepStmts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ignored, err := TLSFromJDBC(tc.props, "db.example")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(ignored, ",") != tc.wantIgnor {
				t.Errorf("ignored %v, want %q", ignored, tc.wantIgnor)
			}
			if (cfg == nil) != tc.wantNil {
				t.Fatalf("cfg nil = %v, want %v", cfg == nil, tc.wantNil)
			}
			if cfg == nil {
				return
			}
			if cfg.InsecureSkipVerify != tc.insecure || (cfg.VerifyConnection != nil) != tc.verifyFn || cfg.ServerName != "db.example" {
				t.Errorf("cfg insecure=%v verifyFn=%v server=%q", cfg.InsecureSkipVerify, cfg.VerifyConnection != nil, cfg.ServerName)
			}
		})
	}
}
