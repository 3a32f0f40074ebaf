// Package nsys finds the Nsight Systems command line and runs it: every
// nsys (and every program nsys runs) is started here, with an argument
// list, never a shell, in its own process group that cancelling the context
// stops and that is killed whole once the command returns.
package nsys

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nsyscheck/nsyscheck/internal/environ"
)

// installGlobs are the places Nsight Systems and Nsight Compute install an
// nsys binary, searched after $NSYS and PATH. Tests replace them.
var installGlobs = []string{
	"/opt/nvidia/nsight-systems/*/bin/nsys",
	"/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys",
}

// SetInstallGlobs replaces the places Installed looks, for tests of
// packages that find nsys, and returns what restores them.
func SetInstallGlobs(globs []string) (restore func()) {
	old := installGlobs
	installGlobs = globs
	return func() { installGlobs = old }
}

// FindError says why no usable nsys was found.
type FindError struct {
	Name    string // what was looked up: "nsys", or the path given
	Problem string
	Err     error
}

func (e *FindError) Error() string {
	if e.Err != nil {
		return e.Name + ": " + e.Problem + ": " + e.Err.Error()
	}
	return e.Name + ": " + e.Problem
}

func (e *FindError) Unwrap() error { return e.Err }

// Find returns the nsys executable to use: override when given, else
// $NSYS, else nsys on PATH, else the newest one under /opt/nvidia. An
// override or $NSYS that cannot be run is an error, not a reason to look
// elsewhere.
func Find(override string) (string, error) { return FindIn(override, nil) }

// FindIn is Find reading NSYS and PATH from env (nil: the process's).
func FindIn(override string, env environ.Env) (string, error) {
	if override != "" {
		return look(override, "the nsys given", env)
	}
	if v := env.Get("NSYS"); v != "" {
		return look(v, "$NSYS", env)
	}
	if p, err := env.LookPath("nsys"); err == nil {
		return p, nil
	}
	if found := Installed(); len(found) > 0 {
		return found[0], nil
	}
	return "", &FindError{Name: "nsys", Problem: "no nsys found on PATH, in $NSYS or under /opt/nvidia"}
}

// look resolves an nsys named by the user (a path or a command name).
func look(name, what string, env environ.Env) (string, error) {
	p, err := env.LookPath(name)
	if err != nil {
		return "", &FindError{Name: name, Problem: what + " cannot be run", Err: err}
	}
	return p, nil
}

// Installed lists the nsys executables installed under /opt/nvidia, newest
// version first within each install kind (Nsight Systems, then Compute).
func Installed() []string {
	var out []string
	for _, g := range installGlobs {
		matches, _ := filepath.Glob(g)
		var ok []string
		for _, m := range matches {
			if info, err := os.Stat(m); err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0 {
				ok = append(ok, m)
			}
		}
		sort.SliceStable(ok, func(i, j int) bool { return versionLess(ok[j], ok[i]) })
		out = append(out, ok...)
	}
	return out
}

// versionLess compares two paths by the numbers in them, so that
// .../2025.10.1/... sorts after .../2025.3.2/....
func versionLess(a, b string) bool {
	na, nb := versionNumbers(a), versionNumbers(b)
	for i := 0; i < len(na) && i < len(nb); i++ {
		if na[i] != nb[i] {
			return na[i] < nb[i]
		}
	}
	if len(na) != len(nb) {
		return len(na) < len(nb)
	}
	return a < b
}

func versionNumbers(s string) []int {
	var out []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		n, err := strconv.Atoi(f)
		if err == nil {
			out = append(out, n)
		}
	}
	return out
}

// StopGrace is how long a Command has, once its context ends (Ctrl-C,
// --timeout), to stop on SIGTERM before it is killed, and Run kills what
// is left of its group: what a stopped step leaves is not kept, so the
// grace only lets nsys stop the program it profiles and its helpers, and
// one that ignores SIGTERM holds Ctrl-C up no longer than this.
const StopGrace = 500 * time.Millisecond

// Command prepares a program (nsys, or one nsys or the build runs) started
// with an argument list in its own process group, so that cancelling ctx
// (Ctrl-C, --timeout) stops it and every process it started, asked with
// SIGTERM and killed StopGrace later; where the OS has one, a death signal
// stops it if nsyscheck itself is killed (procAttr).
func Command(ctx context.Context, dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = procAttr()
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		// The whole group: nsys, its launcher and the profiled program.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	// Past the grace, exec kills the process, and Run or CombinedOutput
	// the rest of its group.
	cmd.WaitDelay = StopGrace
	return cmd
}

// KillOnCancel makes a Command with nothing to save when it is stopped (an
// export whose partial output is removed, a build, a question) stop at
// once when its context ends: its whole group is killed, rather than asked
// to end and waited for, so that one that ignores SIGTERM neither holds
// Ctrl-C up nor outlives nsyscheck.
//
// Its death signal is SIGKILL too (hardDeath): one that ignores SIGTERM
// does not outlive a nsyscheck that exits, or is killed, before it ends.
func KillOnCancel(cmd *exec.Cmd) *exec.Cmd {
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = time.Second
	hardDeath(cmd.SysProcAttr)
	return cmd
}

// Run runs a Command with its output to w and then kills whatever of its
// process group is left, so nothing it started outlives it; a guard stops
// the group should nsyscheck die first (startGuard).
func Run(cmd *exec.Cmd, w io.Writer) error {
	cmd.Stdout = w
	cmd.Stderr = w
	return runGuarded(cmd)
}

// CombinedOutput runs a Command and returns its stdout and stderr together
// (their head and tail where they are longer than the bound of
// OutputBuffer), then kills whatever of its process group is left.
func CombinedOutput(cmd *exec.Cmd) ([]byte, error) {
	var out OutputBuffer
	err := Run(cmd, &out)
	return out.Bytes(), err
}

// Bounds of OutputBuffer: what it keeps of the start of a program's output
// and of its end.
const (
	outputHead = 256 << 10
	outputTail = 64 << 10
)

// OutputBuffer keeps what a program writes, up to its bounds: the first
// outputHead bytes (a version, a list of reports) and the last outputTail
// (its closing error), so a program that writes without end (a wrapper in
// a loop, a tool gone wrong) holds no more memory than that.
type OutputBuffer struct {
	head, tail []byte
	// start is where the tail's oldest byte is in tail, once it wrapped.
	start   int
	dropped int64
}

func (b *OutputBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := outputHead - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if len(b.tail) < outputTail {
			k := min(outputTail-len(b.tail), len(p))
			b.tail = append(b.tail, p[:k]...)
			p = p[k:]
			continue
		}
		// The tail is full: overwrite its oldest bytes.
		k := min(outputTail-b.start, len(p))
		copy(b.tail[b.start:], p[:k])
		b.start = (b.start + k) % outputTail
		b.dropped += int64(k)
		p = p[k:]
	}
	return n, nil
}

// Bytes is the output kept: all of it, or its head, a line saying how much
// was left out, and its tail.
func (b *OutputBuffer) Bytes() []byte {
	out := append([]byte{}, b.head...)
	if b.dropped > 0 {
		out = append(out, fmt.Sprintf("\n[... %d bytes of output left out ...]\n", b.dropped)...)
	}
	out = append(out, b.tail[b.start:]...)
	return append(out, b.tail[:b.start]...)
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// versionLimit bounds Version's wait for nsys --version.
const versionLimit = 10 * time.Second

// Version returns ", version X" for nsys, or "" when it cannot tell. A
// question with nothing to save, it is killed with its group at once when
// ctx ends (KillOnCancel), so one that ignores SIGTERM neither holds
// Ctrl-C up nor outlives nsyscheck.
func Version(ctx context.Context, nsys string) string {
	// The answer comes at once; one that does not is no version.
	ctx, cancel := context.WithTimeout(ctx, versionLimit)
	defer cancel()
	cmd := KillOnCancel(Command(ctx, "", nil, nsys, "--version"))
	var out OutputBuffer
	cmd.Stdout = &out
	if err := runGuarded(cmd); err != nil {
		return ""
	}
	line := strings.TrimSpace(strings.SplitN(string(out.Bytes()), "\n", 2)[0])
	if i := strings.LastIndex(line, "version "); i >= 0 {
		line = line[i+len("version "):]
	}
	if line == "" {
		return ""
	}
	return fmt.Sprintf(", version %s", line)
}
