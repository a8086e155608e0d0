package aliyun

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotFound is returned, wrapped, by [KMSProvider.Lookup] when KMS Secrets
// Manager has no secret of the given name (KMS error code
// Forbidden.ResourceNotFound, or an HTTP 404 without a code). Every other
// KMS failure is an [*APIError] that does not match ErrNotFound.
//
// The secrets package has its own not-found sentinel; whoever adapts
// KMSProvider to that package maps this one onto it with errors.Is, so that a
// missing KMS secret lets the resolver report "unresolved placeholder" while
// any other KMS failure stops resolution.
var ErrNotFound = errors.New("aliyun: secret not found")

// APIError is a failed call to an Alibaba Cloud OpenAPI (ApsaraMQ for Kafka
// or KMS): an error envelope, a 2xx response with Success:false, an
// undecodable response, a transport failure or unusable credentials.
//
// Every text field has been scrubbed: it holds no AccessKey ID, AccessKey
// secret, STS token or request signature, and the error does not wrap the
// transport error whose text held the signed URL.
type APIError struct {
	// Service is the OpenAPI product: "alikafka" or "kms".
	Service string
	// Action is the API operation, e.g. "CreateTopic".
	Action string
	// HTTPStatus is the HTTP status of the response, or 0 when no response
	// arrived.
	HTTPStatus int
	// Code is the error code of the envelope, such as
	// "SignatureDoesNotMatch" or "Throttling.User". A numeric code is given
	// in decimal. Errors that are not from the server use codes of their own:
	// "Transport", "InvalidResponse", "CredentialsUnavailable" and
	// "SDK.Panic".
	Code string
	// Message is the server's message, or a description of a local failure.
	Message string
	// RequestID is the server's RequestId, for Alibaba Cloud support.
	RequestID string
	// Retryable reports that the same call may succeed later: throttling
	// (any code containing "Throttling", ONS_SYSTEM_FLOW_CONTROL,
	// ServiceUnavailable, SystemBusy), HTTP 429 and 503, and transport
	// timeouts. The package has already retried it as far as its backoff
	// allowed when the error is returned.
	Retryable bool
	// Hint says what to change, when the code points at a likely cause,
	// e.g. "check aliyun.kafka.accessKeyId/accessKeySecret".
	Hint string

	// cause is a context error, kept so that errors.Is(err,
	// context.DeadlineExceeded) works; never a transport error.
	cause error
}

// Error formats the error as "aliyun: <service> <action>: <code>: <message>
// (HTTP <status>, request id <id>); <hint>".
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "aliyun: %s %s: ", e.Service, e.Action)
	if e.Code != "" {
		b.WriteString(e.Code)
		if e.Message != "" {
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Message)
	var meta []string
	if e.HTTPStatus != 0 {
		meta = append(meta, fmt.Sprintf("HTTP %d", e.HTTPStatus))
	}
	if e.RequestID != "" {
		meta = append(meta, "request id "+e.RequestID)
	}
	if len(meta) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(meta, ", "))
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap returns the context error that ended the call, if any. It is
// context.DeadlineExceeded too when retrying stopped because the next
// backoff wait would have ended after the context's deadline.
func (e *APIError) Unwrap() error { return e.cause }

// Codes with a meaning this package acts on.
const (
	codeTopicExists   = "BIZ_TOPIC_ALREADY_EXISTS"
	codeTopicNotFound = "BIZ_TOPIC_NOT_FOUND"
	codeKMSNotFound   = "Forbidden.ResourceNotFound"

	codeTransport       = "Transport"
	codeInvalidResponse = "InvalidResponse"
	codeCredentials     = "CredentialsUnavailable"
	codePanic           = "SDK.Panic"
)

// isRetryable classifies a server answer. Throttling is the only kind of
// server error worth retrying: the rest (authentication, permission, quota,
// invalid names) come back the same however often they are sent.
func isRetryable(status int, code string) bool {
	switch {
	case status == 429, status == 503:
		return true
	case strings.Contains(strings.ToLower(code), "throttling"):
		// Throttling, Throttling.User, Throttling.Api, Rejected.Throttling.
		return true
	case code == "ONS_SYSTEM_FLOW_CONTROL", code == "ServiceUnavailable", code == "SystemBusy":
		return true
	case code == "SignatureNonceUsed":
		// A nonce collision; a new request has a new nonce.
		return true
	}
	return false
}

// hints says what to do about an error code; credentials is the text naming
// where the credentials came from, permission the RAM actions needed.
func hint(code, credentials, permission string) string {
	switch {
	case code == "SignatureDoesNotMatch", code == "IncompleteSignature",
		strings.HasPrefix(code, "InvalidAccessKeyId"), code == "InvalidAccessKeySecret":
		return "check " + credentials
	case strings.HasPrefix(code, "InvalidSecurityToken"):
		return "the STS security token is invalid or expired; renew it (" + credentials + ")"
	case strings.HasPrefix(code, "InvalidTimeStamp"):
		return "the local clock differs from Alibaba Cloud's by more than 15 minutes; fix the system time"
	case code == codeKMSNotFound:
		return ""
	case strings.HasPrefix(code, "Forbidden"), code == "NoPermission":
		return "grant the RAM identity " + permission
	case code == codeCredentials:
		return "set " + credentials
	}
	return ""
}
