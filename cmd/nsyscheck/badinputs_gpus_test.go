package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// gpuCases: the lesson's captures whose timed copies ran on more than one
// GPU, in each format, without the program's own results beside them (the
// trace alone decides).
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
		UPDATE s SET streamId = 21, flag = 1; INSERT INTO TARGET_INFO_CUDA_STREAM SELECT * FROM s;
		UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET deviceId = 1, contextId = 2, streamId = 20 WHERE correlationId = 135`
	return []badCase{
		{group: "SQLite export", name: "a second GPU listed, and one timed 1 MiB pageable copy ran on it (no program results beside it)",
			make: func(t *testing.T, dir string) []string {
				p := copyShipped(t, dir, "pinned.sqlite")
				db := openRW(t, p)
				defer db.Close()
				mustExec(t, db, `PRAGMA journal_mode = MEMORY`, `PRAGMA temp_store = MEMORY`, secondGPU)
				recount(t, db)
				mustExec(t, db, `VACUUM`)
				return []string{p}
			},
			exit: 1, notHeld: []string{"1.floor", "1.growth"},
			want: []string{"the h2d sweep's copies ran on 2 GPUs (device 0: 129 copies, device 1: 1 copy, by CUPTI_ACTIVITY_KIND_MEMCPY)"}},
		{group: "CSV reports", name: "one timed 1 MiB pageable copy's row names another GPU, NVIDIA A100 (1) (no program results beside them)",
			make: func(t *testing.T, dir string) []string {
				matches, err := filepath.Glob(filepath.Join(shippedDir, "*.csv"))
				if err != nil || len(matches) == 0 {
					t.Fatalf("no shipped CSV reports: %v", err)
				}
				for _, m := range matches {
					copyShipped(t, dir, filepath.Base(m))
				}
				p := filepath.Join(dir, "pinned_cuda_gpu_trace.csv")
				row := regexp.MustCompile(`(?m)^([0-9]+,[0-9]+,135,.*)NVIDIA H200 \(0\)`)
				data := readFile(t, p)
				if !row.Match(data) {
					t.Fatalf("%s: no copy of correlation id 135", p)
				}
				if err := os.WriteFile(p, row.ReplaceAll(data, []byte("${1}NVIDIA A100 (1)")), 0o644); err != nil {
					t.Fatal(err)
				}
				return []string{dir}
			},
			exit: 1, notHeld: []string{"1.floor", "1.growth"},
			want: []string{"the h2d sweep's copies ran on 2 GPUs (device 0: 129 copies, device 1: 1 copy, by pinned_cuda_gpu_trace.csv)"}},
	}
}
