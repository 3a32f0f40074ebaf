package nsys

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFind(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk("systems/2024.6.1/bin/nsys")
	newest := mk("systems/2025.10.1/bin/nsys")
	mk("systems/2025.3.2/bin/nsys")
	compute := mk("compute/2025.3.0/host/target-linux-x64/nsys")
	onPath := mk("path/nsys")
	override := mk("custom/my-nsys")

	old := installGlobs
	installGlobs = []string{filepath.Join(root, "systems/*/bin/nsys"), filepath.Join(root, "compute/*/host/target-linux-x64/nsys")}
	t.Cleanup(func() { installGlobs = old })
	t.Setenv("NSYS", "")
	t.Setenv("PATH", t.TempDir())

	check := func(override, want string) {
		t.Helper()
		got, err := Find(override)
		if err != nil || got != want {
			t.Errorf("Find(%q) = %q, %v; want %q", override, got, err, want)
		}
	}
	check("", newest)
	if got := Installed(); len(got) != 4 || got[0] != newest || got[3] != compute {
		t.Errorf("Installed = %v", got)
	}
	t.Setenv("PATH", filepath.Dir(onPath))
	check("", onPath)
	t.Setenv("NSYS", override)
	check("", override)
	check(newest, newest)

	t.Setenv("NSYS", filepath.Join(root, "gone"))
	if _, err := Find(""); err == nil || !strings.Contains(err.Error(), "$NSYS") {
		t.Errorf("bad $NSYS: %v", err)
	}
	if _, err := Find(filepath.Join(root, "nope")); err == nil || !errors.As(err, new(*FindError)) {
		t.Errorf("bad override: %v", err)
	}
}

// A Command's whole process group goes when it returns: a child it left
// running in the background is killed.
func TestRunKillsGroup(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := Command(context.Background(), "", nil, "sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $! > "+pidFile)
	var out strings.Builder
	if err := Run(cmd, &out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(data))
	deadline := time.Now().Add(5 * time.Second)
	for {
		// A killed child not yet reaped shows as a zombie (state Z).
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("background child %s still running after Run returned", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOutputBufferBounded(t *testing.T) {
	var b OutputBuffer
	b.Write([]byte("first line\n"))
	line := []byte(strings.Repeat("x", 999) + "\n")
	for range 2000 {
		b.Write(line)
	}
	b.Write([]byte("last error\n"))
	out := string(b.Bytes())
	if len(out) > outputHead+outputTail+100 {
		t.Errorf("kept %d bytes of 2 MB", len(out))
	}
	if !strings.HasPrefix(out, "first line\n") || !strings.HasSuffix(out, "x\nlast error\n") || !strings.Contains(out, "bytes of output left out") {
		t.Errorf("the head, the tail or the gap is lost: %q ... %q", out[:20], out[len(out)-20:])
	}
	var small OutputBuffer
	small.Write([]byte("version 2025.3.1\n"))
	if got := string(small.Bytes()); got != "version 2025.3.1\n" {
		t.Errorf("a short answer: %q", got)
	}
}
