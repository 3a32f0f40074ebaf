package main

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/nsyscheck/nsyscheck/internal/proclocks"
)

// TestScripts runs the command-line scripts in testdata/script/*.txtar.
//
// Scripts see these variables beside testscript's own:
//
//	CAPTURES      the shipped captures (testdata/captures)
//	MEASUREMENTS  testdata/measurements
//	EXPOSURE      testdata/exposure (a capture that exposes planted secrets)
//	NSC_BIN       the folder holding the nsyscheck command alone, for a PATH
//	              without any real tool on it
//
// and these commands:
//
//	exits N CMD ARGS...   run CMD like exec and require exit status N
//	stopwatch start | stopwatch max DURATION   time what lies between
//	noproc TEXT       no process runs in a folder under TEXT or has TEXT in
//	                  its command line (waits up to 5 s for stragglers)
//	sqlexec DB SQL    run SQL on the SQLite file DB (a copy the script made)
//	await FILE        wait until FILE exists (up to 20 s): a background
//	                  command got that far
//	awaitlock FILE    wait until a process is blocked on FILE's flock (up
//	                  to 20 s): a run is queued on a GPU's lock
func TestScripts(t *testing.T) {
	// Each script has its own folder and environment: they run side by
	// side, and beside the other tests that do (TestMakeInstall).
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("CAPTURES", filepath.Join(root, "testdata", "captures"))
			env.Setenv("MEASUREMENTS", filepath.Join(root, "testdata", "measurements"))
			env.Setenv("EXPOSURE", filepath.Join(root, "testdata", "exposure"))
			// Wide lines, so that each message is matched on one line (a
			// script can set its own width; TestStreamWidths lays every
			// stream out at 80 and 200 columns).
			env.Setenv("COLUMNS", "400")
			// Keep nsyscheck's build and export caches inside the work folder.
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, "cache"))
			// The scripts' processes are short and their heaps small: the
			// collector's default pace (a collection each time the heap
			// doubles from 4 MiB) spent 5-10% of their CPU time. No
			// script looks at memory; every answer is the same.
			env.Setenv("GOGC", "400")
			if dir := os.Getenv(scriptProfilesEnv); dir != "" {
				env.Setenv(scriptProfilesEnv, dir)
			}
			for _, dir := range filepath.SplitList(env.Getenv("PATH")) {
				if _, err := os.Stat(filepath.Join(dir, "nsyscheck")); err == nil {
					env.Setenv("NSC_BIN", dir)
					break
				}
			}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "tracing" {
				return canTrace(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"stopwatch": cmdStopwatch,
			"noproc":    cmdNoproc,
			"exits":     cmdExits,
			"schema":    cmdSchema,
			"sqlexec":   cmdSQLExec,
			"await":     cmdAwait,
			"awaitlock": cmdAwaitLock,
			"opens":     cmdOpens,
		},
	})
}

// canTrace reports whether strace is installed and may trace a process
// here (a container may forbid ptrace).
func canTrace() bool {
	if _, err := exec.LookPath("strace"); err != nil {
		return false
	}
	return exec.Command("strace", "-f", "-qq", "-o", os.DevNull, "true").Run() == nil
}

func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N CMD ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %v", err)
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// cmdOpens: opens LO HI PATTERN FILE checks that between LO and HI lines
// of FILE (a trace of the calls that open files) match the regular
// expression PATTERN. An SQLite connection the stream gave back may be
// the one its checks take up next, so the opens of one run vary within
// such a range.
func cmdOpens(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: opens LO HI PATTERN FILE")
	}
	lo, err1 := strconv.Atoi(args[0])
	hi, err2 := strconv.Atoi(args[1])
	re, err3 := regexp.Compile(args[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		ts.Fatalf("opens: %v", err)
	}
	n := 0
	for _, line := range strings.Split(ts.ReadFile(args[3]), "\n") {
		if re.MatchString(line) {
			n++
		}
	}
	if n < lo || n > hi {
		ts.Fatalf("%d opens match %s, want %d to %d", n, args[2], lo, hi)
	}
}

func cmdSQLExec(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sqlexec DB SQL")
	}
	db, err := sql.Open("sqlite3", ts.MkAbs(args[0]))
	if err != nil {
		ts.Fatalf("sqlexec: %v", err)
	}
	defer db.Close()
	if _, err := db.Exec(args[1]); err != nil {
		ts.Fatalf("sqlexec %s: %v", args[0], err)
	}
}

// awaitWithin bounds await and awaitlock: far more than any step takes,
// so that only a script that would hang fails on it.
const awaitWithin = 20 * time.Second

func cmdAwait(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: await FILE")
	}
	path := ts.MkAbs(args[0])
	for deadline := time.Now().Add(awaitWithin); ; time.Sleep(2 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("await: no %s within %s", args[0], awaitWithin)
		}
	}
}

func cmdAwaitLock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: awaitlock FILE")
	}
	if err := proclocks.AwaitWaiter(ts.MkAbs(args[0]), awaitWithin); err != nil {
		ts.Fatalf("awaitlock: %v", err)
	}
}

func cmdStopwatch(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! stopwatch")
	}
	switch {
	case len(args) == 1 && args[0] == "start":
		ts.Setenv("STOPWATCH_START", strconv.FormatInt(time.Now().UnixNano(), 10))
	case len(args) == 2 && args[0] == "max":
		limit, err := time.ParseDuration(args[1])
		if err != nil {
			ts.Fatalf("stopwatch max: %v", err)
		}
		ns, err := strconv.ParseInt(ts.Getenv("STOPWATCH_START"), 10, 64)
		if err != nil {
			ts.Fatalf("stopwatch max before stopwatch start")
		}
		if took := time.Since(time.Unix(0, ns)); took > limit {
			ts.Fatalf("took %s, more than %s", took.Round(time.Millisecond), limit)
		}
	default:
		ts.Fatalf("usage: stopwatch start | stopwatch max DURATION")
	}
}

func cmdNoproc(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: noproc TEXT")
	}
	text := args[0]
	var found []string
	for deadline := time.Now().Add(5 * time.Second); ; {
		found = processesWith(text)
		if len(found) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(found) > 0 {
		ts.Fatalf("processes left running:\n%s", strings.Join(found, "\n"))
	}
}

// processesWith lists the live processes whose working folder lies under
// text or whose command line mentions it.
func processesWith(text string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		if stat, err := os.ReadFile(filepath.Join(dir, "stat")); err == nil {
			// A zombie (state Z) is already dead, only not yet reaped.
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
				continue
			}
		}
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		cwd, _ := os.Readlink(filepath.Join(dir, "cwd"))
		line := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if strings.Contains(line, text) || cwd == text || strings.HasPrefix(cwd, text+"/") {
			out = append(out, e.Name()+" (in "+cwd+"): "+line)
		}
	}
	return out
}
