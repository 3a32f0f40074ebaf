// Package perfbench measures nsyscheck on scaled-up captures next to what a
// user would otherwise run: the sqlite3 shell with the query of nsys's
// cuda_api_sum report, and nsys stats itself. Each contender runs as a child
// process, so that wall time and peak RSS are its own.
package perfbench

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// QueryFull is nsys's cuda_api_sum query for the sqlite3 shell, with an exact
// median from window functions in place of nsys's Python median().
//
//go:embed cuda_api_sum.sql
var QueryFull string

// QueryNoMedian is the same query without the median: one GROUP BY pass.
//
//go:embed cuda_api_sum_nomedian.sql
var QueryNoMedian string

// QueryCopyJoin joins every copy to its runtime call and groups them by copy
// kind: the sqlite3 shell's side of nsyscheck audit's speed target.
//
//go:embed copy_join.sql
var QueryCopyJoin string

// Measure is one run of a child process.
type Measure struct {
	Wall   time.Duration
	CPU    time.Duration // user and system time of the process and its children
	MaxRSS int64         // bytes
	Exit   int
	Stdout string // its first 4 KiB
	Stderr string // its last 4 KiB
	Err    error  // it could not be started, or was killed
}

// limited keeps the first (or last) n bytes written to it.
type limited struct {
	buf  []byte
	n    int
	tail bool
}

func (l *limited) Write(p []byte) (int, error) {
	if l.tail {
		l.buf = append(l.buf, p...)
		if len(l.buf) > l.n {
			l.buf = l.buf[len(l.buf)-l.n:]
		}
	} else if room := l.n - len(l.buf); room > 0 {
		l.buf = append(l.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// TimeBin is GNU time, used where installed to read the child's peak RSS.
// Go starts children with clone(CLONE_VM|CLONE_VFORK), so the ru_maxrss that
// wait4 reports for a child includes the parent's own RSS at the moment of
// exec; GNU time forks from a small process and reports the child alone.
// Without it, Run falls back to ProcessState.SysUsage, whose figure is then
// at least the calling process's RSS.
var TimeBin = "/usr/bin/time"

const rssMarker = "perfbench-maxrss-kb "

// Run runs argv with extra environment variables and optional standard
// input, and measures its wall time, CPU time and peak resident set size.
func Run(argv []string, env []string, stdin io.Reader) Measure {
	wrapped := false
	if TimeBin != "" {
		if _, err := os.Stat(TimeBin); err == nil {
			argv = append([]string{TimeBin, "-f", "\n" + rssMarker + "%M"}, argv...)
			wrapped = true
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = stdin
	out, errOut := &limited{n: 4096}, &limited{n: 4096, tail: true}
	cmd.Stdout, cmd.Stderr = out, errOut
	start := time.Now()
	err := cmd.Run()
	m := Measure{Wall: time.Since(start), Stdout: string(out.buf), Stderr: string(errOut.buf)}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			m.MaxRSS = ru.Maxrss * 1024 // kilobytes on Linux
		}
		m.Exit = cmd.ProcessState.ExitCode()
		m.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if wrapped {
		if i := strings.LastIndex(m.Stderr, rssMarker); i >= 0 {
			kb, err := strconv.ParseInt(strings.TrimSpace(m.Stderr[i+len(rssMarker):]), 10, 64)
			if err == nil {
				m.MaxRSS = kb * 1024
			}
			m.Stderr = strings.TrimSuffix(m.Stderr[:i], "\n")
		}
		if m.Exit > 128 && strings.Contains(m.Stderr, "terminated by signal") {
			m.Err = errors.New(lastLine(m.Stderr))
		}
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		m.Err = err
	} else if m.Exit < 0 {
		m.Err = errors.New(cmd.ProcessState.String())
	}
	return m
}

// Median returns the median of xs (the mean of the middle two for an even
// count), or 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Stdin returns a reader of s, for Run.
func Stdin(s string) io.Reader { return strings.NewReader(s) }

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// ProcessCPU is the user and system time this process has taken so far.
func ProcessCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("reading the process's CPU time: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
