package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// summaryCases: summary reports (cuda_api_sum, nvtx_sum,
// cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum) that list a name twice,
// are cut short inside their last row, or hold their header alone, which
// nsys never writes (a report with nothing to say is an empty file). Each
// is made from the shipped CSV reports; verify and audit answer alike.
func summaryCases() []badCase {
	const group = "CSV summaries damaged"
	off := []string{"--nvidia-rule", "off"}
	audit := func(mk func(t *testing.T, dir string) []string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string { return append(mk(t, dir), off...) }
	}
	firstRowTwice := func(s string) string {
		lines := strings.SplitAfter(s, "\n")
		return s + lines[1]
	}
	inLastField := func(s string) string { return strings.TrimSuffix(s, "\n")[:len(s)-4] }
	headerOnly := func(s string) string { return strings.SplitAfter(s, "\n")[0] }
	// without drops the summary's row of the name.
	without := func(name string) func(string) string {
		return func(s string) string {
			var keep []string
			for _, l := range strings.SplitAfter(s, "\n") {
				if !strings.HasSuffix(strings.TrimSpace(l), ","+name) {
					keep = append(keep, l)
				}
			}
			return strings.Join(keep, "")
		}
	}
	return []badCase{
		{group: group, name: "cuda_api_sum without its cudaMalloc row (once held: a name the summary lacks went unseen)",
			make: summaryRewrite("pinned_cuda_api_sum.csv", without("cudaMalloc")),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv: it holds 2 cudaMalloc calls where pinned_cuda_api_sum.csv lists none"}},
		{group: group, name: "audit: cuda_gpu_mem_time_sum without its device-to-host row", cmd: "audit",
			make: audit(summaryRewrite("pinned_cuda_gpu_mem_time_sum.csv", without("[CUDA memcpy Device-to-Host]"))),
			exit: 2, want: []string{"pinned_cuda_gpu_trace.csv: it holds 136 DtoH copies where pinned_cuda_gpu_mem_time_sum.csv lists none"}},
		{group: group, name: "cuda_api_sum listing cudaMemcpy twice, its row again at the end (once held)",
			make: summaryRewrite("pinned_cuda_api_sum.csv", firstRowTwice),
			exit: 2, want: []string{"pinned_cuda_api_sum.csv: lines 2 and 21", `"cudaMemcpy" is listed twice`},
			notHeld: []string{"4", "4.calltime"}},
		{group: group, name: "audit: cuda_gpu_mem_size_sum listing its host-to-device copies twice", cmd: "audit",
			make: audit(summaryRewrite("pinned_cuda_gpu_mem_size_sum.csv", firstRowTwice)),
			exit: 2, want: []string{"pinned_cuda_gpu_mem_size_sum.csv: lines 2 and 6", `"[CUDA memcpy Host-to-Device]" is listed twice`}},
		{group: group, name: "cuda_api_sum cut short 3 bytes into its last row's name (once held)",
			make: summaryRewrite("pinned_cuda_api_sum.csv", inLastField),
			exit: 2, want: []string{"pinned_cuda_api_sum.csv: line 20", "the last line ends without its newline", "the file is cut short"},
			notHeld: []string{"4", "4.calltime"}},
		{group: group, name: "audit: cuda_gpu_mem_time_sum cut short inside its last row's name", cmd: "audit",
			make: audit(summaryRewrite("pinned_cuda_gpu_mem_time_sum.csv", inLastField)),
			exit: 2, want: []string{"pinned_cuda_gpu_mem_time_sum.csv: line 5", "the file is cut short"}},
		{group: group, name: "nvtx_sum of its header alone (once held, the ranges' summary read as none)",
			make: summaryRewrite("pinned_nvtx_sum.csv", headerOnly),
			exit: 2, want: []string{"pinned_nvtx_sum.csv: line 2", "the report has its header and no row, which nsys never writes"},
			notHeld: []string{"1", "2", "3", "4"}},
		{group: group, name: "audit: cuda_api_sum of its header alone", cmd: "audit",
			make: audit(summaryRewrite("pinned_cuda_api_sum.csv", headerOnly)),
			exit: 2, want: []string{"pinned_cuda_api_sum.csv: line 2", "so what it sums is unknown, not none"}},
	}
}

// summaryRewrite copies the shipped CSV reports and results JSON into dir
// and rewrites the summary report named with edit.
func summaryRewrite(report string, edit func(string) string) func(t *testing.T, dir string) []string {
	return func(t *testing.T, dir string) []string {
		t.Helper()
		args := csvEdit(func(s string) string { return s })(t, dir)
		p := filepath.Join(dir, report)
		writeFile(t, p, []byte(edit(string(readFile(t, p)))))
		return args
	}
}

// cutCases: per-record reports cut short inside their last row's last
// cell, the row still whole in its cells.
func cutCases() []badCase {
	const group = "CSV traces cut short"
	return []badCase{
		{group: group, name: "cuda_api_trace cut 3 bytes into its last row's thread name (once held)",
			make: csvEdit(func(s string) string { return s[:len(s)-4] }),
			exit: 2, want: []string{"pinned_cuda_api_trace.csv: data row 474 (the last): the last line ends without its newline"},
			notHeld: []string{"4", "4.calltime"}},
		{group: group, name: "audit: cuda_gpu_trace cut into its last copy's name, the summaries gone (once audited, the copy left out unsaid)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				auditCSV(t, dir)
				for _, r := range []string{"cuda_api_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "nvtx_sum"} {
					if err := os.Remove(filepath.Join(dir, "pinned_"+r+".csv")); err != nil {
						t.Fatal(err)
					}
				}
				p := filepath.Join(dir, "pinned_cuda_gpu_trace.csv")
				b := readFile(t, p)
				writeFile(t, p, b[:len(b)-4])
				return []string{dir, "--nvidia-rule", "off"}
			},
			exit: 2, want: []string{"pinned_cuda_gpu_trace.csv: data row 335 (the last): the last line ends without its newline"}},
	}
}
