package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hangingTool writes a tool that answers --version never: it waits, and a
// child of it that ignores SIGTERM holds its output open (as a wrapper
// script's sleep does), the case that once kept run's detect step waiting
// past --timeout and without end.
func hangingTool(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "nsys")
	script := "#!/bin/sh\n(trap '' TERM; exec sleep 3600) &\nsleep 3600\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAskToolBounded(t *testing.T) {
	tool := hangingTool(t)
	old := askLimit
	askLimit = 300 * time.Millisecond
	defer func() { askLimit = old }()
	start := time.Now()
	v := ToolVersion(context.Background(), tool)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("ToolVersion of a tool that never answers took %s, want about %s", d, askLimit)
	}
	if !strings.Contains(v, "no answer within 300ms") {
		t.Errorf("ToolVersion = %q, want it to say no answer came within the limit", v)
	}
}

func TestAskToolCancelled(t *testing.T) {
	tool := hangingTool(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := askTool(ctx, tool, "--version")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("askTool went on %s after its context ended (at 200ms)", d)
	}
	if err == nil || strings.Contains(err.Error(), "no answer within") {
		t.Errorf("askTool cancelled: err = %v, want the cancellation's, not the limit's", err)
	}
}
