package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// launchIDs selects the string ids of the kernel launch calls.
const launchIDs = `(SELECT id FROM StringIds WHERE value LIKE 'cudaLaunchKernel%')`

// contradictionCases: records whose own fields contradict each other (a
// copy kind against its memory kinds, a kernel of a launch that failed, a
// memset that ends before it starts, which verify once did not read, or of
// a negative size), summaries that contradict the trace they tally (and
// one that only seems to), and the program's failed correctness gate
// against its own timings. Each is made from the shipped captures, damaged
// the way the row says; verify and audit answer alike.
func contradictionCases() []badCase {
	const group = "records that contradict themselves"
	off := []string{"--nvidia-rule", "off"}
	audit := func(mk func(t *testing.T, dir string) []string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string { return append(mk(t, dir), off...) }
	}
	dtod := `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyKind = 8 WHERE ` + asyncCopies
	failedLaunch := `UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 700 WHERE nameId IN ` + launchIDs
	return []badCase{
		{group: group, name: "every NVTX event of type 77, which ENUM_NSYS_EVENT_TYPE names NvnGpuCmdBuf (once the ranges left out unsaid, every prediction held)",
			make: sqliteEdit(`UPDATE NVTX_EVENTS SET eventType = 77`),
			exit: 2, want: []string{"table NVTX_EVENTS: 9 rows hold an eventType that ENUM_NSYS_EVENT_TYPE defines as no NVTX event, or does not define (the first: rowid 1, eventType 77)"}},
		{group: group, name: "audit: an NVTX push/pop range of event type 999, which ENUM_NSYS_EVENT_TYPE does not define", cmd: "audit",
			make: sqliteEdit(`UPDATE NVTX_EVENTS SET eventType = 999 WHERE rowid = 3`),
			exit: 2, want: []string{"table NVTX_EVENTS: 1 row holds an eventType", "(the first: rowid 3, eventType 999)"}},
		{group: group, name: "SQLite: the cudaMemcpyAsync copies made device-to-device, their memory kinds (pageable, pinned) kept (once no host copy and an audit PASS)",
			make: sqliteEdit(dtod),
			exit: 2, want: []string{"pinned.sqlite", "a DtoD copy, which moves device memory only, from pageable to device memory"},
			notHeld: []string{"2", "4"}},
		{group: group, name: "audit: the cudaMemcpyAsync copies made device-to-device, their memory kinds kept (once PASS: no copy breaks the rule)",
			make: audit(sqliteEdit(dtod)), cmd: "audit",
			exit: 2, want: []string{"pinned.sqlite", "a DtoD copy, which moves device memory only"}},
		{group: group, name: "audit: cuda_gpu_trace with a pageable host-to-device copy named Device-to-Device",
			make: audit(gpuTraceRowEdit("Pageable,Device,", func(f []string) {
				f[len(f)-1] = "[CUDA memcpy Device-to-Device]"
			})), cmd: "audit",
			exit: 2, want: []string{"pinned_cuda_gpu_trace.csv", "a DtoD copy, which moves device memory only, from pageable to device memory"}},
		{group: group, name: "SQLite: every cudaLaunchKernel call returned error 700, its kernel kept (once 3.factor held on kernels that never ran)",
			make: sqliteEdit(failedLaunch),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_KERNEL", "returned error 700, yet the kernel ran"},
			notHeld: []string{"3"}},
		{group: group, name: "audit: every cudaLaunchKernel call returned error 700, its kernel kept",
			make: audit(pipelineEditArgs(failedLaunch)), cmd: "audit",
			exit: 2, want: []string{"pipeline-pageable.sqlite", "returned error 700, yet the kernel ran"}},
		{group: group, name: "CSV: cuda_api_trace with error 700 on every cudaLaunchKernel call",
			make: csvEdit(func(s string) string {
				return regexp.MustCompile(`(?m)^(\d+,\d+,cudaLaunchKernel),0,`).ReplaceAllString(s, "$1,700,")
			}),
			exit: 2, want: []string{"pinned_cuda_gpu_trace.csv", "returned error 700, yet the kernel ran"},
			notHeld: []string{"3"}},
		{group: group, name: "SQLite: a memset that ends before it starts (once refused by the audit alone: verify read no memset)",
			make: sqliteEdit(memsetBackwards),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_MEMSET", "correlation id 525: ends before it starts"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: group, name: "audit: a memset that ends before it starts",
			make: audit(sqliteEdit(memsetBackwards)), cmd: "audit",
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_MEMSET", "correlation id 525: ends before it starts"}},
		{group: group, name: "SQLite: every memset of -1 bytes (once held, a copy of -1 bytes refused)",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET bytes = -1`),
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_MEMSET", "memset size -1 bytes is impossible"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: group, name: "audit: every memset of -1 bytes",
			make: audit(sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET bytes = -1`)), cmd: "audit",
			exit: 2, want: []string{"pinned.sqlite", "table CUPTI_ACTIVITY_KIND_MEMSET", "memset size -1 bytes is impossible"}},
		{group: group, name: "CSV: cuda_gpu_trace with a memset of a negative duration",
			make: gpuTraceRowEdit("[CUDA memset]", func(f []string) { f[1] = "-" + f[1] }),
			exit: 2, want: []string{"pinned_cuda_gpu_trace.csv", "Duration (ns)"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: group, name: "CSV: cuda_gpu_mem_size_sum counting 999 host-to-device copies where cuda_gpu_trace holds 156 (once held, the same count in cuda_gpu_mem_time_sum refused)",
			make: summaryEdit("pinned_cuda_gpu_mem_size_sum.csv", "11645.485,156,", "11645.485,999,"),
			exit: 2, want: []string{"pinned_cuda_gpu_trace.csv", "it holds 156 HtoD copies where pinned_cuda_gpu_mem_size_sum.csv counts 999"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: group, name: "audit: cuda_gpu_mem_size_sum counting 999 host-to-device copies where cuda_gpu_trace holds 156",
			make: audit(summaryEdit("pinned_cuda_gpu_mem_size_sum.csv", "11645.485,156,", "11645.485,999,")), cmd: "audit",
			exit: 2, want: []string{"pinned_cuda_gpu_trace.csv", "it holds 156 HtoD copies where pinned_cuda_gpu_mem_size_sum.csv counts 999"}},
		{group: group, name: "CSV: cuda_gpu_mem_size_sum totalling 99645 MB of host-to-device copies where cuda_gpu_trace's move 11645 MB",
			make: summaryEdit("pinned_cuda_gpu_mem_size_sum.csv", "11645.485,156,", "99645.485,156,"),
			exit: 2, want: []string{"pinned_cuda_gpu_trace.csv", "its 156 HtoD copies move 11645.485 MB in all where pinned_cuda_gpu_mem_size_sum.csv totals 99645.485 MB"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: group, name: "CSV: cuda_gpu_mem_time_sum totalling 1 s more of host-to-device copies than cuda_gpu_trace's last",
			make: summaryEdit("pinned_cuda_gpu_mem_time_sum.csv", "65.0,757345547,156,", "65.0,1757345547,156,"),
			exit: 2, want: []string{"pinned_cuda_gpu_trace.csv", "its 156 HtoD copies last 757345547 ns in all where pinned_cuda_gpu_mem_time_sum.csv totals 1757345547 ns"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: group, name: "CSV: cuda_api_sum totalling 10 ms more of cudaMemcpyAsync calls than cuda_api_trace's last (once held: only the count was compared)",
			make: summaryEdit("pinned_cuda_api_sum.csv", "5.2,84048123,22,", "5.2,94048123,22,"),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "its 22 cudaMemcpyAsync calls last 84048123 ns in all where pinned_cuda_api_sum.csv totals 94048123 ns"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: group, name: "audit: cuda_api_sum totalling 10 ms more of cudaMemcpyAsync calls than cuda_api_trace's last",
			make: audit(summaryEdit("pinned_cuda_api_sum.csv", "5.2,84048123,22,", "5.2,94048123,22,")), cmd: "audit",
			exit: 2, want: []string{"pinned_cuda_api_trace.csv", "its 22 cudaMemcpyAsync calls last 84048123 ns in all"}},
		{group: group, name: "CSV: nvtx_sum counting 7 h2d-pageable ranges where nvtx_pushpop_trace holds 1 (once held in silence)",
			make: summaryEdit("pinned_nvtx_sum.csv", "48.6,539211927,1,", "48.6,539211927,7,"),
			exit: 2, want: []string{"pinned_nvtx_pushpop_trace.csv", `it holds 1 NVTX ranges named "h2d-pageable" where pinned_nvtx_sum.csv counts 7`},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: group, name: "audit: nvtx_sum totalling 400 ms more of h2d-pageable than nvtx_pushpop_trace's range lasts (once unread by the audit)",
			make: audit(summaryEdit("pinned_nvtx_sum.csv", "48.6,539211927,1,", "48.6,939211927,1,")), cmd: "audit",
			exit: 2, want: []string{"pinned_nvtx_pushpop_trace.csv", `its 1 NVTX ranges named "h2d-pageable" last 539211927 ns in all where pinned_nvtx_sum.csv totals 939211927 ns`}},
		{group: group, name: "audit: nvtx_pushpop_trace's h2d-pinned range renamed h2d-pinned2, a name nvtx_sum does not list",
			make: audit(func(t *testing.T, dir string) []string {
				args := csvEdit(func(s string) string { return s })(t, dir)
				p := filepath.Join(dir, "pinned_nvtx_pushpop_trace.csv")
				writeFile(t, p, []byte(strings.Replace(string(readFile(t, p)), ",:h2d-pinned,", ",:h2d-pinned2,", 1)))
				return args
			}), cmd: "audit",
			exit: 2, want: []string{"pinned_nvtx_pushpop_trace.csv", `it holds 1 NVTX ranges of names pinned_nvtx_sum.csv lists no push/pop range of (the first: "h2d-pinned2")`}},
		{group: group, name: "audit: cuda_gpu_mem_size_sum's total not a number (once refused by verify alone)",
			make: audit(summaryEdit("pinned_cuda_gpu_mem_size_sum.csv", "11645.485,156,", "lots,156,")), cmd: "audit",
			exit: 2, want: []string{"pinned_cuda_gpu_mem_size_sum.csv", `column "Total (MB)"`, "not a number"}},
		{group: group, name: "audit: torch-prefetch-backtrace's CSV reports alone, whose cuda_api_sum tallies cuLaunchKernel's calls and stack records in one row (once refused: 195 calls where it counts 237)",
			make: func(t *testing.T, dir string) []string {
				src := "../../testdata/captures/torch-prefetch-backtrace"
				matches, err := filepath.Glob(filepath.Join(src, "*.csv"))
				if err != nil || len(matches) == 0 {
					t.Fatalf("no shipped CSV reports in %s: %v", src, err)
				}
				for _, m := range matches {
					writeFile(t, filepath.Join(dir, filepath.Base(m)), readFile(t, m))
				}
				return append([]string{dir}, off...)
			}, cmd: "audit",
			exit: 1, want: []string{"136 copies break the lesson's rule", "PyTorch"}},
		{group: group, name: "results JSON: the program's h2d-pageable copy-back gate failed, its timings kept (once every claim they gave held)",
			make: programEdit("pinned.results.json", `{"name": "h2d-pageable copy-back", "passed": true, "detail": ""}`, `{"name": "h2d-pageable copy-back", "passed": false, "detail": "byte 5 differs"}`),
			exit: 1, want: []string{"prediction 1  unavailable", `the program's correctness gate "h2d-pageable copy-back" failed (byte 5 differs), so its timings cannot decide`},
			notHeld: []string{"1", "2", "3", "4", "1.floor", "1.growth", "2.pageable", "2.pinned", "3.factor"}},
		{group: group, name: "transcript: the program's kernel-zero-copy gate FAILED, its timings kept",
			make: programEdit("pinned.transcript.txt", "gate kernel-zero-copy             ok", "gate kernel-zero-copy             FAILED: sum mismatch"),
			exit: 1, want: []string{`the program's correctness gate "kernel-zero-copy" failed (sum mismatch), so its timings cannot decide`},
			notHeld: []string{"1", "2", "3", "4", "1.floor", "1.growth", "2.pageable", "2.pinned", "3.factor"}},
		{group: group, name: "the export, beside it a results JSON whose h2d-pageable copy-back gate failed (the trace decides)",
			make: func(t *testing.T, dir string) []string {
				args := programEdit("pinned.results.json", `{"name": "h2d-pageable copy-back", "passed": true, "detail": ""}`, `{"name": "h2d-pageable copy-back", "passed": false, "detail": "byte 5 differs"}`)(t, dir)
				copyShipped(t, dir, "pinned.sqlite")
				return []string{filepath.Join(filepath.Dir(args[0]), "pinned.sqlite")}
			},
			exit: 0, want: []string{"prediction 1  held", `gate-failed: the program's correctness gate "h2d-pageable copy-back" failed`}},
		{group: group, name: "verify --reference REF, REF a results JSON whose h2d-pageable copy-back gate failed (once its ratio held the check)",
			make: func(t *testing.T, dir string) []string {
				ref := programEdit("pinned.results.json", `{"name": "h2d-pageable copy-back", "passed": true, "detail": ""}`, `{"name": "h2d-pageable copy-back", "passed": false, "detail": "byte 5 differs"}`)(t, dir)[0]
				p := filepath.Join(dir, "pinned.sqlite")
				writeFile(t, p, readFile(t, filepath.Join(shippedDir, "pinned.sqlite")))
				return []string{p, "--reference", ref}
			},
			exit: 1, want: []string{`pinned.results.json: the program's correctness gate "h2d-pageable copy-back" failed: its numbers give no ratio, so no check against the reference`}},
	}
}

// programEdit copies the shipped program output named (transcript or
// results JSON) into dir and replaces old by new, once, in the copy.
func programEdit(name, old, new string) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		t.Helper()
		p := copyShipped(t, dir, name)
		data := string(readFile(t, p))
		if !strings.Contains(data, old) {
			t.Fatalf("%s holds no %q", name, old)
		}
		writeFile(t, p, []byte(strings.Replace(data, old, new, 1)))
		return []string{p}
	}
}

// summaryEdit copies the shipped CSV reports and results JSON into dir and
// replaces old by new, once, in the copy of the report named.
func summaryEdit(report, old, new string) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		t.Helper()
		args := csvEdit(func(s string) string { return s })(t, dir)
		p := filepath.Join(dir, report)
		data := string(readFile(t, p))
		if !strings.Contains(data, old) {
			t.Fatalf("%s holds no %q", report, old)
		}
		writeFile(t, p, []byte(strings.Replace(data, old, new, 1)))
		return args
	}
}

// memsetBackwards makes the first memset end 10 ns before it starts.
const memsetBackwards = `UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET "end" = start - 10 WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_MEMSET)`

// pipelineEditArgs is pipelineEdit without its flags: the capture alone.
func pipelineEditArgs(stmt string) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string { return pipelineEdit(stmt)(t, dir)[:1] }
}
