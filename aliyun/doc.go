// Package aliyun talks to the Alibaba Cloud OpenAPIs the pipeline needs:
// ApsaraMQ for Kafka, to create the topics a sink writes to (the broker does
// not create them over the Kafka protocol), and KMS Secrets Manager, to
// resolve ${secret_values.NAME} placeholders.
//
// Key types:
//
//   - [TopicManager], configured from the five aliyun.kafka.* sink options
//     through [TopicConfig]: [TopicManager.ListTopics],
//     [TopicManager.CreateTopic], [TopicManager.WaitReady] and
//     [TopicManager.EnsureTopics].
//   - [KMSProvider]: [KMSProvider.Lookup] returns a secret's current value,
//     or an error matching [ErrNotFound] when there is no such secret.
//   - [APIError]: every failed call, with the server's Code, Message and
//     RequestId, whether it was retryable, and a hint naming what to fix.
//
// Requests are built, signed (HMAC-SHA1 signature version 1) and given
// credentials by github.com/aliyun/alibaba-cloud-sdk-go, but sent and decoded
// here, because the SDK's own call path has traps (measured on v1.63.107):
// no context support, a panic on an error envelope with a numeric Code, no
// error for a 2xx answer with Success:false, transport errors that quote the
// signed URL with the AccessKeyId, Signature and SecurityToken, and a data
// race between concurrent calls on one client. Here every call honours its
// context, Success:false is an error, numeric codes are read as text, and
// every error and log message is scrubbed of the AccessKey ID and secret, STS
// tokens and signatures before it leaves the package.
//
// Throttling (Throttling, Throttling.User, Rejected.Throttling,
// ONS_SYSTEM_FLOW_CONTROL, ServiceUnavailable, HTTP 429 and 503) is retried
// with exponential backoff and jitter, bounded by [Backoff] and the context;
// every other failure is returned at once.
//
// Package aliyuntest provides a fake OpenAPI server that checks request
// signatures, for tests of this package and of its users.
//
// Values of this package are safe for concurrent use; none starts a
// goroutine of its own.
package aliyun
