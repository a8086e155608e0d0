package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ingestkit/ingest/aliyun"
	"github.com/ingestkit/ingest/secrets"
)

// Alibaba Cloud KMS Secrets Manager as the last secret provider
// (docs/apsaramq.md): enabled by --kms-region or INGEST_KMS_REGION, it looks
// ${secret_values.NAME} up with GetSecretValue (stage ACSCurrent) after the
// --secrets file and the INGEST_SECRET_* variables did not know NAME.

// The environment variables that stand in for the KMS flags.
const (
	envKMSRegion   = "INGEST_KMS_REGION"
	envKMSEndpoint = "INGEST_KMS_ENDPOINT"
	envKMSPrefix   = "INGEST_KMS_SECRET_PREFIX"
)

// kmsFlags are the flags of the KMS secret provider.
type kmsFlags struct {
	region, endpoint, prefix string
}

// kmsTestTLS, when set, is the TLS configuration of the KMS client. Only
// tests set it, to trust their fake server; otherwise the endpoint's
// certificate is verified against the system roots.
var kmsTestTLS *tls.Config

// addKMSFlags adds the KMS flags to the root command.
func (a *app) addKMSFlags(root *cobra.Command) {
	pf := root.PersistentFlags()
	pf.StringVar(&a.kms.region, "kms-region", "", "look ${secret_values.NAME} up in Alibaba Cloud KMS Secrets Manager of `REGION` (e.g. cn-hangzhou) "+
		"when neither --secrets nor INGEST_SECRET_* has it; default $"+envKMSRegion)
	pf.StringVar(&a.kms.endpoint, "kms-endpoint", "", "KMS OpenAPI `HOST` (HTTPS), default kms.REGION.aliyuncs.com or $"+envKMSEndpoint)
	pf.StringVar(&a.kms.prefix, "kms-secret-prefix", "", "`PREFIX` put before every name looked up in KMS; default $"+envKMSPrefix)
}

// addKMS appends the KMS provider to providers when KMS is enabled. The
// credentials are ALIBABA_CLOUD_ACCESS_KEY_ID, ALIBABA_CLOUD_ACCESS_KEY_SECRET
// and ALIBABA_CLOUD_SECURITY_TOKEN when the first two are set, else the rest
// of the Alibaba Cloud SDK's default credential chain (OIDC role, CLI
// profile, credentials file, ECS RAM role). It does no I/O.
func (a *app) addKMS(providers []secrets.Provider) ([]secrets.Provider, error) {
	flagOrEnv := func(flag, env string) string {
		if flag != "" {
			return flag
		}
		v, _ := a.lookupEnv(env)
		return v
	}
	region := flagOrEnv(a.kms.region, envKMSRegion)
	endpoint := flagOrEnv(a.kms.endpoint, envKMSEndpoint)
	prefix := flagOrEnv(a.kms.prefix, envKMSPrefix)
	if region == "" {
		if endpoint != "" || prefix != "" {
			return nil, errors.New("KMS: --kms-endpoint and --kms-secret-prefix need --kms-region (or " + envKMSRegion + ")")
		}
		return providers, nil
	}
	cfg := aliyun.KMSConfig{RegionID: region, Endpoint: endpoint, Prefix: prefix, TLSConfig: kmsTestTLS, Logger: a.log}
	id, _ := a.lookupEnv("ALIBABA_CLOUD_ACCESS_KEY_ID")
	secret, _ := a.lookupEnv("ALIBABA_CLOUD_ACCESS_KEY_SECRET")
	if id != "" && secret != "" {
		token, _ := a.lookupEnv("ALIBABA_CLOUD_SECURITY_TOKEN")
		cfg.AccessKeyID, cfg.AccessKeySecret, cfg.SecurityToken = id, secret, token
	}
	p, err := aliyun.NewKMSProvider(cfg)
	if err != nil {
		return nil, fmt.Errorf("KMS: %w", err)
	}
	return append(providers, &kmsSecrets{kms: p, region: region, prefix: prefix}), nil
}

// kmsSecrets adapts aliyun.KMSProvider to secrets.Provider: a secret KMS
// does not have is secrets.ErrNotFound, so that the placeholder is reported
// unresolved with every way to supply it; any other failure is a backend
// failure, which stops loading with exit code 1.
type kmsSecrets struct {
	kms            *aliyun.KMSProvider
	region, prefix string
}

// Lookup implements secrets.Provider. Errors never hold the value.
func (k *kmsSecrets) Lookup(ctx context.Context, name string) (string, error) {
	v, err := k.kms.Lookup(ctx, name)
	switch {
	case err == nil:
		return v, nil
	case errors.Is(err, aliyun.ErrNotFound):
		return "", secrets.ErrNotFound
	}
	return "", fmt.Errorf("KMS failed: %w", err)
}

// Hint implements secrets.Hinter.
func (k *kmsSecrets) Hint(name string) string {
	return fmt.Sprintf("create the secret %q in KMS Secrets Manager of %s", k.prefix+name, k.region)
}
