package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// command prepares an external program started with an argument list (never
// through a shell) in its own process group, so that cancelling ctx (Ctrl-C,
// --timeout) stops it and every process it started.
func command(ctx context.Context, dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		// The whole group: nsys, its launcher and the profiled program.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	cmd.WaitDelay = 10 * time.Second
	return cmd
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
	cmd.Stdout = w
	cmd.Stderr = w
	runErr := cmd.Run()
	if cerr := f.Close(); cerr != nil && runErr == nil {
		return fmt.Errorf("write %s: %w", logPath, cerr)
	}
	if pgid := processGroup(cmd); pgid > 0 {
		// Make sure nothing of the group outlives the step.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	return runErr
}

func processGroup(cmd *exec.Cmd) int {
	if cmd.Process == nil {
		return 0
	}
	return cmd.Process.Pid
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
