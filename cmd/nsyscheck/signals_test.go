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

	"github.com/nsyscheck/nsyscheck/internal/proctest"
)

// slowNsys writes an nsys stand-in whose export writes the start of an
// SQLite file, starts a child that would run for minutes, writes the
// child's pid to child.pid beside itself and waits.
func slowNsys(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p, pidFile := filepath.Join(dir, "nsys"), filepath.Join(dir, "child.pid")
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

// interrupted returns a runner for badCase.run: it starts nsyscheck as a
// process (the test binary, on PATH under that name), sends it sig once the
// slowNsys given with --nsys has started its child, and checks that the
// child is gone and that nsyscheck stopped within a second.
func interrupted(sig syscall.Signal) func(t *testing.T, args []string) (int, string, string) {
	return func(t *testing.T, args []string) (int, string, string) {
		t.Helper()
		if _, err := exec.LookPath("nsyscheck"); err != nil {
			t.Skip("the test binary is not on PATH as nsyscheck")
		}
		pidFile := ""
		for i, a := range args {
			if a == "--nsys" && i+1 < len(args) {
				pidFile = filepath.Join(filepath.Dir(args[i+1]), "child.pid")
			}
		}
		cmd := exec.Command("nsyscheck", args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
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
		code := 0
		if err := cmd.Wait(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		if d := time.Since(sent); d > time.Second {
			t.Errorf("took %s to stop after the signal", d)
		}
		if !proctest.Gone(child, 2*time.Second) {
			syscall.Kill(child, syscall.SIGKILL)
			t.Errorf("nsys's child %d outlived the signal", child)
		}
		return code, stdout.String(), stderr.String()
	}
}

// interruptCases: SIGINT or SIGTERM while verify, report or audit waits for
// an nsys export stops nsys and what it started, removes the half-written
// export (the harness checks that nothing is left beside the report) and
// exits 130 within a second, naming the report once.
func interruptCases() []badCase {
	var out []badCase
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, command := range []string{"verify", "report", "audit"} {
			out = append(out, badCase{group: "interruptions", name: command + " gets " + map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig] + " while nsys exports the .nsys-rep",
				cmd: command, run: interrupted(sig),
				make: func(t *testing.T, dir string) []string {
					args := []string{"--nsys", slowNsys(t), copyShipped(t, dir, "pinned.nsys-rep")}
					if command == "report" {
						args = append(args, "-o", filepath.Join(t.TempDir(), "out"))
					}
					return args
				},
				exit: exitSignal, want: []string{"pinned.nsys-rep: interrupted while nsys exported the report", "partial export removed"}})
		}
	}
	return out
}
