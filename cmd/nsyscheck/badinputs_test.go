package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/nsyscheck/nsyscheck/internal/environ"
	"github.com/nsyscheck/nsyscheck/internal/golden"
	nsysrecount "github.com/nsyscheck/nsyscheck/internal/recount"
)

const shippedDir = "../../testdata/captures/h200-pinned"

// hangAfter is how long a bad input may take before the test calls it a
// hang; every answer comes within a second, this is only a backstop.
const hangAfter = 30 * time.Second

// badCase is a bad input: how it is made (from copies of the shipped
// capture, in a fresh folder) and what nsyscheck must answer.
type badCase struct {
	group, name string
	// make builds the input in dir and returns verify's arguments.
	make func(t *testing.T, dir string) []string
	// env is the environment nsyscheck runs with, over the process's (e.g.
	// PATH without nsys).
	env map[string]string
	// serial cases run alone, before the others run side by side: they
	// signal the test's own process, set its hooks or environment, or time
	// a process of their own (every case with run).
	serial bool
	exit   int
	// want must all appear in stderr (exit 2) or stdout (otherwise).
	want []string
	// notHeld are claims and predictions ("1", "4.bytes") that the input
	// cannot back: they must not come out held.
	notHeld []string
	// mayWrite allows new files in the input's folder (the export cache
	// beside a writable .nsys-rep).
	mayWrite bool
	// mayChange names files of the input's folder the command may rewrite
	// (an export cache made from an older report).
	mayChange []string
	// cmd is the command run, "verify" when empty; run, when set, runs it
	// instead of Main in this process (e.g. a process to send a signal).
	cmd string
	run func(t *testing.T, args []string) (code int, stdout, stderr string)
	// never must appear nowhere in the output (planted secrets).
	never []string
	// check makes further checks once the command ran.
	check func(t *testing.T, dir string)
}

func badCases() []badCase {
	cases := []badCase{
		// SQLite exports.
		{group: "SQLite export", name: "truncated to half its size",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				data := readFile(t, p)
				writeFile(t, p, data[:len(data)/2])
				return []string{p}
			},
			exit: 2, want: []string{"pinned.sqlite", "the file is truncated"}},
		{group: "SQLite export", name: "zero-filled (same size)",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				writeFile(t, p, make([]byte, len(readFile(t, p))))
				return []string{p}
			},
			exit: 2, want: []string{"pinned.sqlite", "only zero bytes"}},
		{group: "SQLite export", name: "not SQLite at all (a CSV named .sqlite)",
			make: func(t *testing.T, dir string) []string {
				p := filepath.Join(dir, "capture.sqlite")
				writeFile(t, p, readFile(t, filepath.Join(shippedDir, "pinned_cuda_api_trace.csv")))
				return []string{p}
			},
			exit: 2, want: []string{"capture.sqlite", "not an SQLite database"}},
		{group: "SQLite export", name: "empty file",
			make: func(t *testing.T, dir string) []string {
				p := filepath.Join(dir, "capture.sqlite")
				writeFile(t, p, nil)
				return []string{p}
			},
			exit: 2, want: []string{"capture.sqlite", "empty"}},
		{group: "SQLite export", name: "no CUPTI_ACTIVITY_KIND_MEMCPY table",
			make: sqliteEdit(`DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY`),
			exit: 0, want: []string{"CUPTI_ACTIVITY_KIND_MEMCPY", "prediction 4 held", "bytes unchecked: no per-copy records"},
			notHeld: []string{"4.bytes"}},
		{group: "SQLite export", name: "no StringIds table",
			make: sqliteEdit(`DROP TABLE StringIds`),
			exit: 2, want: []string{"pinned.sqlite", "StringIds"}},
		{group: "SQLite export", name: "no CUDA API trace (CUPTI_ACTIVITY_KIND_RUNTIME)",
			make: sqliteEdit(`DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME`),
			exit: 2, want: []string{"pinned.sqlite", "CUPTI_ACTIVITY_KIND_RUNTIME", "no CUDA API trace"}},
		{group: "SQLite export", name: "a required column gone (MEMCPY.bytes)",
			make: sqliteEdit(`ALTER TABLE CUPTI_ACTIVITY_KIND_MEMCPY DROP COLUMN bytes`),
			exit: 2, want: []string{"pinned.sqlite", "column bytes is missing"}},

		// CSV reports.
		{group: "CSV reports", name: "cuda_api_trace without its Duration (ns) column",
			make: csvEdit(func(s string) string { return dropCSVColumn(s, "Duration (ns)") }),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "Duration (ns)"}},
		{group: "CSV reports", name: "cuda_api_trace with Duration (ns) renamed Elapsed",
			make: csvEdit(func(s string) string {
				return strings.Replace(s, "Duration (ns)", "Elapsed", 1)
			}),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "Duration (ns)"}},
		{group: "CSV reports", name: "cuda_api_trace header says Duration (us), values still ns",
			make: csvEdit(func(s string) string {
				return strings.Replace(s, "Duration (ns)", "Duration (us)", 1)
			}),
			// Every call then lasts 1000 times longer than it did: 1000
			// times what cuda_api_sum totals (and the calls of the
			// program's thread overlap one another).
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "its 283 cudaMemcpy calls last 1081458687000 ns in all where pinned_cuda_api_sum.csv totals 1081458687 ns"},
			notHeld: []string{"4.calltime", "4.bytes", "4"}},
		{group: "CSV reports", name: "a byte-order mark before the header",
			make: csvEdit(func(s string) string { return "\ufeff" + s }),
			exit: 0, want: []string{"prediction 2 held", "prediction 4 held"}},
		{group: "CSV reports", name: "CRLF line ends",
			make: csvEdit(func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }),
			exit: 0, want: []string{"prediction 2 held", "prediction 4 held"}},
		{group: "CSV reports", name: `quoted commas in thread names ("pinned, main")`,
			make: csvEdit(func(s string) string {
				return regexp.MustCompile(`(?m),pinned$`).ReplaceAllString(s, `,"pinned, main"`)
			}),
			exit: 0, want: []string{"prediction 2 held", "4.calltime  held", "4.bytes     held"}},
		{group: "CSV reports", name: "a negative duration on a cudaMemcpyAsync row",
			make: csvEdit(func(s string) string { return editFirstAsync(s, "-7605600") }),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "Duration (ns)"},
			notHeld: []string{"2", "4"}},
		{group: "CSV reports", name: "a non-numeric duration on a cudaMemcpyAsync row",
			make: csvEdit(func(s string) string { return editFirstAsync(s, "7.6 ms") }),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "Duration (ns)"},
			notHeld: []string{"2", "4"}},

		// What the trace holds.
		{group: "trace content", name: "0 cudaMemcpyAsync calls",
			make: sqliteEdit(deleteAsync(`1`)),
			exit: 1, want: []string{"prediction 4 unavailable", "holds no host-to-device cudaMemcpyAsync calls"},
			notHeld: []string{"4.calltime", "4.bytes", "4"}},
		{group: "trace content", name: "21 cudaMemcpyAsync calls (the last pinned one gone)",
			make: sqliteEdit(deleteAsync(`start = (SELECT max(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r
				WHERE r.nameId IN (SELECT id FROM StringIds WHERE value LIKE 'cudaMemcpyAsync%'))`)),
			// The pinned range holds 9 calls: the groups are still
			// unambiguous, so their numbers decide, beside a diagnostic.
			exit: 0, want: []string{"prediction 4 held", `lesson-structure: NVTX range "async-pinned" holds 9 cudaMemcpyAsync calls`}},
		{group: "trace content", name: "33 cudaMemcpyAsync calls (11 extra in the pinned range)",
			make: sqliteEdit(`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME
				(start, end, eventClass, globalTid, correlationId, nameId, returnValue, callchainId)
				SELECT start + 1, end + 1, eventClass, globalTid, correlationId + 1000000, nameId, returnValue, callchainId
				FROM CUPTI_ACTIVITY_KIND_RUNTIME
				WHERE nameId IN (SELECT id FROM StringIds WHERE value LIKE 'cudaMemcpyAsync%')
				ORDER BY start DESC LIMIT 11`),
			// Each copy of a call starts 1 ns after it on the same thread.
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_RUNTIME", "overlap in time, where a thread makes one call at a time"},
			notHeld: []string{"4.calltime", "4.bytes", "4"}},
		{group: "trace content", name: "NVTX ranges never closed (every range's end NULL)",
			make: sqliteEdit(`UPDATE NVTX_EVENTS SET end = NULL`),
			exit: 1, want: []string{`open-nvtx-range: NVTX range "async-pageable"`, "was never closed", "prediction 4 unavailable"},
			notHeld: []string{"4.calltime", "4.bytes", "4"}},
		{group: "trace content", name: "a second thread of the program makes the same calls",
			make: sqliteEdit(`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME
				(start, end, eventClass, globalTid, correlationId, nameId, returnValue, callchainId)
				SELECT start + 3, end + 5000000, eventClass, globalTid + 1, correlationId + 2000000, nameId, returnValue, callchainId
				FROM CUPTI_ACTIVITY_KIND_RUNTIME`),
			exit: 0, want: []string{"thread 22/22", "prediction 4 held"}},
		{group: "trace content", name: "a second process makes the same calls",
			make: sqliteEdit(`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME
				(start, end, eventClass, globalTid, correlationId, nameId, returnValue, callchainId)
				SELECT start + 3, end + 5000000, eventClass, globalTid + (77 << 24) + 55, correlationId + 3000000, nameId, returnValue, callchainId
				FROM CUPTI_ACTIVITY_KIND_RUNTIME`),
			exit: 0, want: []string{"thread 22/22", "prediction 4 held"}},

		// Reports, paths and folders.
		{group: "reports and paths", name: ".nsys-rep and no nsys installed",
			make: func(t *testing.T, dir string) []string {
				return []string{copyShipped(t, dir, "pinned.nsys-rep")}
			},
			env:  map[string]string{"PATH": "/nonexistent", "NSYS": ""},
			exit: 2, want: []string{"pinned.nsys-rep", "no nsys found", "give the report's SQLite export instead"}},
		{group: "reports and paths", name: ".nsys-rep of random bytes and no nsys installed",
			make: func(t *testing.T, dir string) []string {
				p := filepath.Join(dir, "random.nsys-rep")
				b := make([]byte, 4096)
				for i := range b {
					b[i] = byte(i*131 + i/7) // not a report's first bytes, nor an SQLite database's
				}
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
				return []string{p}
			},
			env:  map[string]string{"PATH": "/nonexistent", "NSYS": ""},
			exit: 2, want: []string{"random.nsys-rep", "is not an Nsight Systems report", "no nsys was found to try", "NVIDIA Tegra Profiler Report"}},
		{group: "reports and paths", name: ".nsys-rep with its SQLite export beside it (nsys not needed)",
			make: func(t *testing.T, dir string) []string {
				return []string{besideReport(t, dir, time.Hour)}
			},
			env:  map[string]string{"PATH": "/nonexistent", "NSYS": ""},
			exit: 0, want: []string{"read pinned.sqlite, the SQLite export made from this report, instead of exporting the report again with nsys", "prediction 4 held"}},
		{group: "reports and paths", name: ".nsys-rep with an SQLite export older than it beside it and no nsys installed",
			make: func(t *testing.T, dir string) []string {
				return []string{besideReport(t, dir, -time.Hour)}
			},
			env:  map[string]string{"PATH": "/nonexistent", "NSYS": ""},
			exit: 0, want: []string{"read pinned.sqlite, the SQLite export beside the report, because no nsys was found to export it",
				"the export is older than the report", "prediction 4 held"}},
		{group: "reports and paths", name: "a .qdstrm stream nsys left without a report",
			make: func(t *testing.T, dir string) []string {
				p := filepath.Join(dir, "pinned.qdstrm")
				if err := os.WriteFile(p, []byte("QDSTRM raw stream"), 0o644); err != nil {
					t.Fatal(err)
				}
				return []string{p}
			},
			exit: 2, want: []string{"pinned.qdstrm", "raw Nsight Systems stream (.qdstrm)", "QdstrmImporter"}},
		{group: "reports and paths", name: ".nsys-rep in a read-only folder (export cached elsewhere)",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.nsys-rep")
				copyShipped(t, dir, "pinned.results.json")
				chmodReadOnly(t, dir)
				return []string{"--nsys", fakeNsys(t), p}
			},
			exit: 0, want: []string{"pinned.nsys-rep", "prediction 4 held"}},
		{group: "reports and paths", name: "SQLite export in a read-only folder",
			make: func(t *testing.T, dir string) []string {
				copyShipped(t, dir, "pinned.sqlite")
				copyShipped(t, dir, "pinned.results.json")
				chmodReadOnly(t, dir)
				return []string{dir}
			},
			exit: 0, want: []string{"prediction 1 held", "prediction 4 held"}},
		{group: "reports and paths", name: `a path with spaces and quotes (my "h200" 'run' #1/)`,
			make: func(t *testing.T, dir string) []string {
				sub := filepath.Join(dir, `my "h200" 'run' #1`)
				if err := os.Mkdir(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				copyShipped(t, sub, "pinned.sqlite")
				copyShipped(t, sub, "pinned.results.json")
				return []string{sub}
			},
			exit: 0, want: []string{`my "h200" 'run' #1/pinned.sqlite`, "prediction 4 held"}},
		{group: "reports and paths", name: "a folder with no capture in it",
			make: func(t *testing.T, dir string) []string {
				writeFile(t, filepath.Join(dir, "notes.md"), []byte("# notes\n"))
				return []string{dir}
			},
			exit: 2, want: []string{"no capture found in", "looked for *.sqlite"}},
		{group: "reports and paths", name: "a path that does not exist",
			make: func(t *testing.T, dir string) []string {
				return []string{filepath.Join(dir, "missing.sqlite")}
			},
			exit: 2, want: []string{"missing.sqlite", "no such file"}},
		{group: "reports and paths", name: "a text file that is none of the inputs (a build log)",
			make: func(t *testing.T, dir string) []string {
				p := filepath.Join(dir, "build.log")
				writeFile(t, p, []byte("nvcc -O3 -o pinned pinned.cu\nok\n"))
				return []string{p}
			},
			exit: 2, want: []string{"build.log", "not an input nsyscheck reads", "program's stdout"}},
	}
	cases = append(append(append(append(append(append(append(append(append(append(append(append(append(cases, faultCases()...), scrubSignalCases()...), longStepCases()...), auditCases()...), hardeningCases()...), append(append(append(append(recordCases(), consistencyCases()...), replayCases()...), listCases()...), jobCases()...)...), contradictionCases()...), ownerCases()...), summaryCases()...), gateCases()...), encodingCases()...), cutCases()...), outputCases()...)
	cases = append(append(append(append(append(append(append(append(append(cases, shareCases()...), runCases()...), stopCases()...), secretFormatCases()...), jsonPlaceCases()...), adv19Cases()...), gpuCases()...), faults20Cases()...), adv20Cases()...)
	return cases
}

// badResult is what one bad input got.
type badResult struct {
	c              badCase
	exit           int
	stdout, stderr string
	verdicts       map[string]string // claim and prediction ids -> verdict
	reasons        map[string]string // unavailable claim -> reason
	thread         string            // the thread analysed
	warnings       []string          // warning diagnostics, one per code
}

// TestBadInputs runs every bad input: the serial cases one after another,
// then the others side by side, each with an environment of its own
// (Streams.Env); docs/bad-inputs.md is compared once all have run.
func TestBadInputs(t *testing.T) {
	cases := badCases()
	results := make([]*badResult, len(cases))
	for i, c := range cases {
		t.Run(strings.ReplaceAll(c.group+"/"+c.name, " ", "_"), func(t *testing.T) {
			serial := c.serial || c.run != nil
			if !serial {
				t.Parallel()
			}
			dir := t.TempDir()
			args := c.make(t, dir)
			before := snapshot(t, dir)
			// Each message on one line, as the document shows it.
			vars := map[string]string{"COLUMNS": "10000", "XDG_CACHE_HOME": t.TempDir()}
			for k, v := range c.env {
				vars[k] = v
			}
			var env environ.Env
			if serial {
				// A process of the case's own reads the test's environment.
				for k, v := range vars {
					t.Setenv(k, v)
				}
			} else {
				env = environ.With(vars)
			}

			res := badResult{c: c}
			command := c.cmd
			if command == "" {
				command = "verify"
			}
			run := func(t *testing.T, args []string) (int, string, string) { return runMainIn(t, env, args) }
			if c.run != nil {
				run = c.run
			}
			res.exit, res.stdout, res.stderr = run(t, append([]string{command}, args...))
			if command == "verify" && c.run == nil {
				jsonExit, jsonOut, _ := runMainIn(t, env, append([]string{"verify", "--format", "json"}, args...))
				if jsonExit != exitError {
					if err := validateOutput([]byte(jsonOut)); err != nil {
						t.Errorf("JSON output does not match docs/output.schema.json: %v", err)
					}
				}
				res.verdicts, res.reasons, res.thread, res.warnings = readVerdicts(jsonOut)
			}

			after := snapshot(t, dir)
			for p, b := range before {
				if slices.Contains(c.mayChange, filepath.Base(p)) {
					continue
				}
				if a, ok := after[p]; !ok || a != b {
					t.Errorf("input %s changed: before %s, after %s", p, b, a)
				}
			}
			for _, s := range c.never {
				if strings.Contains(res.stdout+res.stderr, s) {
					t.Errorf("the output shows %q", s)
				}
			}
			if c.check != nil {
				c.check(t, dir)
			}
			if !c.mayWrite {
				for p := range after {
					if _, ok := before[p]; !ok {
						t.Errorf("nsyscheck wrote %s into the input's folder", p)
					}
				}
			}
			all := res.stdout + res.stderr
			for _, bad := range []string{"panic:", "goroutine ", "runtime error"} {
				if strings.Contains(all, bad) {
					t.Errorf("output holds %q:\n%s", bad, all)
				}
			}
			if res.exit != c.exit {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", res.exit, c.exit, res.stdout, res.stderr)
			}
			where := res.stdout
			if c.exit == exitError || c.exit == exitSignal {
				where = res.stderr
				if res.stdout != "" {
					t.Errorf("an input error printed verdicts:\n%s", res.stdout)
				}
				// The message names the file or folder given.
				named := false
				for _, a := range args {
					if strings.Contains(res.stderr, filepath.Base(a)) {
						named = true
					}
				}
				if !named {
					t.Errorf("the message names none of %q:\n%s", args, res.stderr)
				}
			}
			for _, w := range c.want {
				// Text output wraps at its width: compare words.
				if !strings.Contains(strings.Join(strings.Fields(where), " "), strings.Join(strings.Fields(w), " ")) {
					t.Errorf("output lacks %q:\n%s", w, where)
				}
			}
			for _, id := range c.notHeld {
				if v := res.verdicts[id]; v == "held" {
					t.Errorf("%s came out held from an input that cannot back it", id)
				}
			}
			if c.exit != exitError {
				for id, v := range res.verdicts {
					if v == "unavailable" && regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(id)+`\s+held`).MatchString(res.stdout) {
						t.Errorf("%s is unavailable but the table shows it held", id)
					}
				}
			}
			results[i] = &res
		})
	}
	// docs/bad-inputs.md is the real output of every case: compared with it
	// on a full run, rewritten with -update, once the cases side by side
	// are done. A run of some cases only (-run TestBadInputs/...) cannot
	// tell the whole document.
	t.Cleanup(func() { compareBadInputsDoc(t, results) })
}

// compareBadInputsDoc compares docs/bad-inputs.md with the cases' results
// (rewrites it with -update) when every case ran.
func compareBadInputsDoc(t *testing.T, results []*badResult) {
	var ran []badResult
	for _, r := range results {
		if r != nil {
			ran = append(ran, *r)
		}
	}
	if len(ran) < len(results) {
		t.Logf("%d of %d cases ran: docs/bad-inputs.md not compared", len(ran), len(results))
		return
	}
	doc := filepath.Join("..", "..", "docs", "bad-inputs.md")
	got := badInputsDoc(ran)
	if golden.Updating() {
		if err := os.WriteFile(doc, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if w, g := signalRowsAlike(string(want)), signalRowsAlike(got); w != g {
		t.Errorf("%s differs from the real output (go test ./cmd/nsyscheck -run TestBadInputs -update rewrites it)\n%s", doc, golden.FirstDiff(w, g))
	}
}

// signalRows are the rows of a case a signal stops (exit 130): the step
// the signal lands in, and so its words, vary from run to run.
var signalRows = regexp.MustCompile(`(?m)^(\|.*\| 130 \|) .*\|$`)

// signalRowsAlike is the document with each signal row's answer left out,
// as two runs of the cases agree on it.
func signalRowsAlike(doc string) string {
	return signalRows.ReplaceAllString(doc, "$1 (the step the signal stopped) |")
}

// runMain runs nsyscheck's Main in the process's environment, turning a
// panic into a test failure.
func runMain(t *testing.T, args []string) (code int, stdout, stderr string) {
	t.Helper()
	return runMainIn(t, nil, args)
}

// runMainIn is runMain with the environment env (nil: the process's).
func runMainIn(t *testing.T, env environ.Env, args []string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("nsyscheck %s panicked: %v\n%s", strings.Join(args, " "), r, debug.Stack())
				code = -1
			}
		}()
		code = Main(args, Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Env: env})
	}()
	select {
	case <-done:
	case <-time.After(hangAfter):
		// A FIFO, a device or a quadratic scan: fail rather than hang.
		t.Fatalf("nsyscheck %s gave no answer in %s", strings.Join(args, " "), hangAfter)
	}
	return code, out.String(), errb.String()
}

func readVerdicts(jsonOut string) (verdicts, reasons map[string]string, thread string, warnings []string) {
	verdicts, reasons = map[string]string{}, map[string]string{}
	var env struct {
		Results []json.RawMessage
	}
	if json.Unmarshal([]byte(jsonOut), &env) != nil || len(env.Results) != 1 {
		return verdicts, reasons, "", nil
	}
	var r struct {
		Input struct {
			Thread string
		}
		Diagnostics []struct {
			Level, Code, Message string
		}
		Claims []struct {
			ID, Verdict, Reason string
		}
		Predictions []struct {
			ID      json.Number
			Verdict string
		}
	}
	if json.Unmarshal(env.Results[0], &r) != nil {
		return verdicts, reasons, "", nil
	}
	thread = r.Input.Thread
	seen := map[string]bool{}
	for _, d := range r.Diagnostics {
		if d.Level == "warning" && !seen[d.Code] {
			seen[d.Code] = true
			warnings = append(warnings, d.Code+": "+d.Message)
		}
	}
	for _, c := range r.Claims {
		verdicts[c.ID] = c.Verdict
		if c.Verdict == "unavailable" {
			reasons[c.ID] = c.Reason
		}
	}
	for _, p := range r.Predictions {
		verdicts[p.ID.String()] = p.Verdict
	}
	return verdicts, reasons, thread, warnings
}

// snapshot records every file under dir by content hash, size and
// modification time.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() || info.Size() > 64<<20 {
			// FIFOs, links to devices, sparse giants: their kind and size.
			out[p] = fmt.Sprintf("%s/%d/%s", info.Mode(), info.Size(), info.ModTime().Format(time.RFC3339Nano))
			return nil
		}
		out[p] = fileDigest(t, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyShipped copies a file of the shipped capture into dir.
func copyShipped(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	writeFile(t, p, readFile(t, filepath.Join(shippedDir, name)))
	return p
}

// besideReport copies the shipped report with its SQLite export and results
// into dir, the export's time set age after the report's, and returns the
// report's path.
func besideReport(t *testing.T, dir string, age time.Duration) string {
	t.Helper()
	report := copyShipped(t, dir, "pinned.nsys-rep")
	export := copyShipped(t, dir, "pinned.sqlite")
	copyShipped(t, dir, "pinned.results.json")
	at := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	if err := os.Chtimes(report, at, at); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(export, at.Add(age), at.Add(age)); err != nil {
		t.Fatal(err)
	}
	return report
}

// chmodReadOnly makes dir read-only for the rest of the test.
func chmodReadOnly(t *testing.T, dir string) {
	t.Helper()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
}

// sqliteEdit copies the shipped export (and its results JSON) and runs
// stmt on the copy. The edit stands for a run whose trace it is: nsys's
// count of the CUDA events it collected follows the records (recounted).
func sqliteEdit(stmt string) func(t *testing.T, dir string) []string {
	return pinnedEdit(stmt, true)
}

// sqliteRaw is sqliteEdit with nsys's count of the events it collected
// kept: records lost, deleted or added after the capture.
func sqliteRaw(stmt string) func(t *testing.T, dir string) []string {
	return pinnedEdit(stmt, false)
}

func pinnedEdit(stmt string, recounted bool) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		t.Helper()
		p := copyShipped(t, dir, "pinned.sqlite")
		copyShipped(t, dir, "pinned.results.json")
		db := openRW(t, p)
		defer db.Close()
		// The edit and VACUUM's rewrite keep their undo and temporary
		// pages in memory, not in files beside the copy (what the copy
		// holds once they are done is the same).
		mustExec(t, db, `PRAGMA journal_mode = MEMORY`, `PRAGMA temp_store = MEMORY`)
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		if recounted {
			recount(t, db)
		}
		if _, err := db.Exec(`VACUUM`); err != nil {
			t.Fatal(err)
		}
		return []string{p}
	}
}

// recount sets nsys's count of the CUDA events it collected in an edited
// export to the records it holds.
func recount(t *testing.T, db *sql.DB) {
	t.Helper()
	if err := nsysrecount.CUDAEvents(db); err != nil {
		t.Fatal(err)
	}
}

// deleteAsync deletes the cudaMemcpyAsync calls that match cond.
func deleteAsync(cond string) string {
	return `DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME
		WHERE nameId IN (SELECT id FROM StringIds WHERE value LIKE 'cudaMemcpyAsync%') AND (` + cond + `)`
}

// csvEdit copies the shipped CSV reports and results JSON and rewrites the
// cuda_api_trace report with edit.
func csvEdit(edit func(string) string) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		t.Helper()
		matches, err := filepath.Glob(filepath.Join(shippedDir, "*.csv"))
		if err != nil || len(matches) == 0 {
			t.Fatalf("no shipped CSV reports: %v", err)
		}
		for _, m := range matches {
			copyShipped(t, dir, filepath.Base(m))
		}
		copyShipped(t, dir, "pinned.results.json")
		p := filepath.Join(dir, "pinned_cuda_api_trace.csv")
		writeFile(t, p, []byte(edit(string(readFile(t, p)))))
		return []string{dir}
	}
}

// dropCSVColumn removes a column from a simple CSV (no quoted commas).
func dropCSVColumn(s, name string) string {
	lines := strings.Split(s, "\n")
	idx := -1
	for i, h := range strings.Split(lines[0], ",") {
		if h == name {
			idx = i
		}
	}
	if idx < 0 {
		return s
	}
	for i, l := range lines {
		if l == "" {
			continue
		}
		f := strings.Split(l, ",")
		if idx < len(f) {
			f = append(f[:idx], f[idx+1:]...)
		}
		lines[i] = strings.Join(f, ",")
	}
	return strings.Join(lines, "\n")
}

// editFirstAsync sets the Duration (ns) field (the second) of the first
// cudaMemcpyAsync row.
func editFirstAsync(s, value string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.Contains(l, ",cudaMemcpyAsync") {
			f := strings.SplitN(l, ",", 3)
			lines[i] = f[0] + "," + value + "," + f[2]
			if strings.Contains(value, " ") || strings.Contains(value, ",") {
				lines[i] = f[0] + `,"` + value + `",` + f[2]
			}
			break
		}
	}
	return strings.Join(lines, "\n")
}

// fakeNsys writes a stand-in nsys whose export copies the shipped SQLite
// export to --output.
func fakeNsys(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join(shippedDir, "pinned.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "nsys")
	script := "#!/bin/sh\nout=\nwhile [ $# -gt 0 ]; do\n\tcase \"$1\" in --output|-o) out=$2; shift;; esac\n\tshift\ndone\n" +
		"exec cp '" + src + "' \"$out\"\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// badInputsDoc is docs/bad-inputs.md made from the results.
func badInputsDoc(results []badResult) string {
	var b strings.Builder
	b.WriteString(`# Bad inputs and what nsyscheck answers

Each row is a test (` + "`TestBadInputs` in `cmd/nsyscheck/badinputs*_test.go`" + `): the input
is made from a copy of a shipped capture (most from ` + "`testdata/captures/h200-pinned`" + `)
in a fresh folder, damaged as the row says, ` + "`nsyscheck verify`" + ` (or the command the
row names) runs on it, and the test checks the exit status, that an error
names the file and the problem, that nothing panics or hangs, that no claim
the input cannot back comes out held, that no planted secret is printed,
that a signal stops the command within a second, and that the input's files
are unchanged (content hash and modification time). The answers below are
the tests' real output, trimmed; DIR is the test's folder. Regenerate with

    go test ./cmd/nsyscheck -run TestBadInputs -update

Exit status: 0 every prediction held (a control the input cannot check is
named beside its prediction), 1 some prediction died or was unavailable, 2
the input could not be read, 3 --fail-on-exposure found a capture exposing
its machine, 130 interrupted by SIGINT or SIGTERM.

`)
	// Each group's rows under one heading, where the group first comes,
	// in the cases' order.
	var groups []string
	rows := map[string][]badResult{}
	for _, r := range results {
		if _, ok := rows[r.c.group]; !ok {
			groups = append(groups, r.c.group)
		}
		rows[r.c.group] = append(rows[r.c.group], r)
	}
	for _, group := range groups {
		fmt.Fprintf(&b, "\n## %s\n\n| input | exit | answer |\n|---|---|---|\n", group)
		for _, r := range rows[group] {
			fmt.Fprintf(&b, "| %s | %d | %s |\n", mdCell(r.c.name), r.exit, mdCell(answer(r)))
		}
	}
	return b.String()
}

// answer sums up what nsyscheck said: the error, or the verdicts and why
// claims were unavailable.
func answer(r badResult) string {
	if r.exit == exitError || r.exit == exitSignal {
		return trimPaths(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(r.stderr), "nsyscheck: ")))
	}
	if r.c.cmd == "audit" {
		return trimPaths(auditAnswer(r.stdout + r.stderr))
	}
	if r.c.cmd != "" && r.c.cmd != "verify" {
		return trimPaths(strings.TrimSpace(r.stdout + r.stderr))
	}
	var parts []string
	var preds []string
	for _, id := range []string{"1", "2", "3", "4"} {
		preds = append(preds, id+" "+r.verdicts[id])
	}
	parts = append(parts, "predictions "+strings.Join(preds, ", "))
	if r.thread != "" {
		parts = append(parts, "thread analysed "+r.thread)
	}
	for _, w := range r.warnings {
		parts = append(parts, "warning "+trimPaths(w))
	}
	ids := make([]string, 0, len(r.reasons))
	for id := range r.reasons {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		parts = append(parts, id+" unavailable: "+trimPaths(r.reasons[id]))
	}
	for id, v := range r.verdicts {
		if v == "died" && strings.Contains(id, ".") {
			parts = append(parts, id+" died")
		}
	}
	return strings.Join(parts, "; ")
}

// rootFromHere is the root folder as outputs name a path outside the
// checkout: relative to the working folder (../../..), which depends on
// where the checkout lies.
var rootFromHere = sync.OnceValue(func() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(wd, "/")
	if err != nil || rel == "." {
		return ""
	}
	return rel + "/"
})

// testFolders matches the test's folders under the temporary folder, named
// whole or relative to the working folder (where the temporary folder holds
// the checkout, the relative name does not pass through the root).
var testFolders = sync.OnceValue(func() []*regexp.Regexp {
	abs := filepath.Clean(os.TempDir())
	var roots []string
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, abs); err == nil {
			roots = append(roots, rel)
		}
	}
	roots = append(roots, abs)
	var out []*regexp.Regexp
	for _, tail := range []string{`/TestBadInputs[^/]*/\d+`, `/TestBadInputs[^/ ]*`} {
		for _, r := range roots {
			out = append(out, regexp.MustCompile(regexp.QuoteMeta(r)+tail))
		}
	}
	return out
})

// trimPaths names the test's folder DIR, and a path outside the checkout
// by its whole name, whether a message gives it whole or relative to the
// working folder (../../tmp/...), as outputs name inputs: the same text in
// any checkout.
func trimPaths(s string) string {
	if r := rootFromHere(); r != "" {
		s = strings.ReplaceAll(s, r, "/")
	}
	for _, re := range testFolders() {
		s = re.ReplaceAllString(s, "DIR")
	}
	const max = 400
	if len(s) > max {
		s = s[:max] + " …"
	}
	return s
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	return s
}
