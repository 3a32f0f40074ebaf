package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// auditCases run the bad inputs of the other groups against `nsyscheck
// audit` (and `audit BEFORE AFTER`): every one is answered at once, no
// number comes from impossible or uncommitted data (an input error prints
// no audit at all), and no planted secret is printed.
func auditCases() []badCase {
	off := []string{"--nvidia-rule", "off"}
	withArgs := func(mk func(t *testing.T, dir string) []string, extra ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string { return append(mk(t, dir), append(extra, off...)...) }
	}
	var cases []badCase
	add := func(c badCase) {
		c.group, c.cmd = "audit", "audit"
		cases = append(cases, c)
	}
	add(badCase{name: "audit: a FIFO named pinned.sqlite",
		make: withArgs(func(t *testing.T, dir string) []string { return []string{mkfifo(t, dir, "pinned.sqlite")} }),
		exit: 2, want: []string{"pinned.sqlite", "a FIFO (named pipe), not a file"}})
	add(badCase{name: "audit: /dev/zero",
		make: withArgs(func(t *testing.T, dir string) []string { return []string{"/dev/zero"} }),
		exit: 2, want: []string{"/dev/zero", "a device, not a file"}})
	for _, r := range []string{"cuda_api_trace", "cuda_gpu_trace", "nvtx_pushpop_trace"} {
		name := "pinned_" + r + ".csv"
		add(badCase{name: "audit: a folder of CSV reports whose " + r + " is a FIFO",
			make: withArgs(func(t *testing.T, dir string) []string {
				auditCSV(t, dir)
				if err := os.Remove(filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
				mkfifo(t, dir, name)
				return []string{dir}
			}),
			exit: 2, want: []string{name, "a FIFO (named pipe), not a file"}})
		add(badCase{name: "audit: a 2 GB sparse " + r + ".csv (zero bytes, no newline)",
			make: withArgs(func(t *testing.T, dir string) []string {
				auditCSV(t, dir)
				sparse(t, filepath.Join(dir, name), nil, 2<<30)
				return []string{dir}
			}),
			exit: 2, want: []string{name, "line 1", "longer than 1024 KiB"}})
		add(badCase{name: "audit: a header line, then 2 GB of zero bytes in " + r + ".csv",
			make: withArgs(func(t *testing.T, dir string) []string {
				auditCSV(t, dir)
				p := filepath.Join(dir, name)
				sparse(t, p, []byte(strings.SplitAfter(string(readFile(t, p)), "\n")[0]), 2<<30)
				return []string{dir}
			}),
			exit: 2, want: []string{name, "line 2", "longer than 1024 KiB"}})
	}
	for _, r := range []string{"cuda_api_trace", "cuda_gpu_trace"} {
		name := "pinned_" + r + ".csv"
		add(badCase{name: "audit: a 10 MB " + r + ".csv with an unbalanced quote on its second line",
			make: withArgs(func(t *testing.T, dir string) []string {
				auditCSV(t, dir)
				unbalancedQuote(t, filepath.Join(dir, name))
				return []string{dir}
			}),
			exit: 2, want: []string{name, "line 2", "longer than 1024 KiB"}})
	}

	// Many NVTX ranges: memory follows the regions, not the ranges (peak
	// RSS measured with GNU time, median of 3; docs/performance.md).
	const ranges400k = `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < 399999) `
	const thread = `(SELECT globalTid FROM NVTX_EVENTS LIMIT 1)`
	add(badCase{name: "audit: 400k nested NVTX ranges before the copies (20 MB export; peak RSS in docs/performance.md)",
		make: withArgs(sqliteEdit(ranges400k + `INSERT INTO NVTX_EVENTS(start, "end", eventType, rangeId, text, globalTid, domainId)
			SELECT 1001 + i, 1999999 - i, 59, 1000000 + i, 'nest', ` + thread + `, 0 FROM n`)),
		exit: 1, want: []string{"copies break the lesson's rule", "h2d-pageable", "nest"}})
	add(badCase{name: "audit: 400k sibling NVTX ranges, one a step (peak RSS in docs/performance.md)",
		make: withArgs(sqliteEdit(`CREATE TEMP TABLE t AS SELECT globalTid AS g FROM NVTX_EVENTS LIMIT 1; DELETE FROM NVTX_EVENTS; ` +
			ranges400k + `INSERT INTO NVTX_EVENTS(start, "end", eventType, rangeId, text, globalTid, domainId)
			SELECT 348946328 + i*5600, 348946328 + i*5600 + 5599, 59, 1000000 + i, 'step', (SELECT g FROM t), 0 FROM n`)),
		exit: 1, want: []string{"copies break the lesson's rule", "median of 400000 instances"}})
	add(badCase{name: "audit: 100k NVTX steps each holding fwd, layer and op (peak RSS in docs/performance.md)",
		make: withArgs(sqliteEdit(`CREATE TEMP TABLE t AS SELECT globalTid AS g FROM NVTX_EVENTS LIMIT 1; DELETE FROM NVTX_EVENTS;
			WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < 99999), d(d) AS (VALUES (0), (1), (2), (3))
			INSERT INTO NVTX_EVENTS(start, "end", eventType, rangeId, text, globalTid, domainId)
			SELECT 348946328 + i*22400 + d, 348946328 + i*22400 + 22399 - d*1000, 59, 1000000 + 4*i + d,
				CASE d WHEN 0 THEN 'step' WHEN 1 THEN 'fwd' WHEN 2 THEN 'layer' ELSE 'op' END, (SELECT g FROM t), 0 FROM n, d`)),
		exit: 1, want: []string{"copies break the lesson's rule", "op: 0.019 ms now (median of 100000 instances)"}})

	// Impossible values: refused before any class is counted.
	add(badCase{name: "audit: SQLite cudaMemcpyAsync calls that end before they start",
		make: withArgs(sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = start - 5 * (end - start) WHERE nameId IN ` + asyncIDs)),
		exit: 2, want: []string{"pinned.sqlite", "cudaMemcpyAsync", "ends before it starts"}})
	add(badCase{name: "audit: SQLite memory copies that end before they start",
		make: withArgs(sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = start - 1000`)),
		exit: 2, want: []string{"pinned.sqlite", "memory copy", "ends before it starts"}})
	add(badCase{name: "audit: SQLite negative GPU copy times",
		make: withArgs(sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET start = -end, end = -start`)),
		exit: 2, want: []string{"pinned.sqlite", "memory copy", "negative start time"}})
	add(badCase{name: "audit: SQLite NVTX ranges that end before they start",
		make: withArgs(sqliteEdit(`UPDATE NVTX_EVENTS SET end = start - 1 WHERE end IS NOT NULL`)),
		exit: 2, want: []string{"pinned.sqlite", "NVTX range", "ends before it starts"}})
	add(badCase{name: "audit: SQLite host-to-device copies from device to pageable memory (srcKind and dstKind against copyKind)",
		make: withArgs(sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET srcKind = 2, dstKind = 0 WHERE copyKind = 1`)),
		exit: 2, want: []string{"pinned.sqlite", "the audit is unavailable", "host-device copies have no host memory kind it can tell"}})
	add(badCase{name: "audit: SQLite export without its ENUM_CUDA_MEM_KIND table (once every copy's host memory unknown, and \"nothing to pin\")",
		make: withArgs(sqliteEdit(`DROP TABLE ENUM_CUDA_MEM_KIND`)),
		exit: 2, want: []string{"pinned.sqlite", "the audit is unavailable: the trace names no memory kind of any copy (the export has no ENUM_CUDA_MEM_KIND table", "host-device copies were pinned is unknown, not pinned"},
		never: []string{"nothing to pin"}})
	add(badCase{name: "audit: SQLite copies of 1e308 bytes",
		make: withArgs(sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = 1e308`)),
		exit: 2, want: []string{"pinned.sqlite", "CUPTI_ACTIVITY_KIND_MEMCPY"}})
	add(badCase{name: "audit: cuda_gpu_trace with a negative copy duration",
		make: withArgs(gpuTraceEdit(func(f []string) { f[1] = "-" + f[1] })),
		exit: 2, want: []string{"pinned_cuda_gpu_trace.csv", "Duration (ns)"}})
	add(badCase{name: "audit: cuda_gpu_trace with a copy of 1e308 MB",
		make: withArgs(gpuTraceEdit(func(f []string) { f[12] = "1e308" })),
		exit: 2, want: []string{"pinned_cuda_gpu_trace.csv", "Bytes (MB)"}})
	add(badCase{name: "audit: cuda_gpu_trace with a copy of 1e308 ns",
		make: withArgs(gpuTraceEdit(func(f []string) { f[1] = "1e308" })),
		exit: 2, want: []string{"pinned_cuda_gpu_trace.csv", "Duration (ns)"}})
	add(badCase{name: "audit BEFORE AFTER: AFTER's copies end before they start",
		make: func(t *testing.T, dir string) []string {
			before := copyShipped(t, t.TempDir(), "pinned.sqlite")
			after := sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = start - 1000`)(t, dir)[0]
			return append([]string{before, after}, off...)
		},
		exit: 2, want: []string{"pinned.sqlite", "memory copy", "ends before it starts"}})
	add(badCase{name: "audit BEFORE AFTER: AFTER a FIFO",
		make: func(t *testing.T, dir string) []string {
			before := copyShipped(t, t.TempDir(), "pinned.sqlite")
			return append([]string{before, mkfifo(t, dir, "after.sqlite")}, off...)
		},
		exit: 2, want: []string{"after.sqlite", "a FIFO (named pipe), not a file"}})
	add(badCase{name: "audit --expect a FIFO",
		make: func(t *testing.T, dir string) []string {
			p := copyShipped(t, dir, "pinned.sqlite")
			return append([]string{p, "--expect", mkfifo(t, dir, "expect.json")}, off...)
		},
		exit: 2, want: []string{"expect.json", "a FIFO (named pipe), not a file"}})
	add(badCase{name: "audit --rates a run folder whose run.json is a FIFO (once read past: whether the run completed unknown, its rates taken)",
		make: func(t *testing.T, dir string) []string {
			p := copyShipped(t, dir, "pinned.sqlite")
			run := t.TempDir()
			copyShipped(t, run, "pinned.results.json")
			mkfifo(t, run, "run.json")
			return append([]string{p, "--rates", run}, off...)
		},
		exit: 2, want: []string{"run.json", "a FIFO (named pipe), not a file"}})
	add(badCase{name: "audit: the NVIDIA rule's CSV beside the capture is a FIFO",
		make: func(t *testing.T, dir string) []string {
			p := copyShipped(t, dir, "pinned.sqlite")
			mkfifo(t, dir, "pinned_cuda_memcpy_async.csv")
			return []string{p}
		},
		// Wide enough that the long temporary path is not wrapped
		// mid-name in the note the row looks for.
		env:  map[string]string{"PATH": "/nonexistent", "NSYS": "", "COLUMNS": "400"},
		exit: 1, want: []string{"pinned_cuda_memcpy_async.csv", "a FIFO (named pipe), not a file"}})
	add(badCase{name: "audit: a duration of NaN in the NVIDIA rule's CSV beside the capture",
		make: func(t *testing.T, dir string) []string {
			p := copyShipped(t, dir, "pinned.sqlite")
			rule := copyShipped(t, dir, "pinned_cuda_memcpy_async.csv")
			lines := strings.SplitN(string(readFile(t, rule)), "\n", 3)
			lines[1] = "NaN" + lines[1][strings.IndexByte(lines[1], ','):]
			writeFile(t, rule, []byte(strings.Join(lines, "\n")))
			return []string{p}
		},
		// strconv.ParseFloat reads NaN, which became a duration of
		// -9223372036854775808 ns, and the rule agreed. Wide enough that
		// the temporary path is not wrapped mid-name.
		env:  map[string]string{"PATH": "/nonexistent", "NSYS": "", "COLUMNS": "400"},
		exit: 1, want: []string{"pinned_cuda_memcpy_async.csv: data row 1", `column "Duration (ns)": "NaN" is not a time`},
		never: []string{"agrees"}})
	add(badCase{name: "audit: cuda_gpu_trace with a copy duration of BEL and a GitHub token (quoted in the error)",
		make: withArgs(gpuTraceEdit(func(f []string) { f[1] = "\a" + ruleToken })),
		// Quoted, the BEL is \a, whose a would glue itself to the token.
		exit: 2, want: []string{"pinned_cuda_gpu_trace.csv", "Duration (ns)", "ghp_…(40 chars)"}, never: []string{ruleToken}})

	// SQLite's own state: only committed data is counted.
	add(badCase{name: "audit: WAL mode, every cudaMemcpyAsync deleted in a commit still in pinned.sqlite-wal",
		make: withArgs(func(t *testing.T, dir string) []string {
			p := copyShipped(t, t.TempDir(), "pinned.sqlite")
			db := openRW(t, p)
			mustExec(t, db, `PRAGMA journal_mode=WAL`, `PRAGMA wal_autocheckpoint=0`,
				`DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN `+asyncIDs)
			copyTo(t, p, dir)
			copyTo(t, p+"-wal", dir)
			db.Close()
			return []string{filepath.Join(dir, "pinned.sqlite")}
		}),
		// The committed export has no cudaMemcpyAsync call: 22 copies join
		// no call, so their host time is unknown and the audit unavailable.
		exit: 2, want: []string{"pinned.sqlite", "the audit is unavailable: 22 of the 305 copies join no API call"}})
	add(badCase{name: "audit: a hot pinned.sqlite-journal left by a writer that crashed mid-transaction",
		make: withArgs(func(t *testing.T, dir string) []string {
			p := copyShipped(t, t.TempDir(), "pinned.sqlite")
			db := openRW(t, p)
			defer db.Close()
			uncommittedDelete(t, db, p)
			copyTo(t, p, dir)
			copyTo(t, p+"-journal", dir)
			return []string{filepath.Join(dir, "pinned.sqlite")}
		}),
		// The journal rolls the uncommitted delete back: the committed
		// calls are all there.
		exit: 1, want: []string{"secretly-synchronous: 11 copies", "cudaMemcpyAsync HtoD"}})
	add(badCase{name: "audit: a writer holding BEGIN EXCLUSIVE with uncommitted pages written",
		make: withArgs(func(t *testing.T, dir string) []string {
			p := copyShipped(t, dir, "pinned.sqlite")
			startWriter(t, p)
			return []string{p}
		}),
		exit: 2, want: []string{"pinned.sqlite", "holds a write lock"}})

	// Secrets in process names, command lines, NVTX text and thread names.
	for _, format := range []string{"text", "json", "markdown"} {
		masked := "ghp_…"
		if format == "markdown" {
			masked = `ghp\_…` // Markdown's escape: no emphasis
		}
		add(badCase{name: "audit --format " + format + ": passwords in command lines, tokens in NVTX text and a thread name",
			make:  withArgs(sqliteEdit(plantSecretsSQL), "--format", format),
			exit:  1,
			want:  []string{masked},
			never: plantedSecrets})
	}
	add(badCase{name: "audit BEFORE AFTER, then report of its JSON: secrets planted in both",
		make: func(t *testing.T, dir string) []string {
			before := sqliteEdit(plantSecretsSQL)(t, dir)[0]
			after := sqliteEdit(plantSecretsSQL)(t, t.TempDir())[0]
			return append([]string{before, after, "--format", "json"}, off...)
		},
		exit: 1, want: []string{`"verdict"`}, never: plantedSecrets,
		check: func(t *testing.T, dir string) {
			before := filepath.Join(dir, "pinned.sqlite")
			_, out, _ := runMain(t, append([]string{"audit", before, before, "--format", "json"}, off...))
			js := filepath.Join(t.TempDir(), "audit.json")
			writeFile(t, js, []byte(out))
			rep := filepath.Join(t.TempDir(), "rep")
			if code, _, stderr := runMain(t, []string{"report", js, "-o", rep}); code != 0 {
				t.Fatalf("report of the audit: %d %s", code, stderr)
			}
			assertNoSecretIn(t, rep)
		}})
	return cases
}

// auditCSV copies the shipped CSV reports into dir (the audit reads the
// trace reports).
func auditCSV(t *testing.T, dir string) {
	t.Helper()
	csvEdit(func(s string) string { return s })(t, dir)
}

// gpuTraceEdit copies the shipped CSV reports and edits the fields of the
// first copy row of cuda_gpu_trace.
func gpuTraceEdit(edit func(fields []string)) func(t *testing.T, dir string) []string {
	return gpuTraceRowEdit("[CUDA memcpy", edit)
}

// gpuTraceRowEdit is gpuTraceEdit for the first row that holds match.
func gpuTraceRowEdit(match string, edit func(fields []string)) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		t.Helper()
		auditCSV(t, dir)
		p := filepath.Join(dir, "pinned_cuda_gpu_trace.csv")
		lines := strings.Split(string(readFile(t, p)), "\n")
		for i, l := range lines {
			if strings.Contains(l, match) {
				f := strings.Split(l, ",")
				edit(f)
				lines[i] = strings.Join(f, ",")
				break
			}
		}
		writeFile(t, p, []byte(strings.Join(lines, "\n")))
		return []string{dir}
	}
}

// assertNoSecretIn fails when a file under dir holds a planted secret.
func assertNoSecretIn(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatalf("%s is empty", dir)
	}
	for _, e := range entries {
		data := readFile(t, filepath.Join(dir, e.Name()))
		for _, s := range plantedSecrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds %q", e.Name(), s)
			}
		}
	}
}

// auditLine picks the lines of an audit that sum it up: what was read, the
// findings, NVIDIA's rule, the verdict, what the capture exposes.
var auditLine = regexp.MustCompile(`^(held|died|unavailable): |^unresolved: |^\d+ CUDA API calls|^(secretly-synchronous|cannot-overlap): |^NVIDIA's |^verdict|"verdict"|^- \*\*`)

// auditAnswer sums up an audit's output for docs/bad-inputs.md.
func auditAnswer(out string) string {
	// What the capture exposes first: rows that plant secrets show how
	// they are masked.
	var parts, exposed []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.Contains(l, "looks like a credential"):
			exposed = append(exposed, l)
		case auditLine.MatchString(l):
			parts = append(parts, l)
		}
	}
	parts = append(exposed, parts...)
	if len(parts) == 0 {
		return strings.TrimSpace(out)
	}
	return strings.Join(parts, "; ")
}
