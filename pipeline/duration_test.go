package pipeline

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{in: "30s", want: 30 * time.Second},
		{in: "1 min", want: time.Minute},
		{in: "500 ms", want: 500 * time.Millisecond},
		{in: "2 h", want: 2 * time.Hour},
		{in: "1d", want: 24 * time.Hour},
		{in: "3 days", want: 72 * time.Hour},
		{in: "250", want: 250 * time.Millisecond},
		{in: " 10 SECONDS ", want: 10 * time.Second},
		{in: "5m", want: 5 * time.Minute},
		{in: "7 Minutes", want: 7 * time.Minute},
		{in: "1 sec", want: time.Second},
		{in: "2 secs", want: 2 * time.Second},
		{in: "3 millis", want: 3 * time.Millisecond},
		{in: "4µs", want: 4 * time.Microsecond},
		{in: "5 micros", want: 5 * time.Microsecond},
		{in: "6ns", want: 6},
		{in: "7 nanoseconds", want: 7},
		{in: "0", want: 0},
		{in: "", err: true},
		{in: "s", err: true},
		{in: "-1s", err: true},
		{in: "1.5s", err: true},
		{in: "1h30m", err: true},
		{in: "5 sek", err: true},
		{in: "10us", err: true},
		{in: "99999999999999999999", err: true},
		{in: "9999999999 d", err: true},
	}
	for _, c := range cases {
		got, err := ParseDuration(c.in)
		switch {
		case c.err && err == nil:
			t.Errorf("ParseDuration(%q) = %v, want an error", c.in, got)
		case !c.err && err != nil:
			t.Errorf("ParseDuration(%q): %v", c.in, err)
		case !c.err && got != c.want:
			t.Errorf("ParseDuration(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	cases := map[time.Duration]string{
		0:                       "0ms",
		30 * time.Second:        "30s",
		90 * time.Second:        "90s",
		5 * time.Minute:         "5min",
		48 * time.Hour:          "2d",
		1500 * time.Microsecond: "1500µs",
		7:                       "7ns",
	}
	for d, want := range cases {
		got := formatDuration(d)
		if got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
		if back, err := ParseDuration(got); err != nil || back != d {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", got, back, err, d)
		}
	}
}
