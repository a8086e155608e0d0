package aliyun

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth/credentials"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
)

// Backoff bounds the retries of a throttled call: attempt n (from 0) waits a
// random duration between half and all of min(Max, Initial·2ⁿ) before the
// next one. Retrying also stops when the context is done or when the next
// wait would end after the context's deadline. The zero value means the
// defaults.
type Backoff struct {
	// Initial is the first wait; default 500ms.
	Initial time.Duration
	// Max caps every wait; default 20s.
	Max time.Duration
	// Attempts is the total number of calls, the first included; default 8.
	Attempts int
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = 500 * time.Millisecond
	}
	if b.Max <= 0 {
		b.Max = 20 * time.Second
	}
	if b.Max < b.Initial {
		b.Max = b.Initial
	}
	if b.Attempts <= 0 {
		b.Attempts = 8
	}
	return b
}

// delay is the jittered wait after attempt n.
func (b Backoff) delay(n int) time.Duration {
	d := b.Initial
	for i := 0; i < n && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	half := d / 2
	return half + rand.N(d-half+1)
}

// Defaults of the per-call settings.
const (
	defaultRequestTimeout = 15 * time.Second
	maxResponseBytes      = 8 << 20
	maxMessageLen         = 600
)

// regionPattern is the SDK's own check of a region ID.
var regionPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// clientOptions is what TopicConfig and KMSConfig share.
type clientOptions struct {
	service         string // "alikafka" or "kms"
	accessKeyID     string
	accessKeySecret string
	securityToken   string
	regionID        string
	endpoint        string
	transport       http.RoundTripper
	tlsConfig       *tls.Config
	requestTimeout  time.Duration
	backoff         Backoff
	logger          *slog.Logger
	// option names for messages
	optRegion, optEndpoint, optCredentials string
	permission                             string
	newSDKClient                           func(region string, cfg *sdk.Config, cred credentials.CredentialsProvider) (*sdk.Client, error)
}

// rpcClient signs RPC-style OpenAPI requests with the SDK and sends them
// itself. The SDK's own DoAction is not used: it has no context support, it
// panics on an error envelope with a numeric Code, it ignores Success:false
// in a 2xx response, it puts the signed URL (AccessKeyId, Signature,
// SecurityToken) into transport errors, and concurrent calls on one SDK
// client race on its http.Client (measured with -race on v1.63.107).
type rpcClient struct {
	opts    clientOptions
	sdk     *sdk.Client
	http    *http.Client
	secrets *secretSet
	ua      string
}

func newRPCClient(o clientOptions) (*rpcClient, error) {
	var problems []error
	if o.regionID == "" {
		problems = append(problems, fmt.Errorf("aliyun: %s is required", o.optRegion))
	} else if !regionPattern.MatchString(o.regionID) {
		problems = append(problems, fmt.Errorf("aliyun: %s %q is not a region ID such as cn-hangzhou", o.optRegion, o.regionID))
	}
	host, err := parseEndpoint(o.endpoint, o.optEndpoint)
	if err != nil {
		problems = append(problems, err)
	}
	secrets := &secretSet{}
	secrets.add(o.accessKeyID, o.accessKeySecret, o.securityToken)
	var inner credentials.CredentialsProvider
	switch {
	case o.accessKeyID == "" && o.accessKeySecret == "" && o.securityToken == "":
		inner = nil // default chain, created by trackingProvider
	case o.accessKeyID == "" || o.accessKeySecret == "":
		problems = append(problems, fmt.Errorf("aliyun: %s: set both the AccessKey ID and the AccessKey secret, or neither to use the default credential chain", o.optCredentials))
	case o.securityToken != "":
		inner = credentials.NewStaticSTSCredentialsProvider(o.accessKeyID, o.accessKeySecret, o.securityToken)
	default:
		inner = credentials.NewStaticAKCredentialsProvider(o.accessKeyID, o.accessKeySecret)
	}
	if len(problems) > 0 {
		return nil, secrets.guard(errors.Join(problems...))
	}
	creds := newTrackingProvider(inner, secrets)
	cfg := sdk.NewConfig().WithScheme("HTTPS")
	sc, err := o.newSDKClient(o.regionID, cfg, creds)
	if err != nil {
		return nil, secrets.guard(fmt.Errorf("aliyun: create %s client: %s", o.service, secrets.scrub(err.Error())))
	}
	if host != "" {
		sc.Domain = host
	}
	rt := o.transport
	if rt == nil {
		t, ok := http.DefaultTransport.(*http.Transport)
		if ok {
			t = t.Clone()
		} else {
			t = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true,
				TLSHandshakeTimeout: 10 * time.Second, IdleConnTimeout: 90 * time.Second}
		}
		if o.tlsConfig != nil {
			t.TLSClientConfig = o.tlsConfig.Clone()
		} else {
			t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		rt = t
	}
	if o.requestTimeout <= 0 {
		o.requestTimeout = defaultRequestTimeout
	}
	o.backoff = o.backoff.withDefaults()
	if o.logger == nil {
		o.logger = slog.Default()
	}
	return &rpcClient{
		opts: o,
		sdk:  sc,
		http: &http.Client{
			Transport: rt,
			// A redirect would resend the signed request to another host.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		secrets: secrets,
		ua:      sdk.DefaultUserAgent + " ingest/aliyun",
	}, nil
}

// parseEndpoint turns an endpoint option into the SDK's Domain: a host or
// host:port without scheme. An empty endpoint means the SDK's rule
// "<product>.<region>.aliyuncs.com". Only https is accepted: KMS refuses
// anything else and the requests carry credentials.
func parseEndpoint(ep, opt string) (string, error) {
	ep = strings.TrimSpace(ep)
	if ep == "" {
		return "", nil
	}
	if strings.Contains(ep, "://") {
		u, err := url.Parse(ep)
		if err != nil {
			return "", fmt.Errorf("aliyun: %s %q is not a URL or host name: %w", opt, ep, err)
		}
		if !strings.EqualFold(u.Scheme, "https") {
			return "", fmt.Errorf("aliyun: %s %q: only https is supported; give the host name alone", opt, ep)
		}
		if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil || u.Host == "" {
			return "", fmt.Errorf("aliyun: %s %q: give only a host name, optionally with a port", opt, ep)
		}
		return u.Host, nil
	}
	if strings.ContainsAny(ep, "/?@ \t") {
		return "", fmt.Errorf("aliyun: %s %q: give only a host name, optionally with a port", opt, ep)
	}
	return ep, nil
}

// trackingProvider wraps a credentials provider: it serialises calls (the
// SDK's default chain is not safe for concurrent use) and records every
// credential it hands out so that errors can be scrubbed of it.
type trackingProvider struct {
	mu      sync.Mutex
	inner   credentials.CredentialsProvider
	chain   bool // inner is the SDK's default chain
	secrets *secretSet
}

func newTrackingProvider(inner credentials.CredentialsProvider, secrets *secretSet) *trackingProvider {
	p := &trackingProvider{inner: inner, secrets: secrets}
	if inner == nil {
		p.inner = credentials.NewDefaultCredentialsProvider()
		p.chain = true
	}
	return p
}

// GetCredentials implements credentials.CredentialsProvider.
func (p *trackingProvider) GetCredentials() (*credentials.Credentials, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cc, err := p.inner.GetCredentials()
	if err != nil {
		if p.chain {
			// After a failure the SDK's chain only ever retries its last
			// provider; start over next time so that, e.g., credentials
			// that appear later in the environment are found.
			p.inner = credentials.NewDefaultCredentialsProvider()
		}
		return nil, err
	}
	if cc == nil {
		return nil, errors.New("credentials provider returned no credentials")
	}
	p.secrets.add(cc.AccessKeyId, cc.AccessKeySecret, cc.SecurityToken, cc.BearerToken)
	return cc, nil
}

// GetProviderName implements credentials.CredentialsProvider.
func (p *trackingProvider) GetProviderName() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inner.GetProviderName()
}

// envelope holds the fields every RPC response may carry.
type envelope struct {
	RequestID flexString `json:"RequestId"`
	Code      flexString `json:"Code"`
	Message   flexString `json:"Message"`
	Success   *flexBool  `json:"Success"`
}

// call runs one API action with retries: build makes a fresh request for
// each attempt (a request is signed with a new nonce and timestamp every
// time), and out receives the JSON body of a successful answer.
func (c *rpcClient) call(ctx context.Context, action string, build func() requests.AcsRequest, out any) error {
	var last *APIError
	for attempt := 0; ; attempt++ {
		err := c.once(ctx, action, build(), out)
		if err == nil {
			return nil
		}
		if err.cause != nil && last != nil {
			// The context ended during a retry; the throttling that made
			// us retry says more than "request abandoned".
			return c.giveUp(last, attempt, "the context ended", err.cause)
		}
		last = err
		if !err.Retryable || err.cause != nil {
			return err
		}
		if attempt+1 >= c.opts.backoff.Attempts {
			return c.giveUp(last, attempt+1, "the retry budget is spent", nil)
		}
		wait := c.opts.backoff.delay(attempt)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return c.giveUp(last, attempt+1, "the next retry would pass the deadline", context.DeadlineExceeded)
		}
		c.opts.logger.LogAttrs(ctx, slog.LevelWarn, "aliyun: call failed, retrying",
			slog.String("service", c.opts.service),
			slog.String("action", action),
			slog.Int("attempt", attempt+1),
			slog.Duration("wait", wait),
			slog.String("code", err.Code),
			slog.Int("http_status", err.HTTPStatus),
			slog.String("request_id", err.RequestID))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return c.giveUp(last, attempt+1, "the context ended", ctx.Err())
		case <-t.C:
		}
	}
}

// giveUp returns the last error of a retried call, noting why retrying
// stopped; cause, a context error, is kept for errors.Is.
func (c *rpcClient) giveUp(last *APIError, attempts int, why string, cause error) *APIError {
	e := *last
	e.Message = fmt.Sprintf("%s (gave up after %d attempts: %s)", e.Message, attempts, why)
	e.cause = cause
	return &e
}

// once sends one signed request and decodes the answer.
func (c *rpcClient) once(ctx context.Context, action string, req requests.AcsRequest, out any) *APIError {
	fail := func(status int, code, msg, reqID string, retry bool, cause error) *APIError {
		return &APIError{
			Service:    c.opts.service,
			Action:     action,
			HTTPStatus: status,
			Code:       c.secrets.scrub(code),
			Message:    truncate(c.secrets.scrub(msg)),
			RequestID:  c.secrets.scrub(reqID),
			Retryable:  retry,
			Hint:       hint(code, c.opts.optCredentials, c.opts.permission),
			cause:      cause,
		}
	}
	if err := ctx.Err(); err != nil {
		return fail(0, "", "not sent: "+err.Error(), "", false, err)
	}
	if err := c.sign(req); err != nil {
		return fail(0, codeCredentials, "sign the request: "+err.Error(), "", false, nil)
	}
	actx, cancel := context.WithTimeout(ctx, c.opts.requestTimeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(actx, req.GetMethod(), req.BuildUrl(), req.GetBodyReader())
	if err != nil {
		return fail(0, codeTransport, "build the HTTP request: "+err.Error(), "", false, nil)
	}
	for k, v := range req.GetHeaders() {
		hreq.Header[k] = []string{v}
	}
	if h, ok := req.GetHeaders()["Host"]; ok {
		hreq.Host = h
	}
	hreq.Header.Set("User-Agent", c.ua)
	resp, err := c.http.Do(hreq)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return fail(0, codeTransport, "request abandoned: "+cerr.Error(), "", false, cerr)
		}
		var ne net.Error
		timeout := errors.As(err, &ne) && ne.Timeout()
		return fail(0, codeTransport, transportText(err), "", timeout, nil)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return fail(resp.StatusCode, codeTransport, "response abandoned: "+cerr.Error(), "", false, cerr)
		}
		return fail(resp.StatusCode, codeTransport, "read the response: "+transportText(err), "", true, nil)
	}
	if cerr := ctx.Err(); cerr != nil {
		// An answer that raced with the end of the context (seen with a
		// server that answers only once the client hangs up) is not trusted.
		return fail(resp.StatusCode, codeTransport, "response abandoned: "+cerr.Error(), "", false, cerr)
	}
	if len(body) > maxResponseBytes {
		return fail(resp.StatusCode, codeInvalidResponse, fmt.Sprintf("response larger than %d bytes", maxResponseBytes), "", false, nil)
	}
	ok2xx := resp.StatusCode >= 200 && resp.StatusCode < 300
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		if ok2xx {
			// A 2xx body may hold a secret value (KMS); never quote it.
			return fail(resp.StatusCode, codeInvalidResponse, "the response is not the expected JSON: "+jsonErrorText(err), "", false, nil)
		}
		return fail(resp.StatusCode, "", "non-JSON error response: "+string(body), "", isRetryable(resp.StatusCode, ""), nil)
	}
	if !ok2xx {
		msg := string(env.Message)
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		return fail(resp.StatusCode, string(env.Code), msg, string(env.RequestID), isRetryable(resp.StatusCode, string(env.Code)), nil)
	}
	if env.Success != nil && !bool(*env.Success) {
		code := string(env.Code)
		msg := string(env.Message)
		if msg == "" {
			msg = "the response says Success:false"
		} else {
			msg += " (the response says Success:false)"
		}
		return fail(resp.StatusCode, code, msg, string(env.RequestID), isRetryable(resp.StatusCode, code), nil)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return fail(resp.StatusCode, codeInvalidResponse, "decode the response: "+jsonErrorText(err), string(env.RequestID), false, nil)
		}
	}
	return nil
}

// sign fills in the common parameters and the signature through the SDK
// (endpoint resolution, credential provider, HMAC-SHA1 signature v1). A
// panic inside the SDK becomes an error.
func (c *rpcClient) sign(req requests.AcsRequest) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: %v", codePanic, r)
		}
	}()
	req.SetScheme("HTTPS")
	return c.sdk.BuildRequestWithSigner(req, nil)
}

// transportText describes a transport error without its URL: *url.Error
// carries the signed request URL, which scrub would clean, but the URL adds
// nothing for the reader.
func transportText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + " " + hostOf(ue.URL) + ": " + ue.Err.Error()
	}
	return err.Error()
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(endpoint)"
	}
	return u.Scheme + "://" + u.Host
}

// jsonErrorText describes a JSON error without quoting the input: a
// *json.SyntaxError's text never does, but an UnmarshalTypeError names only
// the type and field, so both are safe; anything else is summarised.
func jsonErrorText(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("field %s: got JSON %s, want %s", te.Field, te.Value, te.Type)
	}
	return "invalid JSON"
}

func truncate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxMessageLen {
		return s
	}
	cut := maxMessageLen
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// flexString decodes a JSON string, number or boolean as its text; null is
// empty. Alibaba's envelopes carry Code as a string in errors and as the
// number 200 in alikafka successes.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*f = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
	default:
		*f = flexString(b)
	}
	return nil
}

// flexInt decodes a JSON number or a string holding one; null and "" are 0.
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*f = 0
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s == "" {
			*f = 0
			return nil
		}
		b = []byte(s)
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("not a number")
	}
	i, err := n.Int64()
	if err != nil {
		fl, ferr := n.Float64()
		if ferr != nil {
			return fmt.Errorf("not an integer")
		}
		i = int64(fl)
	}
	*f = flexInt(i)
	return nil
}

// flexBool decodes true/false, "true"/"false" and 1/0; null is false.
type flexBool bool

func (f *flexBool) UnmarshalJSON(b []byte) error {
	s := strings.Trim(strings.TrimSpace(string(b)), `"`)
	switch strings.ToLower(s) {
	case "true", "1":
		*f = true
	case "false", "0", "", "null":
		*f = false
	default:
		return fmt.Errorf("not a boolean")
	}
	return nil
}
