package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/trace"
	"testing"
)

// TestTraceWritten starts the execution trace, marks a region, and stops
// it: the file is a Go execution trace (its header) that names the region.
func TestTraceWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.trace")
	stop := startTrace(path)
	trace.WithRegion(context.Background(), "a stage of the test", func() {})
	stop()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(body, []byte("go 1.")) {
		t.Errorf("%s: %d bytes without a trace's header", path, len(body))
	}
	if !bytes.Contains(body, []byte("a stage of the test")) {
		t.Errorf("%s: the region's name is not in the trace", path)
	}
	if stop := startTrace(""); stop == nil {
		t.Error("no stop function without a path")
	} else {
		stop()
	}
	if stop := startTrace(filepath.Join(t.TempDir(), "no-such-folder", "x.trace")); stop == nil {
		t.Error("no stop function where the file cannot be made")
	} else {
		stop()
	}
}
