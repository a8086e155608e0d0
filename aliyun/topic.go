package aliyun

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/auth/credentials"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/alikafka"

	"github.com/ingestkit/ingest/route"
)

// DefaultRemark is the remark of topics created by [TopicManager.EnsureTopics]
// and of CreateTopic calls without one. ApsaraMQ requires a remark and
// documents the topic-name character set for it (letters, digits, '_', '-';
// 3 to 64 characters), which this value keeps to.
const DefaultRemark = "created-by-ingest"

// Defaults of TopicConfig.
const (
	defaultPageSize     = 1000
	defaultPollInterval = 2 * time.Second
	defaultReadyTimeout = 5 * time.Minute
	maxPages            = 10000
)

// chainNote names the SDK's default credential chain in hints.
const chainNote = "not set, so the SDK default chain was used: ALIBABA_CLOUD_ACCESS_KEY_ID, ALIBABA_CLOUD_ACCESS_KEY_SECRET and ALIBABA_CLOUD_SECURITY_TOKEN, an OIDC role (ALIBABA_CLOUD_ROLE_ARN, ALIBABA_CLOUD_OIDC_PROVIDER_ARN, ALIBABA_CLOUD_OIDC_TOKEN_FILE), ~/.aliyun/config.json, ~/.alibabacloud/credentials, then the ECS RAM role"

// TopicConfig configures a [TopicManager]. The first six fields are the
// pipeline's aliyun.kafka.* sink options.
type TopicConfig struct {
	// AccessKeyID and AccessKeySecret are aliyun.kafka.accessKeyId and
	// aliyun.kafka.accessKeySecret, an AccessKey pair allowed to call the
	// ApsaraMQ for Kafka OpenAPI (RAM actions alikafka:ListTopic and
	// alikafka:CreateTopic on the instance).
	//
	// When both are empty, and SecurityToken too, the SDK's default
	// credential chain is used, in this order: the environment variables
	// ALIBABA_CLOUD_ACCESS_KEY_ID, ALIBABA_CLOUD_ACCESS_KEY_SECRET and the
	// optional ALIBABA_CLOUD_SECURITY_TOKEN; an OIDC role (ACK RRSA:
	// ALIBABA_CLOUD_ROLE_ARN, ALIBABA_CLOUD_OIDC_PROVIDER_ARN,
	// ALIBABA_CLOUD_OIDC_TOKEN_FILE); the Alibaba Cloud CLI profile
	// (~/.aliyun/config.json, ALIBABA_CLOUD_PROFILE); the credentials file
	// (~/.alibabacloud/credentials, ALIBABA_CLOUD_CREDENTIALS_FILE); the ECS
	// instance RAM role (metadata service, disabled by
	// ALIBABA_CLOUD_ECS_METADATA_DISABLED=true); ALIBABA_CLOUD_CREDENTIALS_URI.
	// Credentials are looked up at the first call, not by NewTopicManager.
	// Setting only one of the pair is an error.
	AccessKeyID     string
	AccessKeySecret string
	// SecurityToken is an STS token that goes with a temporary AccessKey
	// pair; empty for a long-term AccessKey.
	SecurityToken string
	// InstanceID is aliyun.kafka.instanceId, e.g. alikafka_post-cn-xxxx.
	// Required.
	InstanceID string
	// Endpoint is aliyun.kafka.endpoint, the OpenAPI endpoint (not a broker
	// address): a host name such as alikafka.cn-hangzhou.aliyuncs.com,
	// optionally with a port or an https:// prefix. Requests always use
	// HTTPS. Empty means alikafka.<RegionID>.aliyuncs.com.
	Endpoint string
	// RegionID is aliyun.kafka.regionId, e.g. cn-hangzhou. Required.
	RegionID string

	// CompactTopics makes EnsureTopics create log-compacted topics, which
	// ApsaraMQ offers only on local storage (CreateTopic with
	// LocalTopic=true and CompactTopic=true), and local storage only on
	// Professional Edition instances, where such a topic also uses three
	// times its partition count of the instance's quota. Leave it false on
	// Standard Edition and serverless instances: their cloud-storage topics
	// cannot be compacted, so consumers must keep the latest record per key
	// themselves.
	CompactTopics bool
	// Remark is the remark of topics EnsureTopics creates; default
	// [DefaultRemark].
	Remark string

	// PageSize is the GetTopicList page size; default 1000.
	PageSize int
	// PollInterval is the pause between GetTopicStatus polls in WaitReady;
	// default 2s.
	PollInterval time.Duration
	// ReadyTimeout bounds each WaitReady call in addition to its context;
	// default 5m.
	ReadyTimeout time.Duration
	// RequestTimeout bounds each HTTP request; default 15s.
	RequestTimeout time.Duration
	// Backoff bounds the retries of throttled calls.
	Backoff Backoff

	// TLSConfig, if set, is the TLS configuration of the default transport,
	// e.g. one trusting a test server's certificate. Ignored when Transport
	// is set.
	TLSConfig *tls.Config
	// Transport, if set, replaces the default transport (a clone of
	// http.DefaultTransport, so proxies come from HTTPS_PROXY/NO_PROXY).
	Transport http.RoundTripper
	// Logger receives retry and creation messages; default slog.Default().
	// No credential or signed URL is ever logged.
	Logger *slog.Logger
}

// TopicInfo describes a topic as GetTopicList reports it.
type TopicInfo struct {
	// Name is the topic name.
	Name string
	// Partitions is the partition count.
	Partitions int
	// Compact reports a log-compacted topic (cleanup.policy=compact).
	Compact bool
	// LocalStorage reports a local-storage (ISR) topic rather than cloud
	// storage.
	LocalStorage bool
	// Status is the topic's status code; 0 means in service.
	Status int
	// StatusName is the status in words, in the console's language.
	StatusName string
	// Remark is the topic's remark.
	Remark string
	// AutoCreated reports a topic the broker created on first use.
	AutoCreated bool
	// Created is the creation time, zero if unknown.
	Created time.Time
}

// InService reports whether the topic can be used: Status 0.
func (t TopicInfo) InService() bool { return t.Status == 0 }

// TopicManager lists and creates the topics of one ApsaraMQ for Kafka
// instance through its OpenAPI (product alikafka, version 2019-09-16),
// because ApsaraMQ does not create topics over the Kafka protocol.
//
// Throttled calls are retried with exponential backoff and jitter, bounded
// by [Backoff] and the context; every other failure is returned at once as
// an [*APIError]. No error or log message holds a credential or a request
// signature. A TopicManager is safe for concurrent use and starts no
// goroutines.
type TopicManager struct {
	rpc          *rpcClient
	instanceID   string
	compact      bool
	remark       string
	pageSize     int
	pollInterval time.Duration
	readyTimeout time.Duration
	log          *slog.Logger

	mu         sync.Mutex
	partitions map[string]int // known partition counts, for WaitReady
}

// NewTopicManager checks cfg and returns a TopicManager. It does no I/O.
func NewTopicManager(cfg TopicConfig) (*TopicManager, error) {
	creds := "aliyun.kafka.accessKeyId/accessKeySecret"
	if cfg.AccessKeyID == "" && cfg.AccessKeySecret == "" && cfg.SecurityToken == "" {
		creds += " (" + chainNote + ")"
	}
	rpc, err := newRPCClient(clientOptions{
		service:         "alikafka",
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
		optRegion:       "aliyun.kafka.regionId",
		optEndpoint:     "aliyun.kafka.endpoint",
		optCredentials:  creds,
		permission:      "alikafka:ListTopic and alikafka:CreateTopic on the instance",
		newSDKClient: func(region string, c *sdk.Config, p credentials.CredentialsProvider) (*sdk.Client, error) {
			cl, err := alikafka.NewClientWithOptions(region, c, p)
			if err != nil {
				return nil, err
			}
			return &cl.Client, nil
		},
	})
	if cfg.InstanceID == "" {
		err = errors.Join(err, errors.New("aliyun: aliyun.kafka.instanceId is required"))
	}
	if err != nil {
		return nil, err
	}
	m := &TopicManager{
		rpc:          rpc,
		instanceID:   cfg.InstanceID,
		compact:      cfg.CompactTopics,
		remark:       cfg.Remark,
		pageSize:     cfg.PageSize,
		pollInterval: cfg.PollInterval,
		readyTimeout: cfg.ReadyTimeout,
		log:          rpc.opts.logger,
		partitions:   make(map[string]int),
	}
	if m.remark == "" {
		m.remark = DefaultRemark
	}
	if m.pageSize <= 0 {
		m.pageSize = defaultPageSize
	}
	if m.pollInterval <= 0 {
		m.pollInterval = defaultPollInterval
	}
	if m.readyTimeout <= 0 {
		m.readyTimeout = defaultReadyTimeout
	}
	return m, nil
}

// topicListResponse is the GetTopicList payload.
type topicListResponse struct {
	Total     flexInt `json:"Total"`
	TopicList struct {
		TopicVO []struct {
			Topic        flexString `json:"Topic"`
			Remark       flexString `json:"Remark"`
			StatusName   flexString `json:"StatusName"`
			Status       flexInt    `json:"Status"`
			PartitionNum flexInt    `json:"PartitionNum"`
			CreateTime   flexInt    `json:"CreateTime"`
			CompactTopic flexBool   `json:"CompactTopic"`
			LocalTopic   flexBool   `json:"LocalTopic"`
			AutoCreate   flexBool   `json:"AutoCreate"`
		} `json:"TopicVO"`
	} `json:"TopicList"`
}

// ListTopics returns every topic of the instance by name, reading all pages
// of GetTopicList.
func (m *TopicManager) ListTopics(ctx context.Context) (map[string]TopicInfo, error) {
	out := make(map[string]TopicInfo)
	for page := 1; ; page++ {
		var resp topicListResponse
		err := m.rpc.call(ctx, "GetTopicList", func() requests.AcsRequest {
			r := alikafka.CreateGetTopicListRequest()
			r.InstanceId = m.instanceID
			r.CurrentPage = strconv.Itoa(page)
			r.PageSize = strconv.Itoa(m.pageSize)
			return r
		}, &resp)
		if err != nil {
			return nil, m.rpc.secrets.guard(err)
		}
		for _, t := range resp.TopicList.TopicVO {
			info := TopicInfo{
				Name:         string(t.Topic),
				Partitions:   int(t.PartitionNum),
				Compact:      bool(t.CompactTopic),
				LocalStorage: bool(t.LocalTopic),
				Status:       int(t.Status),
				StatusName:   string(t.StatusName),
				Remark:       string(t.Remark),
				AutoCreated:  bool(t.AutoCreate),
			}
			if t.CreateTime > 0 {
				info.Created = time.UnixMilli(int64(t.CreateTime))
			}
			out[info.Name] = info
			m.remember(info.Name, info.Partitions)
		}
		n := len(resp.TopicList.TopicVO)
		total := int(resp.Total)
		// Stop on a short or empty page or once Total is reached; and one
		// page after Total says the last one is, or after maxPages without
		// a Total, so that a server ignoring CurrentPage cannot loop us.
		lastPage := maxPages
		if total > 0 {
			lastPage = (total+m.pageSize-1)/m.pageSize + 1
		}
		if n == 0 || n < m.pageSize || (total > 0 && len(out) >= total) || page >= lastPage {
			return out, nil
		}
	}
}

// CreateTopic creates a topic with the given partition count and remark
// (empty means [DefaultRemark]). compact asks for a log-compacted topic,
// which ApsaraMQ allows only on local storage, so it also sends
// LocalTopic=true; see [TopicConfig.CompactTopics] for the editions that
// allow it. A topic that already exists (BIZ_TOPIC_ALREADY_EXISTS) counts as
// created, whatever its settings. name must follow ApsaraMQ's rules (3 to
// 64 ASCII letters, digits, '_' or '-'), checked before any call.
func (m *TopicManager) CreateTopic(ctx context.Context, name string, partitions int, compact bool, remark string) error {
	if err := checkCreate(name, partitions); err != nil {
		return err
	}
	if remark == "" {
		remark = m.remark
	}
	err := m.rpc.call(ctx, "CreateTopic", func() requests.AcsRequest {
		r := alikafka.CreateCreateTopicRequest()
		r.InstanceId = m.instanceID
		r.Topic = name
		r.Remark = remark
		r.PartitionNum = strconv.Itoa(partitions)
		if compact {
			r.LocalTopic = requests.NewBoolean(true)
			r.CompactTopic = requests.NewBoolean(true)
		}
		return r
	}, nil)
	var ae *APIError
	switch {
	case err == nil:
		m.remember(name, partitions)
		m.log.LogAttrs(ctx, slog.LevelInfo, "aliyun: created topic",
			slog.String("topic", name), slog.Int("partitions", partitions), slog.Bool("compact", compact))
		return nil
	case errors.As(err, &ae) && ae.Code == codeTopicExists:
		// Its partition count may differ from the one asked for; WaitReady
		// must not wait for partitions that will never exist.
		m.forget(name)
		m.log.LogAttrs(ctx, slog.LevelDebug, "aliyun: topic already exists",
			slog.String("topic", name), slog.String("request_id", ae.RequestID))
		return nil
	}
	return m.rpc.secrets.guard(err)
}

func checkCreate(name string, partitions int) error {
	var errs []error
	if err := route.ValidateApsaraTopic(name); err != nil {
		errs = append(errs, fmt.Errorf("aliyun: create topic: %w", err))
	}
	if partitions < 1 {
		errs = append(errs, fmt.Errorf("aliyun: create topic %q: partition count %d; ApsaraMQ allows 1 to 360 (more by ticket)", name, partitions))
	}
	return errors.Join(errs...)
}

// topicStatusResponse is the GetTopicStatus payload. The offsets are under
// TopicStatus.OffsetTable.OffsetTable, the list being named like its
// parent.
type topicStatusResponse struct {
	TopicStatus struct {
		TotalCount  flexInt `json:"TotalCount"`
		OffsetTable struct {
			OffsetTable []struct {
				Partition flexInt `json:"Partition"`
			} `json:"OffsetTable"`
		} `json:"OffsetTable"`
	} `json:"TopicStatus"`
}

// WaitReady polls GetTopicStatus every PollInterval until the topic can
// take records, and fails when ctx ends or ReadyTimeout passes first.
//
// GetTopicStatus has no status field: a topic counts as ready once its
// offset table lists every partition, the count being the one this
// TopicManager created the topic with or last saw in ListTopics; for a
// topic it knows nothing about, one partition is enough.
// BIZ_TOPIC_NOT_FOUND while waiting means "not yet".
func (m *TopicManager) WaitReady(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, m.readyTimeout)
	defer cancel()
	want := max(m.known(name), 1)
	for polls := 1; ; polls++ {
		var resp topicStatusResponse
		err := m.rpc.call(ctx, "GetTopicStatus", func() requests.AcsRequest {
			r := alikafka.CreateGetTopicStatusRequest()
			r.InstanceId = m.instanceID
			r.Topic = name
			return r
		}, &resp)
		var ae *APIError
		switch {
		case err == nil:
			seen := make(map[int64]bool)
			for _, o := range resp.TopicStatus.OffsetTable.OffsetTable {
				seen[int64(o.Partition)] = true
			}
			if len(seen) >= want {
				return nil
			}
		case errors.As(err, &ae) && ae.Code == codeTopicNotFound:
		case ctx.Err() != nil:
			return fmt.Errorf("aliyun: topic %q is not ready after %d status polls: %w", name, polls-1, ctx.Err())
		default:
			return m.rpc.secrets.guard(err)
		}
		t := time.NewTimer(m.pollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("aliyun: topic %q is not ready after %d status polls: %w", name, polls, ctx.Err())
		case <-t.C:
		}
	}
}

// EnsureTopics makes sure every named topic exists and is ready: it lists
// the instance's topics once, creates the missing ones one after another
// (with the given partition count, TopicConfig.CompactTopics and
// TopicConfig.Remark), then waits until the created ones, and any listed one
// not in service, are ready. Names are checked first, all at once; a
// duplicate name counts once. The first failure stops it, leaving the
// topics created so far in place; calling it again continues.
func (m *TopicManager) EnsureTopics(ctx context.Context, names []string, partitions int) error {
	var uniq []string
	seen := make(map[string]bool, len(names))
	var errs []error
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		uniq = append(uniq, n)
		if err := route.ValidateApsaraTopic(n); err != nil {
			errs = append(errs, fmt.Errorf("aliyun: ensure topics: %w", err))
		}
	}
	if partitions < 1 {
		errs = append(errs, fmt.Errorf("aliyun: ensure topics: partition count %d; ApsaraMQ allows 1 to 360 (more by ticket)", partitions))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if len(uniq) == 0 {
		return nil
	}
	existing, err := m.ListTopics(ctx)
	if err != nil {
		return err
	}
	var wait []string
	for _, n := range uniq {
		if t, ok := existing[n]; ok {
			if !t.InService() {
				wait = append(wait, n)
			}
			continue
		}
		if err := m.CreateTopic(ctx, n, partitions, m.compact, ""); err != nil {
			return err
		}
		wait = append(wait, n)
	}
	for _, n := range wait {
		if err := m.WaitReady(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

func (m *TopicManager) remember(name string, partitions int) {
	m.mu.Lock()
	m.partitions[name] = partitions
	m.mu.Unlock()
}

func (m *TopicManager) forget(name string) {
	m.mu.Lock()
	delete(m.partitions, name)
	m.mu.Unlock()
}

func (m *TopicManager) known(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.partitions[name]
}
