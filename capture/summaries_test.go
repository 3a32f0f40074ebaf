package capture

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
)

// A summary report of the shipped CSV folder that lists a name twice, is
// cut short inside its last row, or holds its header and no row, is
// refused naming the file and the line, whichever summary it is: nsys
// writes one row of each name (an API twice only beside its call stacks'
// records, which cuda_api_trace tells apart), ends every line, and writes
// an empty file where it has nothing to report. The shipped folders read,
// those of call stacks with their APIs on two rows among them.
func TestDamagedSummariesRefused(t *testing.T) {
	shipped := filepath.Join("..", "testdata", "captures", "h200-pinned")
	for _, dir := range []string{shipped, "../testdata/captures/pipeline-backtrace", "../testdata/captures/h200-pinned-nonvtx"} {
		if _, err := LoadCSVDir(dir, Options{}); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
	}
	copyEdited := func(t *testing.T, report string, edit func(lines []string) []string) (dir, path string) {
		dir = t.TempDir()
		m, _ := filepath.Glob(filepath.Join(shipped, "*.csv"))
		for _, p := range m {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(p) == "pinned_"+report+".csv" {
				b = []byte(strings.Join(edit(strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")), ""))
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir, filepath.Join(dir, "pinned_"+report+".csv")
	}
	// The lines come without the last one's newline.
	twice := func(lines []string) []string { return append(lines, "\n", lines[1]) }
	inLastField := func(lines []string) []string { // cut 3 bytes into the last row's last field
		last := lines[len(lines)-1]
		return append(lines[:len(lines)-1], last[:len(last)-3])
	}
	midRow := func(lines []string) []string { // cut in the middle of the last row
		last := lines[len(lines)-1]
		return append(lines[:len(lines)-1], last[:len(last)/2])
	}
	headerOnly := func(lines []string) []string { return []string{lines[0]} }
	cases := []struct {
		report string
		edit   func([]string) []string
		where  string
		want   string
	}{
		{"cuda_api_sum", twice, "lines 2 and 21", `"cudaMemcpy" is listed twice, and cuda_api_trace's calls account for neither row alone`},
		{"cuda_api_sum", inLastField, "line 20", "the last line ends without its newline, where nsys ends every line: the file is cut short"},
		{"cuda_api_sum", midRow, "data row 19 (line 20)", "malformed CSV"},
		{"cuda_api_sum", headerOnly, "line 2", "the report has its header and no row, which nsys never writes"},
		{"nvtx_sum", twice, "lines 2 and 11", `":h2d-pageable", "PushPop" is listed twice, where nsys writes one row of each`},
		{"nvtx_sum", inLastField, "line 10", "the file is cut short"},
		{"nvtx_sum", headerOnly, "line 2", "so what it sums is unknown, not none"},
		{"cuda_gpu_mem_time_sum", twice, "lines 2 and 6", `"[CUDA memcpy Host-to-Device]" is listed twice`},
		{"cuda_gpu_mem_time_sum", inLastField, "line 5", "the file is cut short"},
		{"cuda_gpu_mem_time_sum", headerOnly, "line 2", "the report has its header and no row"},
		{"cuda_gpu_mem_size_sum", twice, "lines 2 and 6", `"[CUDA memcpy Host-to-Device]" is listed twice`},
		{"cuda_gpu_mem_size_sum", inLastField, "line 5", "the file is cut short"},
		{"cuda_gpu_mem_size_sum", headerOnly, "line 2", "the report has its header and no row"},
	}
	for _, tc := range cases {
		t.Run(tc.report+"/"+tc.where, func(t *testing.T) {
			dir, path := copyEdited(t, tc.report, tc.edit)
			_, err := LoadCSVDir(dir, Options{})
			var ie *inputerr.Error
			if !errors.As(err, &ie) || ie.Path != path || ie.Where != tc.where || !strings.Contains(ie.Problem, tc.want) || !strings.Contains(ie.Hint, "--format csv") {
				t.Errorf("got %v, want %s: %s: %q", err, path, tc.where, tc.want)
			}
		})
	}
}

// A per-record report of the shipped CSV folder cut short inside its last
// row's last cell, whose row then still holds every cell, is refused
// naming the file and the row, summaries or not: cuda_api_trace cut into
// its last row's thread name, cuda_gpu_trace into its last copy's name
// (a copy of no known kind, once left out unsaid where no summary counted
// it).
func TestDamagedTracesCutShort(t *testing.T) {
	shipped := filepath.Join("..", "testdata", "captures", "h200-pinned")
	for _, tc := range []struct {
		report, where string
		noSums        bool
	}{
		{"pinned_cuda_api_trace.csv", "data row 474 (the last)", false},
		{"pinned_cuda_gpu_trace.csv", "data row 335 (the last)", true},
		{"pinned_nvtx_pushpop_trace.csv", "data row 9 (the last)", false},
	} {
		t.Run(tc.report, func(t *testing.T) {
			dir := t.TempDir()
			m, _ := filepath.Glob(filepath.Join(shipped, "*.csv"))
			for _, p := range m {
				if tc.noSums && strings.HasSuffix(p, "_sum.csv") {
					continue
				}
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if filepath.Base(p) == tc.report {
					b = b[:len(b)-4] // the newline and 3 bytes of the last cell
				}
				if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := LoadCSVDir(dir, Options{})
			var ie *inputerr.Error
			if !errors.As(err, &ie) || ie.Path != filepath.Join(dir, tc.report) || ie.Where != tc.where || !strings.Contains(ie.Problem, "the last line ends without its newline") {
				t.Errorf("got %v, want %s: %s", err, tc.report, tc.where)
			}
		})
	}
}
