package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// pairEdit copies the shipped before capture of a pair (name-pageable)
// into dir, runs stmt on the copy and returns the arguments of its check
// against the shipped capture after (name-pinned), NVIDIA's rule off.
func pairEdit(name, stmt string) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		const captures = "../../testdata/captures/"
		p := filepath.Join(dir, name+"-pageable.sqlite")
		writeFile(t, p, readFile(t, captures+name+"-pageable/"+name+"-pageable.sqlite"))
		db := openRW(t, p)
		mustExec(t, db, stmt)
		recount(t, db)
		db.Close()
		return []string{p, captures + name + "-pinned/" + name + "-pinned.sqlite", "--nvidia-rule", "off"}
	}
}

// pipelineCSV copies the CSV reports of the shipped pipeline-pageable
// capture (the API and GPU traces and the NVTX ranges) into dir and
// rewrites report (cuda_gpu_trace, ...) with edit.
func pipelineCSV(report string, edit func(string) string) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		for _, r := range []string{"cuda_api_trace", "cuda_gpu_trace", "nvtx_pushpop_trace"} {
			name := "pipeline-pageable_" + r + ".csv"
			data := string(readFile(t, "../../testdata/captures/pipeline-pageable/"+name))
			if r == report {
				data = edit(data)
			}
			writeFile(t, filepath.Join(dir, name), []byte(data))
		}
		return []string{dir, "--nvidia-rule", "off"}
	}
}

// againRow appends the first row of a CSV report that holds match once
// more at its end.
func againRow(match string) func(string) string {
	return func(s string) string {
		for _, l := range strings.Split(s, "\n")[1:] {
			if strings.Contains(l, match) {
				return strings.TrimRight(s, "\n") + "\n" + l + "\n"
			}
		}
		return s
	}
}

// faults20Cases: missing data is never a pass, impossible data never held.
func faults20Cases() []badCase {
	const prefetch = "torch-prefetch-pageable/torch-prefetch-pageable.sqlite"
	// The first timed device-resident launch of the shipped H200 capture
	// (the sixth kernel by start: after the gate and the warm-ups).
	const timedKernel = `(SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1 OFFSET 5)`
	// 10,600 distinct deleted passwords, of which 10,519 survive in unused
	// pages: past the 10,000 distinct values the scan keeps, the last 519
	// told by one finding of the other values.
	var stale []string
	for i := range 10600 {
		stale = append(stale, fmt.Sprintf("db_password=Stale%05dPw", i))
	}
	// The pipeline export cut to one copy, its call and nothing else the
	// GPU ran: a (capture) region of a single op, no NVTX range.
	const oneCopy = `DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE rowid > 1;
		DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN (SELECT id FROM StringIds WHERE value LIKE 'cudaMemcpy%')
			AND correlationId NOT IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY);
		DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL; DELETE FROM NVTX_EVENTS`
	return []badCase{
		{group: "audit", name: "audit CAPTURE CAPTURE: the pipeline export cut to one copy, a (capture) region of a single op (once \"cannot check the prediction 0.000 ms\", a prediction it did not make)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				args := shippedEdit("pipeline-pageable/pipeline-pageable.sqlite", oneCopy)(t, dir)
				return append([]string{args[0]}, args...)
			},
			exit: 1, want: []string{"(capture): unavailable: 9.901 ms before, 9.901 ms after (its one instance), but the capture after did not make the fix, and the region is not predicted: the what-if found no pinned cost"}},
		{group: "CSV reports", name: "audit: the last cuda_api_trace row twice (once \"nsyscheck: : data row 434\": no file named)", cmd: "audit",
			make: pipelineCSV("cuda_api_trace", againRow("cudaMemcpyAsync")),
			exit: 2, want: []string{"pipeline-pageable_cuda_api_trace.csv: data row 434 (CUDA API call cudaMemcpyAsync): another API call of process 22 has the same correlation id"}},
		{group: "CSV reports", name: "audit: a kernel row of cuda_gpu_trace twice, its launch a cudaLaunchKernel (once taken as a second kernel of one launch, and a check called it another program)", cmd: "audit",
			make: pipelineCSV("cuda_gpu_trace", againRow("process(float")),
			exit: 2, want: []string{"pipeline-pageable_cuda_gpu_trace.csv: data row 290 (kernel process): another kernel of process 22 has the same correlation id, where one launch runs one kernel"}},
		{group: "credentials the scan once missed", name: "verify: 10,600 distinct deleted passwords left in unused pages (once \"and 9993 more\" after 8 named of 10,519 strings: the findings left out, not their strings)",
			make: deletedStrings(stale...),
			exit: 0, want: []string{"10519 strings, 10519 of them credential-like", "at offset 12767, and 10511 more"},
			never: []string{"Stale00000Pw"}},
		{group: "names that hold secrets or terminal escapes", name: "audit: an NVTX range named with CR, ESC [2J, BEL and a newline (once escaped in the region table, and parted by spaces in the sentences around it)", cmd: "audit",
			make: shippedEdit("pipeline-pageable/pipeline-pageable.sqlite", `UPDATE NVTX_EVENTS SET text = 'pa' || char(13) || 'ss' || char(27) || '[2J' || char(7) || 'y' || char(10) || 'z' WHERE text = 'pass'`),
			exit: 1, want: []string{`pa\x0dss\x1b[2J\x07y\x0az: 275.7 ms now`, `[pa\x0dss\x1b[2J\x07y\x0az]: 40 copies`}},
		{group: "impossible values", name: "audit: copies of under 64 bytes that end when they start (once held: a rate bound passes a few bytes in 1 ns)", cmd: "audit",
			make: shippedEdit(prefetch, `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET "end" = start WHERE bytes < 64`),
			exit: 2, want: []string{"torch-prefetch-pageable.sqlite", "40 bytes in 0 ns (it ends when it starts): an infinite bandwidth, which no copy has"}},
		{group: "impossible values", name: "audit: memsets that end when they start", cmd: "audit",
			make: shippedEdit(prefetch, `UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET "end" = start`),
			exit: 2, want: []string{"torch-prefetch-pageable.sqlite", "bytes in 0 ns (it ends when it starts): an infinite bandwidth, which no memset has"}},
		{group: "impossible values", name: "SQLite: a timed kernel that ends when it starts, the program's own timings beside it (3.factor decided by them)",
			make: sqliteEdit(`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start WHERE rowid IN ` + timedKernel),
			exit: 0, want: []string{"evidence: program: predicted loss", "warning kernel-zero-time: 1 kernel of the trace ends when it starts"}},
		{group: "impossible values", name: "SQLite: a timed kernel that ends when it starts, the export alone (once 3.factor held on it, 43.43x)",
			make: func(t *testing.T, dir string) []string {
				return shippedEdit("h200-pinned/pinned.sqlite", `UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start WHERE rowid IN `+timedKernel)(t, dir)[:1]
			},
			exit: 1, want: []string{"1 launch of the timed device-resident kernels in CUPTI_ACTIVITY_KIND_KERNEL ends when it starts (the first: correlation id 542)",
				"warning kernel-zero-time: 1 kernel of the trace ends when it starts", "the verdicts it touches: 3.factor"},
			notHeld: []string{"3", "3.factor"}},
		{group: "impossible values", name: "audit BEFORE AFTER: BEFORE's cudaMemcpyAsync calls ending when they start (once a verdict, died, with no word of them)", cmd: "audit",
			make: pairEdit("pipeline", `UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET "end" = start WHERE nameId IN `+asyncIDs),
			exit: 1, want: []string{"warning copy-call-zero-time: before: 192 copies of the trace: their calls end when they start (the first: cudaMemcpyAsync, correlation id 138)"}},
		{group: "impossible values", name: "audit: a CSV report's kernel of 0 ns (Duration (ns) 0)", cmd: "audit",
			make: pipelineCSV("cuda_gpu_trace", func(s string) string {
				lines := strings.Split(s, "\n")
				cells := strings.SplitN(lines[1], ",", 3) // the first row: a kernel
				lines[1] = cells[0] + ",0," + cells[2]
				return strings.Join(lines, "\n")
			}),
			exit: 1, want: []string{"warning kernel-zero-time: 1 kernel of the trace ends when it starts (the first: \"process\", data row 1 of cuda_gpu_trace)",
				"make the CSV reports again (nsys stats --format csv"}},
		{group: "impossible values", name: "audit: kernels that end when they start (once silent)", cmd: "audit",
			make: shippedEdit("h200-pinned/pinned.sqlite", `UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start WHERE rowid <= 2`),
			exit: 1, want: []string{"warning kernel-zero-time: 2 kernels of the trace end when they start (the first: \"scaleCopy\", correlation id 527)"}},
		{group: "audit", name: "audit BEFORE AFTER: BEFORE without its CUPTI_ACTIVITY_KIND_CUDA_EVENT table, its cross-stream waits unresolved (once held)", cmd: "audit",
			make: pairEdit("pipeline", `DROP TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT`),
			exit: 1, want: []string{"UNAVAILABLE", "unavailable: the replay of warmup (2 waits) and pass (10 waits) rests on waits on an event",
				"the export has no CUPTI_ACTIVITY_KIND_CUDA_EVENT table", "nsys export --type sqlite"}},
		{group: "audit", name: "audit BEFORE AFTER: BEFORE's CUPTI_ACTIVITY_KIND_CUDA_EVENT table emptied (once held)", cmd: "audit",
			make: pairEdit("torch-prefetch", `DELETE FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT`),
			exit: 1, want: []string{"UNAVAILABLE", "the replay of warmup (6 waits) and step (60 waits) rests on waits on an event",
				"the export's CUPTI_ACTIVITY_KIND_CUDA_EVENT table is empty"}},
		{group: "audit", name: "audit BEFORE AFTER: BEFORE's last recording of event 2 deleted, a wait naming it by eventSyncId (once held on the event's recording before it)", cmd: "audit",
			make: pairEdit("pipeline", `DELETE FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT WHERE eventId = 2 AND eventSyncId = 14`),
			exit: 0, want: []string{"HELD", "held: 1 of 2 judged regions lie in their predicted bound (1 resting on unresolved waits)",
				"pass: unavailable: 275.7 ms before", "the recording of the event their synchronisation record names (by eventSyncId) is not in the export's CUPTI_ACTIVITY_KIND_CUDA_EVENT table before them"}},
		{group: "audit", name: "audit BEFORE AFTER: BEFORE without its CUPTI_ACTIVITY_KIND_SYNCHRONIZATION table, no wait naming its event (once held)", cmd: "audit",
			make: pairEdit("pipeline", `DROP TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`),
			exit: 1, want: []string{"UNAVAILABLE", "the replay of warmup (1 wait) and pass (5 waits) rests on waits on an event",
				"the export has no CUPTI_ACTIVITY_KIND_SYNCHRONIZATION table, whose records name the event each wait waited for"}},
	}
}
