package aliyun

import (
	"encoding/json"
	"testing"
	"time"
)

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{"", "", false},
		{"alikafka.cn-hangzhou.aliyuncs.com", "alikafka.cn-hangzhou.aliyuncs.com", false},
		{" alikafka.cn-hangzhou.aliyuncs.com ", "alikafka.cn-hangzhou.aliyuncs.com", false},
		{"127.0.0.1:8443", "127.0.0.1:8443", false},
		{"https://kms.cn-hangzhou.aliyuncs.com", "kms.cn-hangzhou.aliyuncs.com", false},
		{"HTTPS://kms.cn-hangzhou.aliyuncs.com:443/", "kms.cn-hangzhou.aliyuncs.com:443", false},
		{"http://alikafka.cn-hangzhou.aliyuncs.com", "", true},
		{"https://h/path", "", true},
		{"https://user@h", "", true},
		{"h/path", "", true},
		{"https://", "", true},
	}
	for _, tc := range tests {
		got, err := parseEndpoint(tc.in, "opt")
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("parseEndpoint(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestIsRetryable(t *testing.T) {
	tests := []struct {
		status int
		code   string
		want   bool
	}{
		{400, "Throttling.User", true},
		{400, "Throttling", true},
		{400, "Throttling.Api", true},
		{400, "Rejected.Throttling", true},
		{400, "ONS_SYSTEM_FLOW_CONTROL", true},
		{503, "", true},
		{429, "", true},
		{503, "ServiceUnavailable", true},
		{400, "SignatureDoesNotMatch", false},
		{404, "InvalidAccessKeyId.NotFound", false},
		{403, "Forbidden.RAM", false},
		{500, "InternalError", false},
		{400, "BIZ_TOPIC_ALREADY_EXISTS", false},
	}
	for _, tc := range tests {
		if got := isRetryable(tc.status, tc.code); got != tc.want {
			t.Errorf("isRetryable(%d, %q) = %v", tc.status, tc.code, got)
		}
	}
}

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Second}.withDefaults()
	if b.Attempts != 8 {
		t.Errorf("Attempts default %d", b.Attempts)
	}
	for n, ceil := range []time.Duration{100, 200, 400, 800, 1000, 1000, 1000} {
		ceil *= time.Millisecond
		for range 50 {
			d := b.delay(n)
			if d < ceil/2 || d > ceil {
				t.Fatalf("delay(%d) = %v, want within [%v, %v]", n, d, ceil/2, ceil)
			}
		}
	}
	z := Backoff{}.withDefaults()
	if z.Initial != 500*time.Millisecond || z.Max != 20*time.Second {
		t.Errorf("defaults %+v", z)
	}
}

func TestFlexibleJSON(t *testing.T) {
	var v struct {
		S1, S2, S3, S4 flexString
		I1, I2, I3, I4 flexInt
		B1, B2, B3, B4 flexBool
	}
	in := `{"S1":"x","S2":200,"S3":null,"S4":true,
	        "I1":12,"I2":"34","I3":"","I4":1.0e3,
	        "B1":true,"B2":"false","B3":1,"B4":"true"}`
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	if v.S1 != "x" || v.S2 != "200" || v.S3 != "" || v.S4 != "true" ||
		v.I1 != 12 || v.I2 != 34 || v.I3 != 0 || v.I4 != 1000 ||
		!bool(v.B1) || bool(v.B2) || !bool(v.B3) || !bool(v.B4) {
		t.Errorf("decoded %+v", v)
	}
	var bad struct{ I flexInt }
	if err := json.Unmarshal([]byte(`{"I":"secret-ish"}`), &bad); err == nil {
		t.Error("non-numeric string accepted as an integer")
	}
}

func TestAPIErrorFormat(t *testing.T) {
	e := &APIError{Service: "alikafka", Action: "CreateTopic", HTTPStatus: 400, Code: "SignatureDoesNotMatch",
		Message: "no match", RequestID: "R1", Hint: "check it"}
	const want = "aliyun: alikafka CreateTopic: SignatureDoesNotMatch: no match (HTTP 400, request id R1); check it"
	if e.Error() != want {
		t.Errorf("got  %s\nwant %s", e.Error(), want)
	}
	e2 := &APIError{Service: "kms", Action: "GetSecretValue", Code: "Transport", Message: "dial failed"}
	if got := e2.Error(); got != "aliyun: kms GetSecretValue: Transport: dial failed" {
		t.Errorf("got %s", got)
	}
}
