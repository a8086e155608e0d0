package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

// stopSignals stop a run gracefully: SIGINT (Ctrl-C), SIGTERM (Kubernetes, systemd) and
// SIGHUP (a closed terminal or ssh session). A stop stores what was acknowledged and exits 0.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// stopContext returns a context cancelled by the first of stopSignals, and the function
// that releases the signals again. SIGQUIT is caught too: instead of Go's default (dump
// the goroutines and exit 2, the usage code, without storing the position), it writes
// every goroutine's stack to stderr and the run goes on, as a JVM does with its thread
// dump.
func stopContext(stderr io.Writer) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	quit := make(chan os.Signal, 1)
	signal.Notify(quit, syscall.SIGQUIT)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-quit:
				_ = pprof.Lookup("goroutine").WriteTo(stderr, 2)
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		stop()
		signal.Stop(quit)
		close(done)
	}
}
