package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/nsys"
)

// command prepares an external program in its own process group
// (nsys.Command), so that cancelling ctx stops it and all it started.
func command(ctx context.Context, dir string, env []string, name string, args ...string) *exec.Cmd {
	return nsys.Command(ctx, dir, env, name, args...)
}

// quickCommand is command for a program with nothing to save when it is
// stopped (nvcc, nsys export, stats, analyze): cancelling kills its group
// at once, rather than asking it to end and waiting for it, so a program
// that ignores SIGTERM cannot hold Ctrl-C or --timeout up.
func quickCommand(ctx context.Context, dir string, env []string, name string, args ...string) *exec.Cmd {
	return nsys.KillOnCancel(command(ctx, dir, env, name, args...))
}

// runLogged runs cmd with stdout and stderr both written to logPath (and to
// tee, when not nil). It returns the exit error, if any.
func runLogged(cmd *exec.Cmd, logPath string, tee io.Writer) error {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", logPath, err)
	}
	var w io.Writer = f
	if tee != nil {
		w = io.MultiWriter(f, tee)
	}
	// nsys.Run makes sure nothing of the group outlives the step.
	runErr := nsys.Run(cmd, w)
	if cerr := f.Close(); cerr != nil && runErr == nil {
		return fmt.Errorf("write %s: %w", logPath, cerr)
	}
	return runErr
}

// commandLine renders an argument list for run.json and messages.
func commandLine(name string, args ...string) string {
	parts := make([]string, 0, len(args)+1)
	for _, a := range append([]string{name}, args...) {
		if a == "" || strings.ContainsAny(a, " \t\"'\\$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// exitCode returns the exit status of a finished command, or -1.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
