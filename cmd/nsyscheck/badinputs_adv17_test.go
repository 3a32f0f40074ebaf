package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
)

// shareCases: audits read back whose shares no audit makes, and other
// inputs once answered without a word of what went wrong.
func shareCases() []badCase {
	const jsons = "JSON nested without end, and audits edited"
	region := func(results []map[string]any, i int) map[string]any {
		return results[0]["regions"].([]any)[i].(map[string]any)
	}
	// classShare sets the share of each class (and top offender) whose share
	// is above from to v.
	classShare := func(from, v float64) func(results []map[string]any, check map[string]any) {
		return func(results []map[string]any, check map[string]any) {
			for _, k := range []string{"classes", "topOffenders"} {
				for _, c := range results[0][k].([]any) {
					if c := c.(map[string]any); c["hostShare"].(float64) > from {
						c["hostShare"] = v
					}
				}
			}
		}
	}
	// danglingOut gives the shipped export and, as the command's -o, a link
	// in dir to a path that does not exist, under it the folders below.
	danglingOut := func(below ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			p := copyShipped(t, dir, "pinned.sqlite")
			out := filepath.Join(t.TempDir(), "out")
			if err := os.Symlink(filepath.Join(filepath.Dir(out), "gone"), out); err != nil {
				t.Fatal(err)
			}
			return []string{p, "-o", filepath.Join(append([]string{out}, below...)...)}
		}
	}
	return []badCase{
		{group: "report output", name: "report -o a link to a folder that does not exist (once \"cannot move the report into out: not a directory\")", cmd: "report",
			make: danglingOut(), exit: 2, want: []string{"out is a link to", "gone, which does not exist: create that folder first, remove the link, or give another folder for the reports"}},
		{group: "report output", name: "report -o a folder under a link to nothing (once \"cannot create out: file exists\")", cmd: "report",
			make: danglingOut("sub"), exit: 2, want: []string{"out is a link to", "gone, which does not exist: create that folder first"}},
		{group: "report output", name: "scrub -o a link to nothing (once \"the output file already exists\")", cmd: "scrub",
			make: danglingOut(), exit: 2, want: []string{"out: the output is a link to", "gone, which does not exist; scrub neither writes through a link nor replaces one, even with --force", "remove the link, or choose another name"}},
		{group: "names that hold secrets or terminal escapes", name: `scrub: a table whose DEFAULT clause holds "GITHUB_TOKEN=ghp_..." (once nothing written, blaming the capture's nsys version)`,
			cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				p := sqliteEdit(`CREATE TABLE NOTES (id INTEGER, cmd TEXT DEFAULT 'export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789')`)(t, dir)[0]
				return []string{p, "-o", filepath.Join(dir, "shared.sqlite")}
			},
			mayWrite: true, exit: 0, want: []string{"removed or redacted 1 finding of", `secret GITHUB_TOKEN=ghp_…(40 chars) in the schema: table "NOTES" (the SQL that made it)`}, // the token alone, not its closing quote and parenthesis
			never: []string{"abcdefghijklmnopqrstuvwxyz0123456789", "survived scrubbing"},
			check: func(t *testing.T, dir string) {
				if strings.Contains(string(readFile(t, filepath.Join(dir, "shared.sqlite"))), "abcdefghijklmnopqrstuvwxyz0123456789") {
					t.Error("the scrubbed copy holds the token")
				}
			}},
		{group: "run folders", name: "verify of the shipped run folder with its run.json cut short (once read as none: the run's link, and any trace-lost or shared-GPU warning, dropped beside verdicts that held)",
			make: func(t *testing.T, dir string) []string {
				const run = "../../testdata/captures/h200-run/"
				for _, name := range []string{"pinned.sqlite", "pinned.results.json", "pinned.transcript.txt"} {
					writeFile(t, filepath.Join(dir, name), readFile(t, run+name))
				}
				info := readFile(t, run+"run.json")
				writeFile(t, filepath.Join(dir, "run.json"), info[:len(info)/3])
				return []string{dir}
			},
			exit: 2, want: []string{"run.json: not a run's record (is it cut short?), so the run is not known to have completed, nor on which GPU", "run it again", "once copied out"}},
		{group: "text saved as UTF-16", name: "the export with NVIDIA's rule's CSV beside it saved as UTF-16LE (once its columns listed as garbage, and its scan failed \"at row 1\")",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				rule := "pinned_cuda_memcpy_async.csv"
				writeFile(t, filepath.Join(dir, rule), utf16Bytes(string(readFile(t, filepath.Join(shippedDir, rule))), false, true))
				return []string{p}
			},
			exit: 0, want: []string{"pinned_cuda_memcpy_async.csv: the file is UTF-16LE text (with a byte-order mark), not UTF-8",
				"nsys stats --report cuda_memcpy_async --format csv", "could not scan", "iconv -f UTF-16LE -t UTF-8"},
			never: []string{`\x00`, "row 1"}},
		{group: "NVTX ranges", name: "audit: a library's NVTX range \"step\" in a domain of its own, at each of the program's steps (once 134 steps of median 1.438 ms, their copies 0.0% of them)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				p := filepath.Join(dir, "train.sqlite")
				writeFile(t, p, readFile(t, "../../testdata/captures/train-pageable/train-pageable.sqlite"))
				db := openRW(t, p)
				mustExec(t, db, `INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (0, 0, 75, 'lib', (SELECT globalTid FROM NVTX_EVENTS LIMIT 1), 7)`,
					`INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) SELECT start, start + 1000, 59, 'step', globalTid, 7 FROM NVTX_EVENTS WHERE text = 'step' AND eventType = 59`)
				db.Close()
				return []string{p, "--nvidia-rule", "off"}
			},
			exit: 1, want: []string{"step (NVTX domain lib)  67", "step: 3.402 ms now (median of 67 instances)", "its copy calls hold the host 22.6% of it now"}},
		{group: "NVTX ranges", name: "audit of the training capture's CSV reports with a library's ranges \"lib:step\" at each of the program's steps, nvtx_sum listing them (once 134 steps of median 1.438 ms)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				const src = "../../testdata/captures/train-pageable/"
				for _, name := range []string{"cuda_api_sum", "cuda_api_trace", "cuda_gpu_mem_size_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_trace", "cuda_memcpy_async", "nvtx_pushpop_trace", "nvtx_sum"} {
					file := "train-pageable_" + name + ".csv"
					text := fixture.LibrarySteps(file, string(readFile(t, src+file)))
					writeFile(t, filepath.Join(dir, file), []byte(text))
				}
				return []string{dir, "--nvidia-rule", "off"}
			},
			exit: 1, want: []string{"step (NVTX domain lib)  67", "step: 3.402 ms now (median of 67 instances)"}},
		{group: "report output", name: "scrub -o a file in a folder that is a link to nothing (once \"the output folder does not exist (create it first)\")", cmd: "scrub",
			make: danglingOut("shared.sqlite"), exit: 2, want: []string{"shared.sqlite: the output folder is a link to", "gone, which does not exist", "create that folder first, or name an output in another folder"}},
		{group: "report output", name: "scrub of a folder holding the export and a CSV report (once \"a folder, not a file (copy the data into a regular file and give that)\")", cmd: "scrub",
			make: func(t *testing.T, dir string) []string {
				copyShipped(t, dir, "pinned.sqlite")
				copyShipped(t, dir, "pinned_cuda_api_sum.csv")
				return []string{dir, "-o", filepath.Join(t.TempDir(), "shared.sqlite")}
			},
			exit: 2, want: []string{"a folder: scrub writes a shareable copy of one SQLite export, and CSV reports cannot be scrubbed", "give the SQLite export in it,", "pinned.sqlite"},
			never: []string{"regular file"}},
		{group: jsons, name: "report of an audit JSON whose class held -50% of its region (once rendered as -50.0%)", cmd: "report",
			make: editedAudit(classShare(0.2, -0.5)),
			exit: 2, want: []string{"audit.json", "classes[0] (cudaMemcpyAsync HtoD pageable 1MiB-16MiB", "hostShare is -0.5, not a share", "the file was edited"},
			never: []string{"-50.0%"}},
		{group: jsons, name: "report of an audit JSON whose class held 400% of its region, not the share its host time gives (once rendered as 400.0%)", cmd: "report",
			make: editedAudit(classShare(0.2, 4)),
			exit: 2, want: []string{"audit.json", "hostShare is 4, but its 48640880 ns of host time are a share of 0.21551276396611266 of its region \"step\"", "the file was edited"}},
		{group: jsons, name: "report of an audit JSON whose class's GPU rate is 10 times its bytes over its time (once rendered as 65.0 GB/s)", cmd: "report",
			make: editedAudit(func(results []map[string]any, check map[string]any) {
				for _, k := range []string{"classes", "topOffenders"} {
					c := results[0][k].([]any)[0].(map[string]any)
					c["gpuGBps"] = c["gpuGBps"].(float64) * 10
				}
			}),
			exit: 2, want: []string{"audit.json", "classes[0] (cudaMemcpyAsync HtoD pageable 1MiB-16MiB", ".gpuGBps is", "but its 210763776 bytes in", "the file was edited"}},
		{group: jsons, name: "report of the audit JSON of one capture whose region \"step\" ran 0 times yet has a median (once rendered as \"the median of 0 instances\")", cmd: "report",
			make:  oneAudit(func(r map[string]any) { region([]map[string]any{r}, 2)["instances"] = 0 }),
			never: []string{"median of 0 instances"},
			exit:  2, want: []string{"audit.json", `regions[2] ("step").instances is 0, but the region has a time`, "a region without an instance has none"}},
		{group: jsons, name: "report of the audit JSON of one capture whose region \"step\" is measured by its span, no instance behind the host (once rendered as \"span of 67 instances: most ran behind the host\")", cmd: "report",
			make: oneAudit(func(r map[string]any) { region([]map[string]any{r}, 2)["measure"] = "span" }),
			exit: 2, want: []string{"audit.json", `regions[2] ("step").measure is span, but its 67 instances, a share of 0 of them predicted to run behind the host, are measured by their median`},
			never: []string{"most ran behind the host"}},
		{group: jsons, name: "report of the audit JSON of one capture whose region \"step\" holds a pageable share of 5%, not the 22.1% its pageable calls' time gives (once rendered as 5.0%)", cmd: "report",
			make: oneAudit(func(r map[string]any) { region([]map[string]any{r}, 2)["pageableShare"] = 0.05 }),
			exit: 2, want: []string{"audit.json", `regions[2] ("step").pageableShare is 0.05, but its pageable copy calls'`, "ms are a share of 0.22"}},
		{group: jsons, name: "report of an audit JSON whose region's copies were overlapped 170% of their time (once accepted)", cmd: "report",
			make: editedAudit(func(results []map[string]any, check map[string]any) {
				region(results, 2)["overlap"].(map[string]any)["measured"] = 1.7
			}),
			exit: 2, want: []string{"audit.json", `regions[2] ("step").overlap.measured is 1.7, above 1, where it is a part of a whole`}},
	}
}

// oneAudit writes the JSON of the audit of the training capture before
// the fix, alone, edited, and gives report's arguments for it.
func oneAudit(edit func(result map[string]any)) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		code, out, stderr := runMain(t, []string{"audit", "../../testdata/captures/train-pageable", "--format", "json", "--nvidia-rule", "off"})
		if code != exitDied {
			t.Fatalf("audit of the training capture: %d %s", code, stderr)
		}
		var env map[string]any
		if err := json.Unmarshal([]byte(out), &env); err != nil {
			t.Fatal(err)
		}
		edit(env["results"].([]any)[0].(map[string]any))
		b, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "audit.json")
		writeFile(t, p, b)
		return []string{p, "-o", filepath.Join(t.TempDir(), "out")}
	}
}

// stubbornNsys is slowNsys ignoring SIGTERM, its child too.
func stubbornNsys(t *testing.T) string {
	t.Helper()
	p := slowNsys(t)
	script := string(readFile(t, p))
	script = strings.Replace(script, "#!/bin/sh\n", "#!/bin/sh\ntrap '' TERM INT\n", 1)
	script = strings.Replace(script, "sleep 300 &", "(trap '' TERM INT; exec sleep 300) &", 1)
	writeFile(t, p, []byte(script))
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeTools writes into a folder of its own an nvidia-smi that lists one
// H200, and nvcc and nsys of the shell bodies given (run after each answers
// --version; an empty body is a tool that works as the real one does),
// and returns run's arguments with them, its run folder in dir.
func fakeTools(t *testing.T, dir, nvcc, nsys string) []string {
	t.Helper()
	bin := t.TempDir()
	shipped, err := filepath.Abs(filepath.Join(shippedDir, "pinned.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	if nvcc == "" {
		nvcc = "out=; while [ $# -gt 0 ]; do case \"$1\" in -o) out=$2; shift;; esac; shift; done\nprintf '#!/bin/sh\\n' > \"$out\"; chmod +x \"$out\"\n"
	}
	if nsys == "" {
		nsys = "out=; while [ $# -gt 0 ]; do case \"$1\" in --output|-o) out=$2; shift;; esac; shift; done\n" +
			"case \"$cmd\" in\nprofile) echo rep > pinned.nsys-rep; echo '{}' > pinned.results.json;;\nexport) cp '" + shipped + "' \"$out\";;\n" +
			"stats) for r in cuda_api_sum cuda_api_trace cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum nvtx_sum; do echo x > \"${out}_$r.csv\"; done;;\nesac\n"
	}
	for name, body := range map[string]string{
		"nvidia-smi": "case \"$*\" in *query-gpu*) echo 'NVIDIA H200, 550.54, 9.0, 5, 5, 16, 16, 0, 00000000:19:00.0, GPU-1234';; esac\n",
		"nvcc":       "[ \"$1\" = --version ] && { echo 'Cuda compilation tools, release 12.4, V12.4.131'; exit 0; }\n" + nvcc,
		"nsys": "[ \"$1\" = --version ] && { echo 'NVIDIA Nsight Systems version 2025.3.1'; exit 0; }\n" +
			"[ \"$2\" = --help-reports ] && { printf 'cuda_api_sum\\ncuda_api_trace\\ncuda_gpu_mem_time_sum\\ncuda_gpu_mem_size_sum\\nnvtx_sum\\n'; exit 1; }\n" +
			"[ \"$2\" = --help-rules ] && exit 1\ncmd=$1\n" + nsys,
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("NSYSCHECK_LOCK_DIR", t.TempDir())
	t.Setenv("NSYSCHECK_SAMPLE_APART", "1ms")
	return []string{"-o", filepath.Join(dir, "run"), "--nvcc", filepath.Join(bin, "nvcc"), "--nsys", filepath.Join(bin, "nsys"),
		"--no-pid-namespace", "--no-bind", "--quiet"}
}

// runCases: nsyscheck run with stand-ins for nvcc and nsys that fail, hang,
// write garbage or nothing, or exit 0 without their output.
func runCases() []badCase {
	const runs = "run with tools that misbehave"
	tools := func(nvcc, nsys string, more ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string { return append(fakeTools(t, dir, nvcc, nsys), more...) }
	}
	return []badCase{
		{group: runs, name: "the stand-ins as tools that work: the shipped export verified", cmd: "run", serial: true, mayWrite: true,
			make: tools("", ""), exit: 0, want: []string{"prediction 1  held"}},
		{group: runs, name: "nsys answering --version without end, with --timeout 3s (once 2 GB of memory in 4 s, and 47 s to stop)", cmd: "run", serial: true, mayWrite: true,
			make: func(t *testing.T, dir string) []string {
				args := fakeTools(t, dir, "", "")
				nsys := args[5]
				writeFile(t, nsys, []byte("#!/bin/sh\nexec yes garbage-version-line\n"))
				if err := os.Chmod(nsys, 0o755); err != nil {
					t.Fatal(err)
				}
				return append(args, "--timeout", "3s")
			},
			exit: 2, want: []string{`step "detect" stopped: --timeout 3s reached`}},
		{group: runs, name: "nvcc exiting 0 without writing the program (once found only when nsys could not start it)", cmd: "run", serial: true, mayWrite: true,
			make: tools("exit 0\n", ""), exit: 2, want: []string{`step "build" failed: nvcc exited 0 but wrote no program`, "check that", "is the CUDA compiler, or pass --nvcc PATH", "(build.log is empty: it printed nothing)"}},
		{group: runs, name: "nsys profile exiting 0 without a report or a word (once a message ending in nothing)", cmd: "run", serial: true, mayWrite: true,
			make: tools("", "exit 0\n"), exit: 2, want: []string{`step "profile" failed: nsys profile exited 0 but wrote no pinned.nsys-rep`, "or pass --nsys PATH", "(pinned.transcript.txt is empty: it printed nothing)"}},
		{group: runs, name: "nsys export writing garbage (once \"compact the SQLite export: file is not a database\", naming neither file nor tool)", cmd: "run", serial: true, mayWrite: true,
			make: tools("", "[ \"$cmd\" = profile ] && { echo rep > pinned.nsys-rep; echo '{}' > pinned.results.json; }\n[ \"$cmd\" = export ] && { out=$5; echo garbage > \"$out\"; }\nexit 0\n"),
			exit: 2, want: []string{`step "export" failed: nsys export wrote`, "pinned.export.sqlite, which cannot be read as an SQLite database (file is not a database)", "by hand"}},
		{group: runs, name: "nsys export exiting 0 with an empty file (once compacted into an empty export)", cmd: "run", serial: true, mayWrite: true,
			make: tools("", "[ \"$cmd\" = profile ] && { echo rep > pinned.nsys-rep; echo '{}' > pinned.results.json; }\n[ \"$cmd\" = export ] && : > \"$5\"\nexit 0\n"),
			exit: 2, want: []string{`step "export" failed: nsys export exited 0 but left`, "pinned.export.sqlite empty (0 bytes)"}},
		{group: runs, name: "nsys stats exiting 0 without a CSV report (once a complete run without its reports)", cmd: "run", serial: true, mayWrite: true,
			make: tools("", "[ \"$cmd\" = profile ] && { echo rep > pinned.nsys-rep; echo '{}' > pinned.results.json; }\n[ \"$cmd\" = export ] && cp '"+shippedAbs()+"' \"$5\"\nexit 0\n"),
			exit: 2, want: []string{`step "stats" failed: nsys stats exited 0 but wrote none of the 5 CSV reports asked for (pinned_cuda_api_sum.csv, ...)`}},
		{group: runs, name: "run --gpu all where nvidia-smi lists GPU index 0 twice (once the second GPU run into the first's folder, asking for another --out)", cmd: "run", serial: true, mayWrite: true,
			make: func(t *testing.T, dir string) []string {
				args := fakeTools(t, dir, "", "")
				smi := filepath.Join(filepath.Dir(args[3]), "nvidia-smi")
				writeFile(t, smi, []byte("#!/bin/sh\ncase \"$*\" in *query-gpu*) echo 'NVIDIA H200, 550.54, 9.0, 5, 5, 16, 16, 0, 00000000:19:00.0, GPU-1234'; echo 'NVIDIA H200, 550.54, 9.0, 5, 5, 16, 16, 0, 00000000:1A:00.0, GPU-5678';; esac\n"))
				if err := os.Chmod(smi, 0o755); err != nil {
					t.Fatal(err)
				}
				return append(args, "--gpu", "all")
			},
			exit: 2, want: []string{`step "detect" failed: nvidia-smi unusable: it lists GPU index 0 twice (bus 00000000:19:00.0 and bus 00000000:1A:00.0)`, "check the driver"}},
		{group: "interruptions", name: "verify gets SIGINT while an nsys that ignores SIGTERM exports the .nsys-rep (once it ran on after nsyscheck ended, and its child)",
			run: interrupted(syscall.SIGINT),
			make: func(t *testing.T, dir string) []string {
				return []string{"--nsys", stubbornNsys(t), copyShipped(t, dir, "pinned.nsys-rep")}
			},
			exit: exitSignal, want: []string{"pinned.nsys-rep: interrupted while nsys exported the report", "partial export removed"}},
		{group: runs, name: "run -o a link to nothing (once \"already exists\")", cmd: "run", serial: true, mayWrite: true,
			make: func(t *testing.T, dir string) []string {
				args := fakeTools(t, dir, "", "")
				if err := os.Symlink(filepath.Join(dir, "gone"), args[1]); err != nil {
					t.Fatal(err)
				}
				return args
			},
			exit: 2, want: []string{"run is a link to", "gone, which does not exist; nsyscheck makes a new folder and never writes through a link: remove the link, or pass another --out"},
			check: func(t *testing.T, dir string) {
				if _, err := os.Lstat(filepath.Join(dir, "gone")); !os.IsNotExist(err) {
					t.Errorf("the link's target was made: %v", err)
				}
			}},
		{group: runs, name: "run --gpu all -o a link to nothing (once \"mkdir: file exists\")", cmd: "run", serial: true, mayWrite: true,
			make: func(t *testing.T, dir string) []string {
				args := fakeTools(t, dir, "", "")
				if err := os.Symlink(filepath.Join(dir, "gone"), args[1]); err != nil {
					t.Fatal(err)
				}
				return append(args, "--gpu", "all")
			},
			exit: 2, want: []string{"run is a link to", "gone, which does not exist; nsyscheck makes a new folder and never writes through a link"}},
		{group: runs, name: "SIGINT while an nvcc that ignores SIGTERM builds (once ten seconds to stop)", cmd: "run", serial: true, mayWrite: true,
			make: tools("trap '' TERM INT\nwhile :; do sleep 0.1; done\n", ""), run: signalledAfter(syscall.SIGINT, 3*time.Second),
			exit: exitSignal, want: []string{`step "build" stopped: interrupt signal received`}},
	}
}

// shippedAbs is the shipped export's absolute path.
func shippedAbs() string {
	p, _ := filepath.Abs(filepath.Join(shippedDir, "pinned.sqlite"))
	return p
}
