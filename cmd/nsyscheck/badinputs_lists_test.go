package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// listCases: records that name what the export's own lists do not hold (a
// context of another process, a GPU it does not name), records without
// their process, a record past the trace's stop without a correlation id,
// graph launch calls without their records, a run folder of a run that
// failed, one capture given twice to report, and the ranks --ranks reads
// from capture names holding more than one number. Each is made from a shipped
// capture, damaged or named the way the row says.
func listCases() []badCase {
	const lists = "lists and names"
	// ranksOf copies the shipped pipeline-pageable and -pinned exports
	// into dir under names, and returns --ranks's arguments.
	ranksOf := func(names ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			args := []string{"--ranks"}
			for i, n := range names {
				src := "../../testdata/captures/pipeline-pinned/pipeline-pinned.sqlite"
				if i == 0 {
					src = "../../testdata/captures/pipeline-pageable/pipeline-pageable.sqlite"
				}
				p := filepath.Join(dir, n)
				writeFile(t, p, readFile(t, src))
				args = append(args, p)
			}
			return append(args, "--nvidia-rule", "off")
		}
	}
	return []badCase{
		{group: lists, name: "audit: every context TARGET_INFO_CUDA_CONTEXT_INFO lists given to process 99, the records' being 22 (once audited in silence)", cmd: "audit",
			make: pipelineEdit(`UPDATE TARGET_INFO_CUDA_CONTEXT_INFO SET processId = 99`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table CUPTI_ACTIVITY_KIND_MEMCPY: 192 rows name context 1 on device 0 of process 22 (the pid in globalPid) on host hwId 0, vmId 1 (in globalPid) (the first: rowid 1), which TARGET_INFO_CUDA_CONTEXT_INFO does not list", "export it again"}},
		{group: lists, name: "audit: every kernel on device 5, whose context TARGET_INFO_CUDA_CONTEXT_INFO does not list (once a warning alone)", cmd: "audit",
			make: pipelineEdit(`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 5`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table CUPTI_ACTIVITY_KIND_KERNEL: 97 rows name context 1 on device 5 of process 22"}},
		{group: lists, name: "audit: every kernel on device 5, TARGET_INFO_CUDA_CONTEXT_INFO dropped: TARGET_INFO_GPU does not list it (once a warning alone)", cmd: "audit",
			make: shippedEdit("pipeline-pageable/pipeline-pageable.sqlite", `UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 5`, `DROP TABLE TARGET_INFO_CUDA_CONTEXT_INFO`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table CUPTI_ACTIVITY_KIND_KERNEL: 97 rows name device 5 (the first: rowid 1), which TARGET_INFO_GPU does not list among the capture's GPUs"}},
		{group: lists, name: "audit: the last copy ending past the trace's stop, its correlationId NULL (once named correlation id 0)", cmd: "audit",
			make: shippedEdit("pipeline-pageable/pipeline-pageable.sqlite", `CREATE TABLE m AS SELECT * FROM CUPTI_ACTIVITY_KIND_MEMCPY`, `DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY`,
				`ALTER TABLE m RENAME TO CUPTI_ACTIVITY_KIND_MEMCPY`, `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET correlationId = NULL, end = end + 9000000000000 WHERE rowid = 192`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table CUPTI_ACTIVITY_KIND_MEMCPY, rowid 192 (correlationId NULL): a record ends at"}},
		{group: lists, name: "audit: every synchronisation's globalPid NULL (once read as no process, the replay's waits changed in silence)", cmd: "audit",
			make: shippedEdit("pipeline-pageable/pipeline-pageable.sqlite", `CREATE TABLE s AS SELECT * FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`, `DROP TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`,
				`ALTER TABLE s RENAME TO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`, `UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET globalPid = NULL`),
			exit: 2, want: []string{"pipeline-pageable.sqlite", "table CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: column globalPid is NULL in 13 rows (the first: rowid 1)"}},
		{group: lists, name: "audit --rates a run folder whose run.json says the run failed (once its results were taken)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				run := t.TempDir()
				copyShipped(t, run, "pinned.results.json")
				info := string(readFile(t, "../../testdata/captures/h200-run/run.json"))
				writeFile(t, filepath.Join(run, "run.json"), []byte(strings.Replace(info, `"status": "complete",`, `"status": "failed", "failedStep": "profile",`, 1)))
				return []string{p, "--rates", run, "--nvidia-rule", "off"}
			},
			exit: 2, want: []string{"run.json says the run is failed (at step profile), so its results may be partial or left from an earlier run"}},
		{group: lists, name: "audit graph-whole: the last graph launch's record deleted, its cudaGraphLaunch call kept (once audited as if the graphs ran less)", cmd: "audit",
			make: shippedEdit("graph-whole/graph-whole.sqlite", `DELETE FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE WHERE rowid = 30`),
			exit: 2, want: []string{"graph-whole.sqlite", "30 graph launch calls succeeded, traced whole (--cuda-graph-trace=graph), but the trace holds 29 graph launch records"}},
		{group: lists, name: "report of one capture given twice, once by a link (once two folders of one capture)", cmd: "report",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				link := filepath.Join(dir, "link.sqlite")
				if err := os.Symlink(p, link); err != nil {
					t.Fatal(err)
				}
				return []string{p, link, "-o", filepath.Join(t.TempDir(), "out")}
			},
			exit: 2, want: []string{"report: one capture is given twice, as ", "pinned.sqlite and as ", "link.sqlite: give each capture once"}},
		{group: lists, name: "audit --ranks rank0-v2.sqlite rank1-v2.sqlite: ranks 0 and 1 (once refused as rank 2 given twice)", cmd: "audit",
			make: ranksOf("rank0-v2.sqlite", "rank1-v2.sqlite"),
			exit: 1, want: []string{"rank 0 from ", "rank0-v2.sqlite, rank 1 from ", "rank 0: 100% of its host-device copies are from pageable memory"}},
		{group: lists, name: "audit --ranks rank0-v2.sqlite rank0.sqlite: one rank from two captures", cmd: "audit",
			make: ranksOf("rank0-v2.sqlite", "rank0.sqlite"),
			exit: 2, want: []string{"--ranks: rank 0 is given twice, as ", "rank0-v2.sqlite and as ", `the number right after "rank" in its file's name`}},
	}
}
