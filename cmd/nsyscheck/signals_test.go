package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// slowNsys writes an nsys stand-in whose export writes the start of an
// SQLite file, starts a child that would run for minutes, writes the
// child's pid to pidFile and waits.
func slowNsys(t *testing.T, pidFile string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "nsys")
	script := `#!/bin/sh
out=""
while [ $# -gt 0 ]; do
  case "$1" in --output) out="$2"; shift;; esac
  shift
done
printf 'SQLite format 3' > "$out"
sleep 300 &
echo $! > '` + pidFile + `.tmp'
mv '` + pidFile + `.tmp' '` + pidFile + `'
wait
`
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSignalStopsExport: SIGINT or SIGTERM while verify or report waits for
// an nsys export stops nsys and what it started, removes the half-written
// export and exits with status 130, naming the report once.
func TestSignalStopsExport(t *testing.T) {
	if _, err := exec.LookPath("nsyscheck"); err != nil {
		t.Skip("the test binary is not on PATH as nsyscheck")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, command := range []string{"verify", "report"} {
			t.Run(command+"/"+sig.String(), func(t *testing.T) {
				dir := t.TempDir()
				rep := copyShipped(t, dir, "pinned.nsys-rep")
				pidFile := filepath.Join(t.TempDir(), "child.pid")
				args := []string{command, "--nsys", slowNsys(t, pidFile), rep}
				if command == "report" {
					args = append(args, "-o", filepath.Join(t.TempDir(), "out"))
				}
				cmd := exec.Command("nsyscheck", args...)
				cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				var child int
				for deadline := time.Now().Add(20 * time.Second); child == 0; {
					if b, err := os.ReadFile(pidFile); err == nil {
						child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
					} else if time.Now().After(deadline) {
						cmd.Process.Kill()
						t.Fatalf("the export never started: %s", stderr.String())
					} else {
						time.Sleep(10 * time.Millisecond)
					}
				}
				sent := time.Now()
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				err := cmd.Wait()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != exitSignal {
					t.Errorf("exit %v, want status %d; stderr:\n%s", err, exitSignal, stderr.String())
				}
				if d := time.Since(sent); d > 5*time.Second {
					t.Errorf("took %s to stop after the signal", d)
				}
				if !strings.Contains(stderr.String(), "interrupted") || strings.Count(stderr.String(), rep) != 1 {
					t.Errorf("stderr should name the report once and say it was interrupted:\n%s", stderr.String())
				}
				stopped := false
				for i := 0; i < 200 && !stopped; i++ {
					stat, _ := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
					stopped = errors.Is(syscall.Kill(child, 0), syscall.ESRCH) || strings.Contains(string(stat), ") Z ")
					time.Sleep(10 * time.Millisecond)
				}
				if !stopped {
					syscall.Kill(child, syscall.SIGKILL)
					t.Errorf("nsys's child %d outlived the signal", child)
				}
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					if e.Name() != "pinned.nsys-rep" {
						t.Errorf("left beside the report: %s", e.Name())
					}
				}
			})
		}
	}
}
