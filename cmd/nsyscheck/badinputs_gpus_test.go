package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// gpuCases: the lesson's captures whose timed copies or kernels ran on
// more than one GPU, in each format, without the program's own results
// beside them (the trace alone decides); CSV reports that name their GPU
// two ways, or whose copies outrun its link or the largest time.
func gpuCases() []badCase {
	// secondGPU lists a second GPU (an A100, device 1) with a context and
	// a stream of its own, and moves the first timed 1 MiB pageable
	// host-to-device copy (correlation id 135) onto it.
	const secondGPU = `INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO VALUES (21, 0, 1, 22, 1, 2, 0, 0);
		CREATE TEMP TABLE g AS SELECT * FROM TARGET_INFO_GPU;
		UPDATE g SET id = 1, cuDevice = 1, name = 'NVIDIA A100-SXM4-80GB', busLocation = '0000:9a:00.0', uuid = 'GPU-1', pwGpuId = pwGpuId + 1;
		INSERT INTO TARGET_INFO_GPU SELECT * FROM g;
		CREATE TEMP TABLE s AS SELECT * FROM TARGET_INFO_CUDA_STREAM WHERE streamId = 7;
		UPDATE s SET streamId = 20, contextId = 2; INSERT INTO TARGET_INFO_CUDA_STREAM SELECT * FROM s;
		UPDATE s SET streamId = 21, flag = 1; INSERT INTO TARGET_INFO_CUDA_STREAM SELECT * FROM s;`
	// onSecond exports the shipped capture with the second GPU listed and
	// the rows of table that match where moved onto it.
	onSecond := func(table, where string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			p := copyShipped(t, dir, "pinned.sqlite")
			db := openRW(t, p)
			defer db.Close()
			mustExec(t, db, `PRAGMA journal_mode = MEMORY`, `PRAGMA temp_store = MEMORY`, secondGPU,
				`UPDATE `+table+` SET deviceId = 1, contextId = 2, streamId = 20 WHERE `+where)
			recount(t, db)
			mustExec(t, db, `VACUUM`)
			return []string{p}
		}
	}
	// csvRows copies the shipped CSV reports but the summaries named in
	// leave, and rewrites the GPU trace's rows that match row as with.
	csvRows := func(row, with string, leave ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			matches, err := filepath.Glob(filepath.Join(shippedDir, "*.csv"))
			if err != nil || len(matches) == 0 {
				t.Fatalf("no shipped CSV reports: %v", err)
			}
			for _, m := range matches {
				if !slices.Contains(leave, filepath.Base(m)) {
					copyShipped(t, dir, filepath.Base(m))
				}
			}
			p := filepath.Join(dir, "pinned_cuda_gpu_trace.csv")
			re := regexp.MustCompile(row)
			data := readFile(t, p)
			if !re.Match(data) {
				t.Fatalf("%s: no row matches %s", p, row)
			}
			if err := os.WriteFile(p, re.ReplaceAll(data, []byte(with)), 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{dir}
		}
	}
	return []badCase{
		{group: "SQLite export", name: "a second GPU listed, and one timed 1 MiB pageable copy ran on it (no program results beside it)",
			make: onSecond("CUPTI_ACTIVITY_KIND_MEMCPY", "correlationId = 135"),
			exit: 1, notHeld: []string{"1.floor", "1.growth"},
			want: []string{"the h2d sweep's copies ran on 2 GPUs (device 0: 129 copies, device 1: 1 copy, by CUPTI_ACTIVITY_KIND_MEMCPY)"}},
		{group: "SQLite export", name: "a second GPU listed, and the last zero-copy kernel ran on it (no program results beside it)",
			make: onSecond("CUPTI_ACTIVITY_KIND_KERNEL", "correlationId = (SELECT max(correlationId) FROM CUPTI_ACTIVITY_KIND_KERNEL)"),
			exit: 1, notHeld: []string{"3.factor"},
			want: []string{"the timed kernels ran on 2 GPUs (device 0: 19 kernels, device 1: 1 kernel, by CUPTI_ACTIVITY_KIND_KERNEL)"}},
		{group: "CSV reports", name: "one timed 1 MiB pageable copy's row names another GPU, NVIDIA A100 (1) (no program results beside them)",
			make: csvRows(`(?m)^([0-9]+,[0-9]+,135,.*)NVIDIA H200 \(0\)`, "${1}NVIDIA A100 (1)"),
			exit: 1, notHeld: []string{"1.floor", "1.growth"},
			want: []string{"the h2d sweep's copies ran on 2 GPUs (device 0: 129 copies, device 1: 1 copy, by pinned_cuda_gpu_trace.csv)"}},
		{group: "CSV reports", name: "a timed 256 MiB pinned copy at 122 GB/s, over the H200's 63 GB/s link, without the summaries (the GPU once unnamed, so held at the fastest link there is)",
			make: csvRows(`(?m)^1006851927,4848089,`, "1006851927,2200000,", "pinned_cuda_gpu_mem_time_sum.csv", "pinned_cuda_gpu_mem_size_sum.csv"),
			exit: 2, want: []string{"pinned_cuda_gpu_trace.csv: data row 3 (memory copy HtoD): 268435456 bytes in 2200000 ns: impossible: 122 GB/s over a link of 63.02 GB/s (PCIe 5.0 x16 of the NVIDIA H200"}},
		{group: "CSV reports", name: "one row names device 0 as an NVIDIA A100, the others as the NVIDIA H200", cmd: "audit",
			make: csvRows(`(?m)^([0-9]+,[0-9]+,135,.*)NVIDIA H200 \(0\)`, "${1}NVIDIA A100 (0)"),
			exit: 2, want: []string{`pinned_cuda_gpu_trace.csv: data row 8, column "Device": data row 1 names device 0 "NVIDIA H200", this row another GPU: "NVIDIA A100 (0)"`}},
		{group: "CSV reports", name: "cuda_gpu_trace: a copy's start and duration each near the largest time, their sum past it (once named as ending before it starts, at -1616 ns)",
			make: csvRows(`(?m)^1343085254,21824,`, "9223372036854775000,9223372036854775000,"),
			exit: 2, want: []string{`pinned_cuda_gpu_trace.csv: data row 8, column "Duration (ns)": start + duration overflows: "9223372036854775000"`}},
		{group: "CSV reports", name: "cuda_api_trace: a cudaMemcpy call's row again as its last row (the message once named no file)",
			make: csvEdit(func(s string) string {
				for _, l := range strings.Split(s, "\n") {
					if strings.Contains(l, ",cudaMemcpy,0,135,") {
						return s + l + "\n"
					}
				}
				return s
			}),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv: data row 475 (CUDA API call cudaMemcpy): another API call of process 22 has the same correlation id"}},
		{group: "SQLite export", name: "the results JSON beside it names another GPU, an NVIDIA GH200 (once taken as the program's numbers of this capture)",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				r := copyShipped(t, dir, "pinned.results.json")
				writeFile(t, r, []byte(strings.Replace(string(readFile(t, r)), `"gpu": "NVIDIA H200"`, `"gpu": "NVIDIA GH200 480GB"`, 1)))
				return []string{p}
			},
			exit: 0, want: []string{"pinned.results.json, beside the capture, was set aside: it is not this program's output (it was run on NVIDIA GH200 480GB, where the capture ran on NVIDIA H200)"}},
		{group: "ranks of one job", name: "audit --ranks: two folders of CSV reports, one rank's reports copied as another's (CSV reports name no session start; once two ranks)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				matches, err := filepath.Glob(filepath.Join(shippedDir, "*.csv"))
				if err != nil || len(matches) == 0 {
					t.Fatalf("no shipped CSV reports: %v", err)
				}
				var args []string
				for _, rank := range []string{"report.0", "report.1"} {
					out := filepath.Join(dir, rank)
					if err := os.MkdirAll(out, 0o755); err != nil {
						t.Fatal(err)
					}
					for _, m := range matches {
						writeFile(t, filepath.Join(out, rank+strings.TrimPrefix(filepath.Base(m), "pinned")), readFile(t, m))
					}
					args = append(args, out)
				}
				return append([]string{"--ranks"}, args...)
			},
			exit: 2, want: []string{"--ranks: ranks 0 and 1 are one capture", "hold the same API trace, byte for byte"}},
	}
}
