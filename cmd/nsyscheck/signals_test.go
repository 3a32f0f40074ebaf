package main

import (
	"bytes"
	"errors"
	"fmt"
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

// signalledAfter returns a runner for badCase.run: it starts nsyscheck as a
// process (the test binary, on PATH under that name), sends it sig once it
// has run for after (the input keeps it busy several times as long), and
// checks that it stopped within a second of the signal, at whatever step it
// was: a query, a loop over records, a computation in memory.
func signalledAfter(sig syscall.Signal, after time.Duration) func(t *testing.T, args []string) (int, string, string) {
	return func(t *testing.T, args []string) (int, string, string) {
		t.Helper()
		if _, err := exec.LookPath("nsyscheck"); err != nil {
			t.Skip("the test binary is not on PATH as nsyscheck")
		}
		cmd := exec.Command("nsyscheck", args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		var err error
		select {
		case err = <-exited:
			t.Fatalf("nsyscheck %s ended (%v) before the signal: the input is too small to test an interruption\n%s", strings.Join(args, " "), err, stderr.String())
		case <-time.After(after):
		}
		sent := time.Now()
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		select {
		case err = <-exited:
		case <-time.After(hangAfter):
			cmd.Process.Kill()
			t.Fatalf("nsyscheck %s ran on %s after the signal", strings.Join(args, " "), hangAfter)
		}
		if d := time.Since(sent); d > time.Second {
			t.Errorf("took %s to stop after the signal", d)
		}
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String(), stderr.String()
	}
}

// bigExport puts into dir the shipped export with 600,000 more
// cudaMemcpyAsync calls, each with its copy, on a thread and stream of
// their own after the program's, the trace's stop moved after them: verify
// and audit read it for seconds. It is made once and shared.
func bigExport(t *testing.T, dir string) string {
	t.Helper()
	return linkShared(t, dir, "pinned.sqlite", makeBigExport)
}

// makeBigExport writes bigExport's export to p.
func makeBigExport(t *testing.T, p string) {
	t.Helper()
	copyShipped(t, filepath.Dir(p), filepath.Base(p))
	db := openRW(t, p)
	defer db.Close()
	mustExec(t, db, `CREATE TEMP TABLE p AS SELECT
			(SELECT max("end") FROM CUPTI_ACTIVITY_KIND_MEMCPY) + 1000000000 AS t0,
			(SELECT id FROM StringIds WHERE value LIKE 'cudaMemcpyAsync%' LIMIT 1) AS nm,
			(SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN `+asyncIDs+` LIMIT 1) + 1 AS gt,
			(SELECT globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY LIMIT 1) AS gp,
			(SELECT id FROM ENUM_CUDA_MEMCPY_OPER WHERE name LIKE '%HTOD') AS hk,
			(SELECT id FROM ENUM_CUDA_MEM_KIND WHERE name LIKE '%PAGEABLE') AS pg,
			(SELECT id FROM ENUM_CUDA_MEM_KIND WHERE name LIKE '%_DEVICE') AS dv`,
		`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 599999)
		INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, "end", eventClass, globalTid, correlationId, nameId, returnValue)
			SELECT t0 + i * 20000, t0 + i * 20000 + 5000, 1, gt, 5000000 + i, nm, 0 FROM n, p`,
		`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 599999)
		INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, "end", deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind)
			SELECT t0 + i * 20000 + 4000, t0 + i * 20000 + 5000, 0, 1, 99, 5000000 + i, gp, 4096, hk, pg, dv FROM n, p`,
		// Stream 99, listed as nsys lists a program's streams.
		`INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (99, 0, 1, 22, 1, 0, 2)`,
		// The trace stops after its last record.
		`UPDATE ANALYSIS_DETAILS SET stopTime = (SELECT t0 FROM p) + 13000000000, duration = (SELECT t0 FROM p) + 13000000000 - startTime`)
	// nsys's count of the events it collected holds the added ones:
	// without it the export is refused as edited as soon as its records
	// are counted, and a signal after that finds the command ended.
	recount(t, db)
}

// bigMeasurements puts a measurements file of 200,000 copy rows, which
// takes verify and report seconds to read and judge in memory, into dir
// (made once, shared by the cases that read it).
func bigMeasurements(t *testing.T, dir string) string {
	t.Helper()
	return linkShared(t, dir, "big.json", makeBigMeasurements)
}

// makeBigMeasurements writes bigMeasurements' file to p.
func makeBigMeasurements(t *testing.T, p string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"schema": "nsyscheck.measurements/v1", "gpu": "Test GPU", "copies": [`)
	for i := 0; i < 200000; i++ {
		bytes := int64(4096 * (i/4 + 1))
		rate := 10e9
		if (i/2)%2 == 1 {
			rate = 50e9
		}
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"direction": %q, "source": %q, "bytes": %d, "ms": %g}`,
			[]string{"h2d", "d2h"}[i%2], []string{"pageable", "pinned"}[(i/2)%2], bytes, float64(bytes)/rate*1e3)
	}
	b.WriteString("]}\n")
	writeFile(t, p, []byte(b.String()))
}

// longStepCases: SIGINT or SIGTERM while verify or audit reads a large
// export (its queries and its loop over records) or while verify and
// report judge a large measurements file in memory: each stops with exit
// status 130 within a second, and writes nothing.
func longStepCases() []badCase {
	name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}
	var out []badCase
	add := func(sig syscall.Signal, command, while string, after time.Duration, mk func(t *testing.T, dir string) []string, want string) {
		out = append(out, badCase{group: "interruptions", name: command + " gets " + name[sig] + " " + while, cmd: command,
			run: signalledAfter(sig, after), make: mk, exit: exitSignal, want: []string{want}})
	}
	export := func(extra ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string { return append([]string{bigExport(t, dir)}, extra...) }
	}
	// verify reads the export for about a second on a quiet machine and
	// then judges it in memory, which a signal leaves after 500 ms: at
	// 400 ms it is inside the read, and the read names itself.
	add(syscall.SIGINT, "verify", "while it reads an export of 600,000 copies", 400*time.Millisecond, export(), "interrupted while reading the export")
	// The audit reads the export in about a second on a quiet machine, so
	// at 800 ms it may already be past the read: whichever step it is at
	// must stop it.
	add(syscall.SIGTERM, "audit", "while it reads an export of 600,000 copies", 800*time.Millisecond, export("--nvidia-rule", "off"), "interrupted while")
	add(syscall.SIGINT, "verify", "while it judges a measurements file of 200,000 rows", 300*time.Millisecond,
		func(t *testing.T, dir string) []string { return []string{bigMeasurements(t, dir)} }, "interrupted while reading and checking")
	add(syscall.SIGTERM, "report", "while it judges a measurements file of 200,000 rows", 300*time.Millisecond,
		func(t *testing.T, dir string) []string {
			return []string{bigMeasurements(t, dir), "-o", filepath.Join(t.TempDir(), "out")}
		}, "interrupted while reading")
	return out
}
