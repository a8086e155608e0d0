package metrics

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// get returns the status code and body of GET http://addr+path.
func get(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServe: /metrics and /healthz always; the profiles only when asked for.
func TestServe(t *testing.T) {
	for _, pprof := range []bool{false, true} {
		t.Run(map[bool]string{false: "without pprof", true: "with pprof"}[pprof], func(t *testing.T) {
			m := New("demo")
			m.RecordsWritten.WithLabelValues("app.users", "app.users").Add(3)
			m.Errors.WithLabelValues("sink").Inc()
			srv, err := m.Listen("127.0.0.1:0", pprof)
			if err != nil {
				t.Fatal(err)
			}
			if !srv.Loopback() {
				t.Errorf("%s: not loopback", srv.Addr())
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ctx) }()
			addr := srv.Addr().String()

			_, body := get(t, addr, "/metrics")
			for _, want := range []string{
				`ingest_records_written_total{pipeline="demo",table="app.users",topic="app.users"} 3`,
				`ingest_errors_total{kind="sink",pipeline="demo"} 1`,
				`go_goroutines`,
			} {
				if !strings.Contains(body, want) {
					t.Errorf("metrics output lacks %q", want)
				}
			}
			if code, body := get(t, addr, "/healthz"); code != http.StatusOK || body != "ok\n" {
				t.Errorf("/healthz: %d %q", code, body)
			}
			want := http.StatusNotFound
			if pprof {
				want = http.StatusOK
			}
			for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap?debug=1", "/debug/pprof/goroutine?debug=1", "/debug/pprof/cmdline"} {
				if code, _ := get(t, addr, path); code != want {
					t.Errorf("GET %s: %d, want %d", path, code, want)
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Serve after cancel: %v", err)
			}
		})
	}
}

func TestListenFails(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, addr := range []string{"256.0.0.1:bad", ":99999", busy.Addr().String()} {
		srv, err := New("p").Listen(addr, false)
		if err == nil {
			srv.Close()
			t.Errorf("Listen(%q) succeeded", addr)
		} else if !strings.Contains(err.Error(), addr) {
			t.Errorf("Listen(%q): %v does not name the address", addr, err)
		}
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:0": true, "localhost:0": true, ":0": false, "0.0.0.0:0": false} {
		srv, err := New("p").Listen(addr, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := srv.Loopback(); got != want {
			t.Errorf("Listen(%q) at %s: Loopback %v, want %v", addr, srv.Addr(), got, want)
		}
		srv.Close()
	}
}
