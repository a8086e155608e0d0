package aliyun

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ingestkit/ingest/aliyun/aliyuntest"
)

// newFake starts a fake OpenAPI server for the test.
func newFake(t *testing.T) *aliyuntest.Server {
	t.Helper()
	s := aliyuntest.NewServer()
	t.Cleanup(s.Close)
	return s
}

// fastBackoff keeps retry tests short.
var fastBackoff = Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond, Attempts: 5}

// topicConfig is a TopicConfig pointing at s with its default credentials.
func topicConfig(s *aliyuntest.Server, log *slog.Logger) TopicConfig {
	return TopicConfig{
		AccessKeyID:     aliyuntest.AccessKeyID,
		AccessKeySecret: aliyuntest.AccessKeySecret,
		InstanceID:      aliyuntest.InstanceID,
		Endpoint:        s.Host(),
		RegionID:        aliyuntest.RegionID,
		TLSConfig:       s.TLSConfig(),
		PollInterval:    time.Millisecond,
		Backoff:         fastBackoff,
		Logger:          log,
	}
}

func newManager(t *testing.T, cfg TopicConfig) *TopicManager {
	t.Helper()
	m, err := NewTopicManager(cfg)
	if err != nil {
		t.Fatalf("NewTopicManager: %v", err)
	}
	return m
}

// logBuffer collects slog output for inspection.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testLogger returns a debug-level logger writing into a buffer.
func testLogger() (*slog.Logger, *logBuffer) {
	buf := &logBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// quietLogger discards everything.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
