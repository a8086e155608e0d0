package metrics

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestServeExposesMetrics(t *testing.T) {
	m := New("demo")
	m.RecordsWritten.WithLabelValues("app.users", "app.users").Add(3)
	m.Errors.WithLabelValues("sink").Inc()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx, addr) }()

	var body string
	for i := 0; i < 50; i++ {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{
		`ingest_records_written_total{pipeline="demo",table="app.users",topic="app.users"} 3`,
		`ingest_errors_total{kind="sink",pipeline="demo"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics output lacks %q", want)
		}
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap?debug=1", "/debug/pprof/goroutine?debug=1"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(b) == 0 {
			t.Errorf("GET %s: %s, %d bytes", path, resp.Status, len(b))
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve after cancel: %v", err)
	}
}

func TestServeBadAddress(t *testing.T) {
	err := New("p").Serve(context.Background(), "256.0.0.1:bad")
	if err == nil || !strings.Contains(err.Error(), "256.0.0.1:bad") {
		t.Fatalf("Serve on a bad address: %v", err)
	}
}
