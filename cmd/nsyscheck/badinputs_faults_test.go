package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// asyncIDs selects the StringIds of cudaMemcpyAsync.
const asyncIDs = `(SELECT id FROM StringIds WHERE value LIKE 'cudaMemcpyAsync%')`

// faultCases are inputs that are impossible, odd files, uncommitted SQLite
// state: nothing may come out held from them, and every one is answered at
// once.
func faultCases() []badCase {
	return append([]badCase{
		// Impossible values: refused the same way whatever the format.
		{group: "impossible values", name: "SQLite: cudaMemcpyAsync calls that end before they start",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = start - 5 * (end - start) WHERE nameId IN ` + asyncIDs),
			exit: 2, want: []string{"pinned.sqlite", "cudaMemcpyAsync", "ends before it starts"},
			notHeld: []string{"2", "4"}},
		{group: "impossible values", name: "SQLite: memory copies that end before they start",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = start - 1000`),
			exit: 2, want: []string{"pinned.sqlite", "memory copy", "ends before it starts"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: "impossible values", name: "SQLite: negative kernel times",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -end, end = -start`),
			exit: 2, want: []string{"pinned.sqlite", "kernel", "negative start time"},
			notHeld: []string{"3"}},
		{group: "impossible values", name: "SQLite: a call lasting 28 years",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = start + 900000000000000000 WHERE nameId IN ` + asyncIDs),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_RUNTIME", "after the trace stopped"},
			notHeld: []string{"4"}},
		{group: "impossible values", name: "SQLite: a blocking cudaMemcpy whose copy ends 0.5 ms after the call returned",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = end + 500000 WHERE correlationId = 471`),
			exit: 2, want: []string{"pinned.sqlite", "correlation id 471", "after the blocking cudaMemcpy call that issued it returned"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: "impossible values", name: "SQLite: every synchronisation record twice",
			make: sqliteEdit(`INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SELECT * FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "a second synchronisation record"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: "impossible values", name: "SQLite: copies on device 5, whose context TARGET_INFO_CUDA_CONTEXT_INFO does not list (once a warning alone)",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET deviceId = 5`),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_MEMCPY: 305 rows name context 1 on device 5 of process 22", "which TARGET_INFO_CUDA_CONTEXT_INFO does not list"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: "impossible values", name: "SQLite: a damaged page in a table nsyscheck does not read (fails integrity_check)",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				copyShipped(t, dir, "pinned.results.json")
				damagePage(t, p)
				return []string{p}
			},
			exit: 2, want: []string{"pinned.sqlite", "fails SQLite's integrity check"}},
		{group: "impossible values", name: "CSV: the Duration (ns) column twice",
			make: csvEdit(func(s string) string {
				lines := strings.Split(s, "\n")
				for i, l := range lines {
					if l == "" {
						continue
					}
					if i == 0 {
						lines[i] = l + ",Duration (ns)"
					} else {
						lines[i] = l + ",1"
					}
				}
				return strings.Join(lines, "\n")
			}),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", `"Duration (ns)"`, "has the column twice"},
			notHeld: []string{"2", "4"}},
		{group: "impossible values", name: "CSV: a Duration header with no unit",
			make: csvEdit(func(s string) string {
				return strings.Replace(s, "Duration (ns)", "Duration", 1)
			}),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", `column "Duration"`, "has no unit"},
			notHeld: []string{"2", "4"}},
		{group: "impossible values", name: "CSV: nvtx_pushpop_trace's time headers edited (ns) to (us), the values left in ns (the other reports in ns)",
			make: nvtxUnitEdit("us"),
			exit: 2, want: []string{"pinned_nvtx_pushpop_trace.csv", "header Start (us)", "units: the header says us, pinned_cuda_api_trace.csv says ns",
				"more than 10x past the traced records' end"}, notHeld: []string{"1", "2", "3", "4"}},
		{group: "impossible values", name: "audit: CSV nvtx_pushpop_trace's time headers edited (ns) to (ms)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				return append(nvtxUnitEdit("ms")(t, dir), "--nvidia-rule", "off")
			},
			exit: 2, want: []string{"pinned_nvtx_pushpop_trace.csv", "units: the header says ms, pinned_cuda_api_trace.csv says ns"}},
		{group: "impossible values", name: "results JSON: a key twice in one object",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.results.json")
				s := string(readFile(t, p))
				writeFile(t, p, []byte(strings.Replace(s, `"ms": 0.086758,`, `"ms": 0.086758, "ms": 900.0,`, 1)))
				return []string{p}
			},
			exit: 2, want: []string{"pinned.results.json", "copies[0].ms", "appears twice"},
			notHeld: []string{"1", "2"}},
		{group: "impossible values", name: "results JSON: a copy of 1e308 ms",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.results.json")
				s := string(readFile(t, p))
				writeFile(t, p, []byte(strings.Replace(s, `"ms": 0.086758, "gbps": 12.0862`, `"ms": 1e308, "gbps": 0`, 1)))
				return []string{p}
			},
			exit: 2, want: []string{"pinned.results.json", "1e+308 ms is impossible"},
			notHeld: []string{"1", "2"}},
		{group: "impossible values", name: "transcript: a row of 1e308 ms",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.transcript.txt")
				s := string(readFile(t, p))
				writeFile(t, p, []byte(strings.Replace(s, "0.087 ms    12.1 GB/s", "1e308 ms    12.1 GB/s", 1)))
				return []string{p}
			},
			exit: 2, want: []string{"pinned.transcript.txt", "1e+308 ms is impossible"},
			notHeld: []string{"1", "2"}},

		// FIFOs, devices and huge files: refused or bounded, at once.
		{group: "FIFOs, devices and huge files", name: "a FIFO named pinned.sqlite",
			make: func(t *testing.T, dir string) []string {
				return []string{mkfifo(t, dir, "pinned.sqlite")}
			},
			exit: 2, want: []string{"pinned.sqlite", "a FIFO (named pipe), not a file"}},
		{group: "FIFOs, devices and huge files", name: "a folder whose pinned.sqlite is a FIFO",
			make: func(t *testing.T, dir string) []string {
				mkfifo(t, dir, "pinned.sqlite")
				return []string{dir}
			},
			exit: 2, want: []string{"pinned.sqlite", "a FIFO (named pipe), not a file"}},
		{group: "FIFOs, devices and huge files", name: "a FIFO named pinned.transcript.txt",
			make: func(t *testing.T, dir string) []string {
				return []string{mkfifo(t, dir, "pinned.transcript.txt")}
			},
			exit: 2, want: []string{"pinned.transcript.txt", "a FIFO (named pipe), not a file"}},
		{group: "FIFOs, devices and huge files", name: "a FIFO named pinned.results.json beside the SQLite export",
			make: func(t *testing.T, dir string) []string {
				copyShipped(t, dir, "pinned.sqlite")
				mkfifo(t, dir, "pinned.results.json")
				return []string{dir}
			},
			// A sibling is a hint: the FIFO is set aside unread and the
			// export still gets its verdicts.
			exit: 0, want: []string{"pinned.results.json", "was set aside", "a FIFO (named pipe), not a file"}},
		{group: "FIFOs, devices and huge files", name: "a folder of CSV reports whose cuda_api_trace is a FIFO",
			make: func(t *testing.T, dir string) []string {
				csvEdit(func(s string) string { return s })(t, dir)
				p := filepath.Join(dir, "pinned_cuda_api_trace.csv")
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				mkfifo(t, dir, "pinned_cuda_api_trace.csv")
				return []string{dir}
			},
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "a FIFO (named pipe), not a file"}},
		{group: "FIFOs, devices and huge files", name: "a FIFO as the --expect file",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				return []string{p, "--expect", mkfifo(t, dir, "expect.json")}
			},
			exit: 2, want: []string{"expect.json", "a FIFO (named pipe), not a file"}},
		{group: "FIFOs, devices and huge files", name: "scrub given a FIFO named pinned.sqlite",
			cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				return []string{mkfifo(t, dir, "pinned.sqlite"), "-o", filepath.Join(t.TempDir(), "shared.sqlite")}
			},
			exit: 2, want: []string{"pinned.sqlite", "a FIFO (named pipe), not a file"}},
		{group: "FIFOs, devices and huge files", name: "scrub -o a FIFO, with --force (once the FIFO was replaced by the copy, as /dev/full would be)",
			cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				return []string{p, "-o", mkfifo(t, dir, "shared.sqlite"), "--force"}
			},
			exit: 2, want: []string{"shared.sqlite", "the output is a FIFO (named pipe), not a file", "which --force does not replace"},
			check: func(t *testing.T, dir string) {
				if fi, err := os.Lstat(filepath.Join(dir, "shared.sqlite")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
					t.Errorf("the FIFO OUT was replaced: %v %v", fi, err)
				}
			}},
		{group: "FIFOs, devices and huge files", name: "report -o a folder whose report.html is a FIFO, with --force (once the FIFO was replaced by the page)",
			cmd: "report",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				out := filepath.Join(t.TempDir(), "out")
				if err := os.Mkdir(out, 0o755); err != nil {
					t.Fatal(err)
				}
				mkfifo(t, out, "report.html")
				return []string{p, "-o", out, "--force"}
			},
			exit: 2, want: []string{"report.html is a FIFO (named pipe), not a file, which --force does not replace"}},
		{group: "FIFOs, devices and huge files", name: "report given a folder whose pinned.sqlite is a FIFO",
			cmd: "report",
			make: func(t *testing.T, dir string) []string {
				mkfifo(t, dir, "pinned.sqlite")
				return []string{dir, "-o", filepath.Join(t.TempDir(), "out")}
			},
			exit: 2, want: []string{"pinned.sqlite", "a FIFO (named pipe), not a file"}},
		{group: "FIFOs, devices and huge files", name: "scrub given /dev/zero",
			cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				return []string{"/dev/zero", "-o", filepath.Join(t.TempDir(), "shared.sqlite")}
			},
			exit: 2, want: []string{"/dev/zero", "a device, not a file"}},
		{group: "FIFOs, devices and huge files", name: "pinned.transcript.txt a link to /dev/urandom",
			make: func(t *testing.T, dir string) []string {
				p := filepath.Join(dir, "pinned.transcript.txt")
				if err := os.Symlink("/dev/urandom", p); err != nil {
					t.Fatal(err)
				}
				return []string{p}
			},
			exit: 2, want: []string{"pinned.transcript.txt", "a device, not a file"}},
		{group: "FIFOs, devices and huge files", name: "/dev/zero given as the capture",
			make: func(t *testing.T, dir string) []string {
				return []string{"/dev/zero"}
			},
			exit: 2, want: []string{"/dev/zero", "a device, not a file"}},
		{group: "FIFOs, devices and huge files", name: "a 2 GB sparse cuda_api_trace.csv (zero bytes, no newline)",
			make: func(t *testing.T, dir string) []string {
				csvEdit(func(s string) string { return s })(t, dir)
				sparse(t, filepath.Join(dir, "pinned_cuda_api_trace.csv"), nil, 2<<30)
				return []string{dir}
			},
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "line 1", "longer than 1024 KiB"},
			notHeld: []string{"2", "4"}},
		{group: "FIFOs, devices and huge files", name: "a header line, then 2 GB of zero bytes in cuda_api_trace.csv",
			make: func(t *testing.T, dir string) []string {
				csvEdit(func(s string) string { return s })(t, dir)
				p := filepath.Join(dir, "pinned_cuda_api_trace.csv")
				header := strings.SplitAfter(string(readFile(t, p)), "\n")[0]
				sparse(t, p, []byte(header), 2<<30)
				return []string{dir}
			},
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "line 2", "longer than 1024 KiB"},
			notHeld: []string{"2", "4"}},
		{group: "FIFOs, devices and huge files", name: "a 2 GB sparse nvtx_sum.csv after its header",
			make: func(t *testing.T, dir string) []string {
				csvEdit(func(s string) string { return s })(t, dir)
				p := filepath.Join(dir, "pinned_nvtx_sum.csv")
				header := strings.SplitAfter(string(readFile(t, p)), "\n")[0]
				sparse(t, p, []byte(header), 2<<30)
				return []string{dir}
			},
			exit: 2, want: []string{"pinned_nvtx_sum.csv", "longer than 1024 KiB"}},
		{group: "FIFOs, devices and huge files", name: "a 40 MB nvtx_sum.csv of well-formed rows",
			make: func(t *testing.T, dir string) []string {
				csvEdit(func(s string) string { return s })(t, dir)
				p := filepath.Join(dir, "pinned_nvtx_sum.csv")
				lines := strings.SplitAfter(string(readFile(t, p)), "\n")
				var b bytes.Buffer
				b.WriteString(lines[0])
				for b.Len() < 40<<20 {
					b.WriteString(lines[1])
				}
				writeFile(t, p, b.Bytes())
				return []string{dir}
			},
			exit: 2, want: []string{"pinned_nvtx_sum.csv", "more than 32 MiB"}},
		{group: "FIFOs, devices and huge files", name: "a 10 MB cuda_api_trace.csv with an unbalanced quote on its second line",
			make: func(t *testing.T, dir string) []string {
				csvEdit(func(s string) string { return s })(t, dir)
				unbalancedQuote(t, filepath.Join(dir, "pinned_cuda_api_trace.csv"))
				return []string{dir}
			},
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "line 2", "longer than 1024 KiB"},
			notHeld: []string{"2", "4"}},
		{group: "FIFOs, devices and huge files", name: "a 2 GB sparse transcript after its device line",
			make: func(t *testing.T, dir string) []string {
				p := filepath.Join(dir, "pinned.transcript.txt")
				sparse(t, p, []byte("device: NVIDIA H200 (sm_90, 132 SMs), driver 13000, runtime 13000\n"), 2<<30)
				return []string{p}
			},
			exit: 2, want: []string{"pinned.transcript.txt", "longer than 4 MiB"}},
		{group: "FIFOs, devices and huge files", name: "a 65 MB transcript of 4 KB lines",
			make: func(t *testing.T, dir string) []string {
				p := filepath.Join(dir, "pinned.transcript.txt")
				line := "WARNING: " + strings.Repeat("x", 4086) + "\n"
				writeFile(t, p, append([]byte("device: NVIDIA H200 (sm_90, 132 SMs), driver 13000, runtime 13000\n"), bytes.Repeat([]byte(line), 65<<20/len(line)+1)...))
				return []string{p}
			},
			exit: 2, want: []string{"pinned.transcript.txt", "more than 64 MiB"}},

		// SQLite's own state: only committed data is read.
		{group: "SQLite state", name: "WAL mode, every cudaMemcpyAsync deleted in a commit still in pinned.sqlite-wal",
			make: func(t *testing.T, dir string) []string {
				scratch := t.TempDir()
				p := copyShipped(t, scratch, "pinned.sqlite")
				db := openRW(t, p)
				mustExec(t, db, `PRAGMA journal_mode=WAL`, `PRAGMA wal_autocheckpoint=0`,
					`DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN `+asyncIDs)
				// The writer is gone but its log stays: copy both while it is open.
				copyTo(t, p, dir)
				copyTo(t, p+"-wal", dir)
				db.Close()
				copyShipped(t, dir, "pinned.results.json")
				return []string{filepath.Join(dir, "pinned.sqlite")}
			},
			exit: 2, want: []string{"pinned.sqlite: table DIAGNOSTIC_EVENT: nsys says it collected 809 CUDA events, and the export holds 787 records of them", "22 fewer than nsys collected"}},
		{group: "SQLite state", name: "a hot pinned.sqlite-journal left by a writer that crashed mid-transaction",
			make: func(t *testing.T, dir string) []string {
				scratch := t.TempDir()
				p := copyShipped(t, scratch, "pinned.sqlite")
				db := openRW(t, p)
				defer db.Close()
				uncommittedDelete(t, db, p)
				// A crash now: the file holds pages nobody committed, the journal the old ones.
				copyTo(t, p, dir)
				copyTo(t, p+"-journal", dir)
				copyShipped(t, dir, "pinned.results.json")
				return []string{filepath.Join(dir, "pinned.sqlite")}
			},
			exit: 0, want: []string{"prediction 4 held"}},
		{group: "SQLite state", name: "a writer holding BEGIN EXCLUSIVE with uncommitted pages written",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				startWriter(t, p)
				return []string{p}
			},
			exit: 2, want: []string{"pinned.sqlite", "holds a write lock"},
			notHeld: []string{"4"}},

		// The export cache of a .nsys-rep is keyed by the report's content.
		{group: "export cache", name: ".nsys-rep replaced by another dated older (cp -p) beside the first one's export",
			make: func(t *testing.T, dir string) []string {
				rep := copyShipped(t, dir, "pinned.nsys-rep")
				copyShipped(t, dir, "pinned.results.json")
				old := time.Now().Add(-time.Hour)
				if err := os.Chtimes(rep, old, old); err != nil {
					t.Fatal(err)
				}
				if code, _, stderr := runMain(t, []string{"verify", "--nsys", fakeNsys(t), rep}); code != 0 {
					t.Fatalf("first export: %d %s", code, stderr)
				}
				// Another report (other bytes), older than the export, whose
				// export has no cudaMemcpyAsync call.
				writeFile(t, rep, append(readFile(t, rep), 0))
				older := old.Add(-time.Hour)
				if err := os.Chtimes(rep, older, older); err != nil {
					t.Fatal(err)
				}
				edited := sqliteEdit(deleteAsync(`1`))(t, t.TempDir())[0]
				return []string{"--nsys", fakeNsysOf(t, edited), rep}
			},
			mayChange: []string{"pinned.nsyscheck.sqlite"},
			exit:      1, want: []string{"holds no host-to-device cudaMemcpyAsync calls"},
			notHeld: []string{"4", "4.calltime"}},

		// Secrets in the names a capture carries are never shown.
		{group: "secrets in names", name: "a password in another process's command line and in the program's, tokens in NVTX text and a thread name",
			make: sqliteEdit(plantSecretsSQL),
			exit: 0, want: []string{"--password=…(", "looks like a credential"},
			never: plantedSecrets},

		// Report output.
		{group: "report output", name: "report --force where DIR/report.html is a link to the input",
			cmd: "report",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				out := t.TempDir()
				if err := os.Symlink(p, filepath.Join(out, "report.html")); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					if st, err := os.Lstat(filepath.Join(out, "report.html")); err != nil || !st.Mode().IsRegular() {
						t.Errorf("report.html is not a regular file: %v", err)
					}
				})
				return []string{p, "-o", out, "--force"}
			},
			exit: 0, want: []string{"/report.html ("}},
		{group: "report output", name: "report into a folder where a killed run left its temporary folder",
			cmd: "report",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				out := t.TempDir()
				gone := exec.Command("true")
				if err := gone.Run(); err != nil {
					t.Skip(err)
				}
				left := filepath.Join(out, ".nsyscheck-report-"+strconv.Itoa(gone.Process.Pid)+"-1")
				if err := os.MkdirAll(left, 0o700); err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(left, "report.html"), nil)
				t.Cleanup(func() {
					if _, err := os.Stat(left); !os.IsNotExist(err) {
						t.Errorf("the leftover %s is still there", left)
					}
				})
				return []string{p, "-o", out}
			},
			exit: 0, want: []string{"/report.html ("}},
		{group: "report output", name: "report -o a path whose parent is a file",
			cmd: "report",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				f := filepath.Join(t.TempDir(), "afile")
				writeFile(t, f, nil)
				return []string{p, "-o", filepath.Join(f, "out")}
			},
			exit: 2, want: []string{"afile", "not a directory"}},
	}, interruptCases()...)
}

// plantSecretsSQL plants plantedSecrets where names live in an export.
var plantSecretsSQL = `INSERT INTO PROCESSES (globalPid, pid, name) VALUES (4343 << 24, 4343, 'backup.sh --user bob --password=` + plantedSecrets[0] + `');
	UPDATE PROCESSES SET name = './pinned --json out.json --password ` + plantedSecrets[1] + `' WHERE pid = 22;
	INSERT INTO META_DATA_CAPTURE (name, value) VALUES ('PROCESS_0:COMMAND', './pinned --json out.json --password ` + plantedSecrets[1] + `');
	INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid)
		SELECT start, end, eventType, 'sync ` + plantedSecrets[2] + `', globalTid FROM NVTX_EVENTS LIMIT 1;
	UPDATE StringIds SET value = value || ' ` + plantedSecrets[3] + `'
		WHERE id IN (SELECT nameId FROM ThreadNames WHERE (globalTid >> 24) & 16777215 = 22)`

// fakeNsysOf writes a stand-in nsys whose export copies src to --output.
func fakeNsysOf(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "nsys")
	script := "#!/bin/sh\nout=\nwhile [ $# -gt 0 ]; do\n\tcase \"$1\" in --output|-o) out=$2; shift;; esac\n\tshift\ndone\n" +
		"exec cp '" + src + "' \"$out\"\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// mkfifo makes a FIFO named name in dir.
func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	return p
}

// sparse writes head to p and extends it with zero bytes to size (a sparse
// file: it takes no disk space).
func sparse(t *testing.T, p string, head []byte, size int64) {
	t.Helper()
	writeFile(t, p, head)
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
}

// damagePage overwrites the page type of the root page of a table
// nsyscheck does not read, so that only an integrity check finds it.
func damagePage(t *testing.T, p string) {
	t.Helper()
	db := openRW(t, p)
	var root int64
	var pageSize int64
	if err := db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name NOT IN
		('StringIds', 'CUPTI_ACTIVITY_KIND_RUNTIME', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_KERNEL',
		 'NVTX_EVENTS', 'META_DATA_EXPORT', 'TARGET_INFO_GPU', 'TARGET_INFO_CUDA_DEVICE', 'ThreadNames',
		 'ENUM_CUDA_MEMCPY_OPER', 'ENUM_CUDA_MEM_KIND', 'ENUM_NSYS_EVENT_TYPE', 'TARGET_INFO_SYSTEM_ENV')
		AND name NOT LIKE 'sqlite_%' AND rootpage > 1 ORDER BY rootpage DESC LIMIT 1`).Scan(&root); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	db.Close()
	data := readFile(t, p)
	data[(root-1)*pageSize] = 0x7f // no such b-tree page type
	writeFile(t, p, data)
	if binary.BigEndian.Uint16(data[16:18]) == 0 {
		t.Fatal("not an SQLite file")
	}
}

func openRW(t *testing.T, p string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", p)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	// A test's copy needs no durability: no sync to disk after each
	// statement (the file written is the same).
	if _, err := db.Exec("PRAGMA synchronous = OFF"); err != nil {
		t.Fatal(err)
	}
	return db
}

func mustExec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// uncommittedStmts delete every cudaMemcpyAsync call in a transaction left
// open, with a cache so small that the changed pages are written to the
// file before any commit.
var uncommittedStmts = []string{`PRAGMA cache_size=1`, `PRAGMA cache_spill=1`, `BEGIN EXCLUSIVE`,
	`DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN ` + asyncIDs,
	`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = end + 1`}

// uncommittedDelete runs uncommittedStmts on db and checks that the file
// changed and a journal is beside it.
func uncommittedDelete(t *testing.T, db *sql.DB, p string) {
	t.Helper()
	before := readFile(t, p)
	mustExec(t, db, uncommittedStmts...)
	if bytes.Equal(before, readFile(t, p)) {
		t.Fatal("the uncommitted pages stayed in memory; the case needs them in the file")
	}
	if _, err := os.Stat(p + "-journal"); err != nil {
		t.Fatal("no journal beside the file:", err)
	}
}

// sqliteWriter is the sqlite-writer command: it runs uncommittedStmts on
// the file p, says "ready" and holds the transaction until stdin closes.
func sqliteWriter(p string) int {
	db, err := sql.Open("sqlite3", p)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	db.SetMaxOpenConns(1)
	for _, s := range uncommittedStmts {
		if _, err := db.Exec(s); err != nil {
			fmt.Fprintln(os.Stderr, s, err)
			return 1
		}
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// startWriter starts sqlite-writer on p and returns once its transaction
// is open; the writer ends with the test.
func startWriter(t *testing.T, p string) {
	t.Helper()
	cmd := exec.Command("sqlite-writer", p)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("sqlite-writer: %q %v", line, err)
	}
}

// copyTo copies the file p into dir under its own name.
func copyTo(t *testing.T, p, dir string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, filepath.Base(p)), readFile(t, p))
}

// unbalancedQuote rewrites the CSV report at p as a 10 MB file whose
// second line opens a quote that never closes: every later line is inside
// one record.
func unbalancedQuote(t *testing.T, p string) {
	t.Helper()
	lines := strings.SplitAfter(string(readFile(t, p)), "\n")
	var b bytes.Buffer
	b.WriteString(lines[0])
	b.WriteString(`"` + lines[1])
	for b.Len() < 10<<20 {
		for _, l := range lines[2:] {
			b.WriteString(l)
		}
	}
	writeFile(t, p, b.Bytes())
}

// nvtxUnitEdit copies the shipped CSV reports with nvtx_pushpop_trace's
// time headers turned from (ns) to (unit), its values left as they are.
func nvtxUnitEdit(unit string) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		t.Helper()
		args := csvEdit(func(s string) string { return s })(t, dir)
		p := filepath.Join(dir, "pinned_nvtx_pushpop_trace.csv")
		s := string(readFile(t, p))
		head, rest, _ := strings.Cut(s, "\n")
		writeFile(t, p, []byte(strings.ReplaceAll(head, "(ns)", "("+unit+")")+"\n"+rest))
		return args
	}
}
