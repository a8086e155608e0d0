package gctune

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestApply(t *testing.T) {
	oldPercent := debug.SetGCPercent(100)
	oldLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer func() { debug.SetGCPercent(oldPercent); debug.SetMemoryLimit(oldLimit) }()

	Apply(func(string) (string, bool) { return "", false })
	if got := debug.SetGCPercent(100); got != Percent {
		t.Errorf("GOGC %d, want %d", got, Percent)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != MemoryLimit {
		t.Errorf("memory limit %d, want %d", got, MemoryLimit)
	}

	// Set in the environment: left alone (the runtime has read them already).
	Apply(func(string) (string, bool) { return "50", true })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC %d with GOGC set, want it untouched (100)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit %d with GOMEMLIMIT set, want it untouched", got)
	}
}
