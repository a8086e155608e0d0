package aliyuntest

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"net/url"
	"sort"
	"strings"
)

// PercentEncode is the encoding of Alibaba Cloud's RPC signature version
// 1.0: RFC 3986 unreserved characters stay, everything else is %XX in upper
// case, a space is %20 (not "+"), "*" is %2A and "~" stays.
func PercentEncode(s string) string {
	e := url.QueryEscape(s)
	e = strings.ReplaceAll(e, "+", "%20")
	e = strings.ReplaceAll(e, "*", "%2A")
	return strings.ReplaceAll(e, "%7E", "~")
}

// StringToSign returns the string-to-sign of an RPC request: the method,
// the encoded path "/" and the encoded canonical query, joined by "&". The
// canonical query is every parameter but Signature, sorted by name (then by
// value for a repeated name), each name and value percent-encoded, joined as
// name=value&…. It is written from the published algorithm, not taken from
// the SDK, so that a test against it checks the SDK's signing.
func StringToSign(method string, params url.Values) string {
	type pair struct{ k, v string }
	var pairs []pair
	for k, vs := range params {
		if k == "Signature" {
			continue
		}
		for _, v := range vs {
			pairs = append(pairs, pair{PercentEncode(k), PercentEncode(v)})
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = p.k + "=" + p.v
	}
	canon := strings.Join(parts, "&")
	return strings.ToUpper(method) + "&" + PercentEncode("/") + "&" + PercentEncode(canon)
}

// Sign returns base64(HMAC-SHA1(secret + "&", stringToSign)), the RPC
// signature of a request signed with an AccessKey secret.
func Sign(stringToSign, secret string) string {
	mac := hmac.New(sha1.New, []byte(secret+"&"))
	mac.Write([]byte(stringToSign))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// VerifySignature reports whether params carry the right Signature for
// method and secret, comparing in constant time.
func VerifySignature(method string, params url.Values, secret string) bool {
	want := Sign(StringToSign(method, params), secret)
	return hmac.Equal([]byte(want), []byte(params.Get("Signature")))
}
