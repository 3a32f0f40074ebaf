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

// A tool that answers --version without end (a wrapper in a loop) is read
// only as far as the output's bound: its answer once grew by gigabytes a
// few seconds, until --timeout came late or memory ran out.
func TestAskToolEndlessAnswer(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nsys")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexec yes garbage-line\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := askLimit
	askLimit = time.Second
	defer func() { askLimit = old }()
	out, err := askTool(context.Background(), p, "--version")
	if err == nil || !strings.Contains(err.Error(), "no answer within 1s") {
		t.Errorf("askTool of an endless answer: err = %v", err)
	}
	if len(out) > 1<<20 || !strings.Contains(string(out), "bytes of output left out") {
		t.Errorf("askTool kept %d bytes of an endless answer, want its head and tail alone", len(out))
	}
}

// Stopping nvcc (or nsys export, stats, analyze) kills it at once: one that
// ignores SIGTERM once held Ctrl-C up ten seconds.
func TestQuickCommandStopsAtOnce(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "nvcc")
	if err := os.WriteFile(p, []byte("#!/bin/sh\ntrap '' TERM INT\nwhile :; do sleep 0.1; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := runLogged(quickCommand(ctx, dir, os.Environ(), p), filepath.Join(dir, "build.log"), nil)
	if d := time.Since(start); err == nil || d > 1300*time.Millisecond {
		t.Errorf("a build ignoring SIGTERM stopped after %s (err %v), want within a second of the stop at 300ms", d, err)
	}
}
