package aliyun

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth/credentials"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/kms"
)

// KMSConfig configures a [KMSProvider].
type KMSConfig struct {
	// AccessKeyID, AccessKeySecret and SecurityToken are the credentials,
	// with the same rules as in [TopicConfig]: all empty means the SDK's
	// default credential chain (ALIBABA_CLOUD_ACCESS_KEY_ID,
	// ALIBABA_CLOUD_ACCESS_KEY_SECRET, ALIBABA_CLOUD_SECURITY_TOKEN, OIDC
	// role, CLI profile, credentials file, ECS RAM role). The identity needs
	// the RAM action kms:GetSecretValue, and kms:Decrypt when the secret is
	// encrypted with a customer master key.
	AccessKeyID     string
	AccessKeySecret string
	SecurityToken   string
	// RegionID is the region of the secrets, e.g. cn-hangzhou. Required.
	RegionID string
	// Endpoint is the KMS OpenAPI host, optionally with a port or an
	// https:// prefix; empty means kms.<RegionID>.aliyuncs.com. KMS accepts
	// only HTTPS. Dedicated KMS instance endpoints
	// (kst-….cryptoservice.kms.aliyuncs.com) speak another protocol and are
	// not supported.
	Endpoint string
	// Prefix is put before every name looked up, e.g. "ingest/".
	Prefix string

	// RequestTimeout bounds each HTTP request; default 15s.
	RequestTimeout time.Duration
	// Backoff bounds the retries of throttled calls.
	Backoff Backoff
	// TLSConfig, if set, is the TLS configuration of the default transport.
	// Ignored when Transport is set.
	TLSConfig *tls.Config
	// Transport, if set, replaces the default transport.
	Transport http.RoundTripper
	// Logger receives retry messages; default slog.Default(). Secret values
	// and credentials are never logged.
	Logger *slog.Logger
}

// KMSProvider looks secrets up in Alibaba Cloud KMS Secrets Manager with
// GetSecretValue (version 2016-01-20), reading the version in stage
// ACSCurrent. It keeps no cache. A KMSProvider is safe for concurrent use
// and starts no goroutines.
type KMSProvider struct {
	rpc    *rpcClient
	prefix string
}

// NewKMSProvider checks cfg and returns a KMSProvider. It does no I/O.
func NewKMSProvider(cfg KMSConfig) (*KMSProvider, error) {
	creds := "the KMS AccessKey ID and secret"
	if cfg.AccessKeyID == "" && cfg.AccessKeySecret == "" && cfg.SecurityToken == "" {
		creds = "the Alibaba Cloud credentials (" + chainNote + ")"
	}
	rpc, err := newRPCClient(clientOptions{
		service:         "kms",
		accessKeyID:     cfg.AccessKeyID,
		accessKeySecret: cfg.AccessKeySecret,
		securityToken:   cfg.SecurityToken,
		regionID:        cfg.RegionID,
		endpoint:        cfg.Endpoint,
		transport:       cfg.Transport,
		tlsConfig:       cfg.TLSConfig,
		requestTimeout:  cfg.RequestTimeout,
		backoff:         cfg.Backoff,
		logger:          cfg.Logger,
		optRegion:       "KMS region",
		optEndpoint:     "KMS endpoint",
		optCredentials:  creds,
		permission:      "kms:GetSecretValue (and kms:Decrypt for a secret under a customer master key)",
		newSDKClient: func(region string, c *sdk.Config, p credentials.CredentialsProvider) (*sdk.Client, error) {
			cl, err := kms.NewClientWithOptions(region, c, p)
			if err != nil {
				return nil, err
			}
			return &cl.Client, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &KMSProvider{rpc: rpc, prefix: cfg.Prefix}, nil
}

// secretValueResponse is the part of the GetSecretValue payload used here.
type secretValueResponse struct {
	SecretName     flexString `json:"SecretName"`
	SecretData     flexString `json:"SecretData"`
	SecretDataType flexString `json:"SecretDataType"`
	VersionStages  struct {
		VersionStage []flexString `json:"VersionStage"`
	} `json:"VersionStages"`
}

// Lookup returns the ACSCurrent value of the secret Prefix+name. A binary
// secret (SecretDataType "binary", sent base64-encoded) is decoded.
//
// A secret that does not exist gives an error matching [ErrNotFound] (and no
// [*APIError]); any other failure is an [*APIError], after retries of
// throttling. The value never appears in an error or a log message.
func (p *KMSProvider) Lookup(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", errors.New("aliyun: kms lookup: empty secret name")
	}
	full := p.prefix + name
	var resp secretValueResponse
	err := p.rpc.call(ctx, "GetSecretValue", func() requests.AcsRequest {
		r := kms.CreateGetSecretValueRequest()
		r.SecretName = full
		r.VersionStage = "ACSCurrent"
		return r
	}, &resp)
	var ae *APIError
	switch {
	case errors.As(err, &ae) && (ae.Code == codeKMSNotFound || (ae.HTTPStatus == http.StatusNotFound && ae.Code == "")):
		return "", fmt.Errorf("aliyun: kms secret %q (request id %s): %w", full, ae.RequestID, ErrNotFound)
	case err != nil:
		return "", p.rpc.secrets.guard(err)
	}
	value := string(resp.SecretData)
	if strings.EqualFold(string(resp.SecretDataType), "binary") {
		b, derr := base64.StdEncoding.DecodeString(value)
		if derr != nil {
			return "", &APIError{Service: "kms", Action: "GetSecretValue", Code: codeInvalidResponse,
				Message: fmt.Sprintf("secret %q is binary but its data is not valid base64", full)}
		}
		value = string(b)
	}
	return value, nil
}
