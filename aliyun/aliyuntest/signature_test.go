package aliyuntest

import (
	"net/url"
	"testing"
)

// The example of Alibaba Cloud's "RPC signature" documentation (ECS
// DescribeRegions, GET, secret "testsecret"), which fixes both the
// canonicalisation and the HMAC independently of the SDK.
func TestSignDocumentedExample(t *testing.T) {
	p := url.Values{}
	for k, v := range map[string]string{
		"Timestamp":        "2016-02-23T12:46:24Z",
		"Format":           "XML",
		"AccessKeyId":      "testid",
		"Action":           "DescribeRegions",
		"SignatureMethod":  "HMAC-SHA1",
		"SignatureNonce":   "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf",
		"Version":          "2014-05-26",
		"SignatureVersion": "1.0",
	} {
		p.Set(k, v)
	}
	const wantSTS = "GET&%2F&AccessKeyId%3Dtestid%26Action%3DDescribeRegions%26Format%3DXML" +
		"%26SignatureMethod%3DHMAC-SHA1%26SignatureNonce%3D3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf" +
		"%26SignatureVersion%3D1.0%26Timestamp%3D2016-02-23T12%253A46%253A24Z%26Version%3D2014-05-26"
	if got := StringToSign("GET", p); got != wantSTS {
		t.Fatalf("StringToSign:\n got %s\nwant %s", got, wantSTS)
	}
	const want = "OLeaidS1JvxuMvnyHOwuJ+uX5qY="
	if got := Sign(wantSTS, "testsecret"); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	p.Set("Signature", want)
	if !VerifySignature("GET", p, "testsecret") {
		t.Error("VerifySignature rejects the documented signature")
	}
	if VerifySignature("POST", p, "testsecret") {
		t.Error("VerifySignature ignores the method")
	}
	if VerifySignature("GET", p, "othersecret") {
		t.Error("VerifySignature ignores the secret")
	}
}

func TestPercentEncode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a b", "a%20b"},
		{"a*b", "a%2Ab"},
		{"a~b", "a~b"},
		{"a+b", "a%2Bb"},
		{"é", "%C3%A9"},
		{"AZaz09-_.", "AZaz09-_."},
		{"/:=&", "%2F%3A%3D%26"},
	}
	for _, tc := range tests {
		if got := PercentEncode(tc.in); got != tc.want {
			t.Errorf("PercentEncode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
