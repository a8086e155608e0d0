// Package aliyuntest is a fake Alibaba Cloud OpenAPI server for tests: an
// HTTPS httptest server that answers the ApsaraMQ for Kafka actions
// CreateTopic, GetTopicList and GetTopicStatus (product alikafka, version
// 2019-09-16) and the KMS action GetSecretValue (version 2016-01-20) in the
// RPC style the real endpoints use, with their JSON envelopes.
//
// Like the real gateway it checks every request before answering: the
// common parameters, the AccessKey ID, the STS token registered with it, the
// timestamp (15 minutes of skew at most), that the nonce is fresh, and the
// HMAC-SHA1 signature, which it computes itself ([StringToSign], [Sign]).
// A failed check gets the gateway's error envelope with a string Code
// (InvalidAccessKeyId.NotFound, SignatureDoesNotMatch with the server's
// string-to-sign in the message, as the real gateway does, and so on).
//
// Tests program failures with [Server.Inject] and the [Response] presets:
// BIZ_TOPIC_ALREADY_EXISTS, Throttling.User N times then success, a forced
// SignatureDoesNotMatch, Success:false in an HTTP 200, a numeric Code, an
// error page echoing the signed URL. The server records created topics and
// every call, and makes a new topic ready after [Server.SetReadyAfter]
// status polls. [Server.SetOnCreate] lets a test make each CreateTopic do
// something real, such as create the topic on a Kafka broker.
//
// Codes and values the real service was not observed to use, and which the
// fake had to choose, are marked "(fake's choice)" in the documentation.
//
// A Server is safe for concurrent use.
package aliyuntest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Default identity of a new Server.
const (
	// AccessKeyID is the AccessKey ID a new Server accepts.
	AccessKeyID = "LTAI5tFakeAccessKeyId0001"
	// AccessKeySecret is the secret that goes with AccessKeyID.
	AccessKeySecret = "FakeAccessKeySecret0123456789abcd"
	// InstanceID is a plausible ApsaraMQ instance ID; the server accepts any.
	InstanceID = "alikafka_post-cn-fake0000001"
	// RegionID is the region the envelopes' HostId names.
	RegionID = "cn-hangzhou"
)

// API versions the server checks.
const (
	alikafkaVersion = "2019-09-16"
	kmsVersion      = "2016-01-20"
)

// Forever makes an injected response answer every matching request.
const Forever = -1

// maxSkew is the gateway's tolerance for the Timestamp parameter.
const maxSkew = 15 * time.Minute

// Topic is a topic as the server holds it.
type Topic struct {
	// Name is the topic name.
	Name string
	// InstanceID is the instance it was created in.
	InstanceID string
	// Partitions is the PartitionNum it was created with.
	Partitions int
	// Compact is the CompactTopic flag.
	Compact bool
	// Local is the LocalTopic flag.
	Local bool
	// Remark is the remark.
	Remark string
	// StatusPolls counts GetTopicStatus calls for it.
	StatusPolls int
	// Ready reports whether GetTopicStatus lists its partitions yet.
	Ready bool

	readyAfter int
	created    time.Time
}

// Call is one request the server answered.
type Call struct {
	// Action is the Action parameter.
	Action string
	// Params holds every parameter, the credentials and Signature included.
	Params url.Values
	// Status is the HTTP status of the answer.
	Status int
	// Code is the Code of the answer: "200" for success.
	Code string
}

// Response is a programmed answer; see the presets such as
// [ThrottlingUser].
type Response struct {
	// Status is the HTTP status.
	Status int
	// Code is the envelope's Code: a string, a number, or nil to leave it
	// out.
	Code any
	// Message is the envelope's Message. For SignatureDoesNotMatch an empty
	// Message becomes the gateway's text with the server's string-to-sign.
	Message string
	// Success, if set, adds a Success field.
	Success *bool
	// RawBody, if set, is sent instead of an envelope, as text/plain.
	RawBody string
	// EchoRequest sends a text/plain error page that quotes the request
	// URL, as some proxies do.
	EchoRequest bool
}

type fault struct {
	action string
	left   int
	resp   Response
}

type credential struct{ secret, token string }

type secret struct {
	data, dataType string
}

// Server is the fake OpenAPI server. Create it with [NewServer] and stop it
// with Close.
type Server struct {
	srv *httptest.Server

	mu         sync.Mutex
	creds      map[string]credential
	topics     map[string]*Topic
	order      []string
	secrets    map[string]secret
	faults     []*fault
	readyAfter int
	nonces     map[string]bool
	calls      []Call
	seq        int
	now        func() time.Time
	onCreate   func(name string, partitions int, compact bool) error
}

// NewServer starts a Server on a loopback port. It accepts [AccessKeyID]
// with [AccessKeySecret] and makes new topics ready at their first status
// poll.
func NewServer() *Server {
	s := &Server{
		creds:   map[string]credential{AccessKeyID: {secret: AccessKeySecret}},
		topics:  make(map[string]*Topic),
		secrets: make(map[string]secret),
		nonces:  make(map[string]bool),
		now:     time.Now,
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	// Clients that give up mid-handshake are expected in tests.
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.srv.StartTLS()
	return s
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// URL is the server's base URL, https://127.0.0.1:port.
func (s *Server) URL() string { return s.srv.URL }

// Host is the server's host:port, usable as an endpoint option.
func (s *Server) Host() string { return strings.TrimPrefix(s.srv.URL, "https://") }

// TLSConfig returns a client TLS configuration that trusts the server's
// certificate (and verifies it normally).
func (s *Server) TLSConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(s.srv.Certificate())
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// CertificatePEM returns the server's certificate in PEM, for a client in
// another process: a Go program trusts it when SSL_CERT_FILE names a file
// holding it.
func (s *Server) CertificatePEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
}

// AddCredential makes the server accept an AccessKey pair; with a non-empty
// token, requests with that ID must carry it as SecurityToken (STS).
func (s *Server) AddCredential(id, secret, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.creds[id] = credential{secret: secret, token: token}
}

// SetReadyAfter makes topics created from now on answer their first k
// GetTopicStatus polls with an empty offset table ("not ready"), and the
// polls after that with one entry per partition.
func (s *Server) SetReadyAfter(k int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readyAfter = max(k, 0)
}

// SetOnCreate installs a hook that every CreateTopic the server accepts
// calls before it records the new topic, with the topic's name,
// PartitionNum and CompactTopic flag: a test can create the topic on a real
// broker there, so that data written after the OpenAPI call finds it. The
// hook runs without the server's lock held, so it may call the server's
// methods (AddTopic, for example, to simulate another client creating a
// topic at the same moment). When it returns an error the request is
// answered with HTTP 500 and Code ONS_SYSTEM_ERROR (the fake's choice of
// status), quoting the error, and no topic is recorded. nil removes the
// hook. Injected answers ([Server.Inject]) take precedence: the hook is not
// called for a request answered by one.
func (s *Server) SetOnCreate(f func(name string, partitions int, compact bool) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onCreate = f
}

// AddTopic adds a ready topic to InstanceID, as if created earlier.
func (s *Server) AddTopic(name string, partitions int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addTopic(&Topic{Name: name, InstanceID: InstanceID, Partitions: partitions, Remark: "preexisting", Ready: true})
}

func (s *Server) addTopic(t *Topic) {
	if _, ok := s.topics[t.Name]; !ok {
		s.order = append(s.order, t.Name)
	}
	t.created = s.now()
	s.topics[t.Name] = t
}

// Topic returns a copy of the named topic.
func (s *Server) Topic(name string) (Topic, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.topics[name]
	if !ok {
		return Topic{}, false
	}
	return *t, true
}

// Topics returns copies of all topics, sorted by name.
func (s *Server) Topics() []Topic {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Topic, 0, len(s.topics))
	for _, t := range s.topics {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// PutSecret stores a text secret for GetSecretValue.
func (s *Server) PutSecret(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets[name] = secret{data: value, dataType: "text"}
}

// PutBinarySecret stores a binary secret, served base64-encoded with
// SecretDataType "binary".
func (s *Server) PutBinarySecret(name string, value []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets[name] = secret{data: base64.StdEncoding.EncodeToString(value), dataType: "binary"}
}

// Inject makes the server answer the next times requests for action ("" for
// any action) with r, after the request passed the signature checks.
// times may be [Forever]. Injected answers are used in the order injected.
func (s *Server) Inject(action string, times int, r Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{action: action, left: times, resp: r})
}

// ClearInjected drops every injected answer not yet used.
func (s *Server) ClearInjected() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// Calls returns the calls answered so far for action ("" for all), oldest
// first.
func (s *Server) Calls(action string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if action == "" || c.Action == action {
			c.Params = cloneValues(c.Params)
			out = append(out, c)
		}
	}
	return out
}

// CallCount returns how many calls for action ("" for all) were answered.
func (s *Server) CallCount(action string) int {
	return len(s.Calls(action))
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// Presets of injected answers.

// AlreadyExists is CreateTopic's answer for an existing topic, as the
// server also gives it on its own: BIZ_TOPIC_ALREADY_EXISTS (HTTP 400 is the
// fake's choice; the real status is not documented).
func AlreadyExists() Response {
	return Response{Status: http.StatusBadRequest, Code: "BIZ_TOPIC_ALREADY_EXISTS",
		Message: "specified topic already exists.. Please check and try again later"}
}

// ThrottlingUser is the gateway's flow-control answer: Throttling.User,
// HTTP 400.
func ThrottlingUser() Response {
	return Response{Status: http.StatusBadRequest, Code: "Throttling.User",
		Message: "Request was denied due to user flow control."}
}

// ServiceUnavailable is an HTTP 503 ServiceUnavailable answer.
func ServiceUnavailable() Response {
	return Response{Status: http.StatusServiceUnavailable, Code: "ServiceUnavailable",
		Message: "The request has failed due to a temporary failure of the server."}
}

// SignatureMismatch forces SignatureDoesNotMatch (HTTP 400) with the
// gateway's message, which quotes the string-to-sign and with it the
// AccessKeyId and any SecurityToken.
func SignatureMismatch() Response {
	return Response{Status: http.StatusBadRequest, Code: "SignatureDoesNotMatch"}
}

// SuccessFalse is an HTTP 200 answer whose envelope says Success:false.
func SuccessFalse(code any, message string) Response {
	f := false
	return Response{Status: http.StatusOK, Code: code, Message: message, Success: &f}
}

// NumericCode is an error answer whose Code is the number status, which
// makes the SDK's own response path panic.
func NumericCode(status int) Response {
	return Response{Status: status, Code: status, Message: "numeric error code"}
}

// Forbidden is a RAM permission failure: Forbidden.RAM, HTTP 403.
func Forbidden() Response {
	return Response{Status: http.StatusForbidden, Code: "Forbidden.RAM",
		Message: "User not authorized to operate on the specified resource, or this API doesn't support RAM."}
}

// EchoURL is a text/plain error page with the given status that quotes the
// signed request URL.
func EchoURL(status int) Response {
	return Response{Status: status, EchoRequest: true}
}

// serve checks a request like the gateway and dispatches it.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.reply(w, r, "", nil, http.StatusBadRequest, errEnv("InvalidParameter", "cannot parse the request: "+err.Error()))
		return
	}
	params := r.Form
	action := params.Get("Action")
	status, body := s.handle(r, action, params)
	s.reply(w, r, action, params, status, body)
}

// handle returns the HTTP status and the body (a map for JSON, or a
// rawBody).
func (s *Server) handle(r *http.Request, action string, p url.Values) (int, any) {
	s.mu.Lock()
	locked := true
	defer func() {
		if locked {
			s.mu.Unlock()
		}
	}()
	if st, body, ok := s.checkRequest(r, action, p); !ok {
		return st, body
	}
	for i, f := range s.faults {
		if (f.action == "" || f.action == action) && f.left != 0 {
			if f.left > 0 {
				f.left--
			}
			if f.left == 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
			return s.render(f.resp, r, p)
		}
	}
	switch action {
	case "CreateTopic":
		t, status, body := s.checkCreateTopic(p)
		if t == nil {
			return status, body
		}
		if hook := s.onCreate; hook != nil {
			s.mu.Unlock()
			locked = false
			err := hook(t.Name, t.Partitions, t.Compact)
			s.mu.Lock()
			locked = true
			if err != nil {
				return http.StatusInternalServerError, errEnv("ONS_SYSTEM_ERROR", "create topic: "+err.Error())
			}
			if _, ok := s.topics[t.Name]; ok {
				// Created by someone else while the hook ran.
				r := AlreadyExists()
				return r.Status, errEnv(r.Code.(string), r.Message)
			}
		}
		s.addTopic(t)
		return http.StatusOK, okEnv()
	case "GetTopicList":
		return s.getTopicList(p)
	case "GetTopicStatus":
		return s.getTopicStatus(p)
	case "GetSecretValue":
		return s.getSecretValue(p)
	}
	return http.StatusNotFound, errEnv("InvalidAction.NotFound", "Specified api is not found, please check your url and method.")
}

// checkRequest verifies the common parameters, credentials and signature.
func (s *Server) checkRequest(r *http.Request, action string, p url.Values) (int, any, bool) {
	bad := func(status int, code, msg string) (int, any, bool) { return status, errEnv(code, msg), false }
	if r.URL.Path != "/" && r.URL.Path != "" {
		return bad(http.StatusNotFound, "InvalidAction.NotFound", "Specified api is not found, please check your url and method.")
	}
	for _, name := range []string{"Action", "Version", "AccessKeyId", "Signature", "SignatureMethod", "SignatureVersion", "SignatureNonce", "Timestamp"} {
		if p.Get(name) == "" {
			return bad(http.StatusBadRequest, "Missing"+name, "The input parameter \""+name+"\" that is mandatory for processing this request is not supplied.")
		}
	}
	if p.Get("SignatureMethod") != "HMAC-SHA1" {
		return bad(http.StatusBadRequest, "InvalidSignatureMethod", "Specified signature method is not valid.")
	}
	if p.Get("SignatureVersion") != "1.0" {
		return bad(http.StatusBadRequest, "InvalidSignatureVersion", "Specified signature version is not valid.")
	}
	ts, err := time.Parse("2006-01-02T15:04:05Z", p.Get("Timestamp"))
	if err != nil {
		return bad(http.StatusBadRequest, "InvalidTimeStamp.Format", "Specified time stamp or date value is not well formatted.")
	}
	if d := s.now().Sub(ts); d > maxSkew || d < -maxSkew {
		return bad(http.StatusBadRequest, "InvalidTimeStamp.Expired", "Specified time stamp or date value is expired.")
	}
	cred, ok := s.creds[p.Get("AccessKeyId")]
	if !ok {
		return bad(http.StatusNotFound, "InvalidAccessKeyId.NotFound", "Specified access key is not found.")
	}
	if cred.token != p.Get("SecurityToken") {
		// The code is the fake's choice.
		return bad(http.StatusBadRequest, "InvalidSecurityToken.Mismatch", "Specified SecurityToken is not valid for this AccessKey.")
	}
	if !VerifySignature(r.Method, p, cred.secret) {
		return http.StatusBadRequest, signatureEnv(StringToSign(r.Method, p)), false
	}
	if s.nonces[p.Get("SignatureNonce")] {
		return bad(http.StatusBadRequest, "SignatureNonceUsed", "Specified signature nonce was used already.")
	}
	s.nonces[p.Get("SignatureNonce")] = true
	want := ""
	switch action {
	case "CreateTopic", "GetTopicList", "GetTopicStatus":
		want = alikafkaVersion
	case "GetSecretValue":
		want = kmsVersion
	}
	if want != "" && p.Get("Version") != want {
		return bad(http.StatusBadRequest, "InvalidVersion", "Specified parameter Version is not valid.")
	}
	return 0, nil, true
}

func signatureEnv(sts string) map[string]any {
	return errEnv("SignatureDoesNotMatch", "Specified signature is not matched with our calculation. server string to sign is:"+sts)
}

// render turns an injected Response into a status and body.
func (s *Server) render(resp Response, r *http.Request, p url.Values) (int, any) {
	status := resp.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	switch {
	case resp.EchoRequest:
		return status, rawBody("<html><body><h1>" + strconv.Itoa(status) + " " + http.StatusText(status) +
			"</h1><p>upstream error for POST " + r.URL.String() + "</p></body></html>")
	case resp.RawBody != "":
		return status, rawBody(resp.RawBody)
	}
	env := map[string]any{}
	if resp.Code != nil {
		env["Code"] = resp.Code
	}
	msg := resp.Message
	if msg == "" && resp.Code == "SignatureDoesNotMatch" {
		msg = signatureEnv(StringToSign(r.Method, p))["Message"].(string)
	}
	if msg != "" {
		env["Message"] = msg
	}
	if resp.Success != nil {
		env["Success"] = *resp.Success
	}
	if status < 200 || status > 299 {
		env["Recommend"] = "https://api.aliyun.com/troubleshoot?q=" + url.QueryEscape(fmt.Sprint(resp.Code))
	}
	return status, env
}

type rawBody string

// errEnv is the gateway's error envelope; RequestId and HostId are added by
// reply.
func errEnv(code, msg string) map[string]any {
	return map[string]any{
		"Code":      code,
		"Message":   msg,
		"Recommend": "https://api.aliyun.com/troubleshoot?q=" + url.QueryEscape(code),
	}
}

// okEnv is alikafka's success envelope with integer Code 200.
func okEnv() map[string]any {
	return map[string]any{"Code": 200, "Success": true, "Message": "operation success"}
}

func (s *Server) reply(w http.ResponseWriter, r *http.Request, action string, p url.Values, status int, body any) {
	s.mu.Lock()
	s.seq++
	reqID := fmt.Sprintf("FAKE-%08d-0000-4000-8000-%012d", s.seq, s.seq)
	code := ""
	if env, ok := body.(map[string]any); ok {
		if _, has := env["RequestId"]; !has {
			env["RequestId"] = reqID
		}
		if status < 200 || status > 299 {
			env["HostId"] = hostID(action)
		}
		if c, has := env["Code"]; has {
			code = fmt.Sprint(c)
		} else if status >= 200 && status <= 299 {
			code = "200"
		}
	}
	s.calls = append(s.calls, Call{Action: action, Params: cloneValues(p), Status: status, Code: code})
	s.mu.Unlock()

	if raw, ok := body.(rawBody); ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(raw))
		return
	}
	b, err := json.Marshal(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.Header().Set("x-acs-request-id", reqID)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func hostID(action string) string {
	if action == "GetSecretValue" {
		return "kms." + RegionID + ".aliyuncs.com"
	}
	return "alikafka." + RegionID + ".aliyuncs.com"
}

// checkCreateTopic checks a CreateTopic request and returns the topic to
// add, or nil with the error answer.
func (s *Server) checkCreateTopic(p url.Values) (*Topic, int, any) {
	for _, name := range []string{"InstanceId", "Topic", "Remark", "PartitionNum"} {
		if p.Get(name) == "" {
			return nil, http.StatusBadRequest, errEnv("Missing"+name, "The input parameter \""+name+"\" that is mandatory for processing this request is not supplied.")
		}
	}
	n, err := strconv.Atoi(p.Get("PartitionNum"))
	if err != nil || n < 1 || n > 360 {
		return nil, http.StatusBadRequest, errEnv("InvalidParameter", "PartitionNum must be an integer from 1 to 360.")
	}
	compact := p.Get("CompactTopic") == "true"
	local := p.Get("LocalTopic") == "true"
	if compact && !local {
		// The reference's constraint; the code is the fake's choice.
		return nil, http.StatusBadRequest, errEnv("InvalidParameter", "CompactTopic is only supported for local storage topics (LocalTopic=true).")
	}
	name := p.Get("Topic")
	if _, ok := s.topics[name]; ok {
		r := AlreadyExists()
		return nil, r.Status, errEnv(r.Code.(string), r.Message)
	}
	return &Topic{
		Name: name, InstanceID: p.Get("InstanceId"), Partitions: n, Compact: compact, Local: local,
		Remark: p.Get("Remark"), readyAfter: s.readyAfter, Ready: false,
	}, 0, nil
}

func (s *Server) getTopicList(p url.Values) (int, any) {
	inst := p.Get("InstanceId")
	if inst == "" {
		return http.StatusBadRequest, errEnv("MissingInstanceId", "The input parameter \"InstanceId\" that is mandatory for processing this request is not supplied.")
	}
	page, size := 1, 10000
	if v := p.Get("CurrentPage"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			page = n
		}
	}
	if v := p.Get("PageSize"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 && n <= 10000 {
			size = n
		}
	}
	filter := p.Get("Topic")
	var match []*Topic
	for _, name := range s.order {
		t := s.topics[name]
		if t.InstanceID == inst && strings.Contains(t.Name, filter) {
			match = append(match, t)
		}
	}
	vos := []map[string]any{}
	for i := (page - 1) * size; i < len(match) && i < page*size; i++ {
		t := match[i]
		status, statusName := 0, "服务中"
		if !t.Ready {
			status, statusName = 1, "创建中" // (fake's choice)
		}
		vos = append(vos, map[string]any{
			"Topic": t.Name, "PartitionNum": t.Partitions, "Status": status, "StatusName": statusName,
			"InstanceId": t.InstanceID, "RegionId": RegionID, "CompactTopic": t.Compact, "LocalTopic": t.Local,
			"AutoCreate": false, "Remark": t.Remark, "CreateTime": t.created.UnixMilli(),
			"Tags": map[string]any{"TagVO": []any{}},
		})
	}
	env := okEnv()
	env["Total"] = len(match)
	env["PageSize"] = size
	env["CurrentPage"] = page
	env["TopicList"] = map[string]any{"TopicVO": vos}
	return http.StatusOK, env
}

func (s *Server) getTopicStatus(p url.Values) (int, any) {
	t, ok := s.topics[p.Get("Topic")]
	if !ok || t.InstanceID != p.Get("InstanceId") {
		return http.StatusBadRequest, errEnv("BIZ_TOPIC_NOT_FOUND", "The specified topic is not found.") // status: fake's choice
	}
	t.StatusPolls++
	if !t.Ready && t.StatusPolls > t.readyAfter {
		t.Ready = true
	}
	offsets := []map[string]any{}
	if t.Ready {
		for i := 0; i < t.Partitions; i++ {
			offsets = append(offsets, map[string]any{
				"Partition": i, "MinOffset": 0, "MaxOffset": 0, "LastUpdateTimestamp": 0, "Topic": t.Name,
			})
		}
	}
	env := okEnv()
	env["TopicStatus"] = map[string]any{
		"TotalCount":    0,
		"LastTimeStamp": 0,
		"OffsetTable":   map[string]any{"OffsetTable": offsets},
	}
	return http.StatusOK, env
}

func (s *Server) getSecretValue(p url.Values) (int, any) {
	name := p.Get("SecretName")
	if name == "" {
		return http.StatusBadRequest, errEnv("MissingSecretName", "The input parameter \"SecretName\" that is mandatory for processing this request is not supplied.")
	}
	stage := p.Get("VersionStage")
	sec, ok := s.secrets[name]
	if !ok || (stage != "" && stage != "ACSCurrent") {
		return http.StatusNotFound, errEnv("Forbidden.ResourceNotFound", "The resource not exists.")
	}
	return http.StatusOK, map[string]any{
		"SecretName":        name,
		"SecretData":        sec.data,
		"SecretDataType":    sec.dataType,
		"VersionId":         "v1",
		"VersionStages":     map[string]any{"VersionStage": []string{"ACSCurrent"}},
		"SecretType":        "Generic",
		"CreateTime":        "2026-01-01T00:00:00Z",
		"AutomaticRotation": "Disabled",
	}
}
