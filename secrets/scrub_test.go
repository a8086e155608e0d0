package secrets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestScrub(t *testing.T) {
	s := NewScrubber()
	s.Add("user", "svc-loader-7Qx")
	s.Add("host", `db"7Qx<&>.internal`)
	s.Add("inner", "loader")
	s.Add("pin", "42")
	s.Add("brokers", "kafka-1.7Qx:9092, kafka-2.7Qx:9093")
	s.Add("kafka-host", "kafka-1.7Qx")
	s.Add("topic", "bad topic values")
	tests := []struct{ in, want string }{
		{"Access denied for user 'svc-loader-7Qx'@'10.0.0.1'", "Access denied for user '${secret_values.user}'@'10.0.0.1'"},
		{"the loader", "the ${secret_values.inner}"},
		{`lookup db"7Qx<&>.internal: no such host`, "lookup ${secret_values.host}: no such host"},
		{`{"msg":"lookup db\"7Qx\u003c\u0026\u003e.internal"}`, `{"msg":"lookup ${secret_values.host}"}`},
		{`"db\"7Qx<&>.internal"`, `"${secret_values.host}"`},
		{"tcp://db%227Qx%3C%26%3E.internal", "tcp://${secret_values.host}"},
		{"answer 42", "answer 42"}, // too short to mask
		{"dial tcp: lookup kafka-2.7Qx: no such host", "dial tcp: lookup ${secret_values.brokers}: no such host"},
		{"seeds [kafka-1.7Qx:9092 kafka-2.7Qx:9093]", "seeds [${secret_values.brokers} ${secret_values.brokers}]"},
		{"lookup kafka-1.7Qx", "lookup ${secret_values.kafka-host}"}, // a whole value wins over a part
		{"topic: bad topic values", "topic: ${secret_values.topic}"},
		{"${secret_values.topic} values", "${secret_values.topic} values"}, // scrubbing twice changes nothing
	}
	for _, tc := range tests {
		if got := s.Scrub(tc.in); got != tc.want {
			t.Errorf("Scrub(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := s.Short(); len(got) != 1 || got[0] != "pin" {
		t.Errorf("Short() = %v, want [pin]", got)
	}
	var nilScrubber *Scrubber
	if nilScrubber.Scrub("x") != "x" || NewScrubber().Scrub("x") != "x" {
		t.Error("an empty scrubber changed text")
	}
}

func TestScrubHandlerAndWriter(t *testing.T) {
	const v = "tok-9f8e7d6c"
	s := NewScrubber()
	s.Add("kafka", v)
	for _, format := range []string{"text", "json"} {
		var b bytes.Buffer
		w := s.Writer(&b)
		var h slog.Handler = slog.NewTextHandler(w, nil)
		if format == "json" {
			h = slog.NewJSONHandler(w, nil)
		}
		log := slog.New(s.Handler(h)).With("seed", v+":9092")
		log.Warn("retry "+v, "err", fmt.Errorf("dial %s: %w", v, errors.New("refused")),
			"brokers", []string{v}, slog.Group("g", "addr", v), "n", 3)
		fmt.Fprintf(w, "partial %s", v[:4])
		fmt.Fprintf(w, "%s end\n", v[4:])
		fmt.Fprintf(w, "last %s", v)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), v) || strings.Count(b.String(), "${secret_values.kafka}") != 7 {
			t.Errorf("%s output:\n%s", format, b.String())
		}
	}
}

func TestHideRevealJSON(t *testing.T) {
	s := NewScrubber()
	s.Add("db", "shop<7Qx>")
	s.Add("port", "3307")
	doc := map[string]any{"tables": []string{"shop<7Qx>.orders", "x.y"}, "bound": 3307, "pos": "bin.000001:13307"}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	hidden := s.HideJSON(b)
	if bytes.Contains(hidden, []byte("7Qx")) || bytes.Contains(hidden, []byte(`"bin.000001:13307"`)) {
		t.Errorf("hidden: %s", hidden)
	}
	if !bytes.Contains(hidden, []byte(`"bound":3307`)) {
		t.Errorf("a number was changed: %s", hidden)
	}
	var plain map[string]any
	if err := json.Unmarshal(hidden, &plain); err != nil {
		t.Fatalf("hidden is not JSON: %v: %s", err, hidden)
	}
	if got := plain["tables"].([]any)[0]; got != "${secret_values.db}.orders" {
		t.Errorf("read without reveal: %v", got)
	}
	if got := s.RevealJSON(hidden); !bytes.Equal(got, b) {
		t.Errorf("reveal = %s, want %s", got, b)
	}
}

func TestScrubTwice(t *testing.T) {
	s := NewScrubber()
	s.Add("word", "values")
	s.Add("topic", "topic-7Qx")
	once := s.Scrub("values in topic-7Qx")
	if want := "${secret_values.word} in ${secret_values.topic}"; once != want || s.Scrub(once) != want {
		t.Errorf("Scrub = %q, twice %q, want %q", once, s.Scrub(once), want)
	}
}
