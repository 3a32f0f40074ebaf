package main

import (
	"testing"
)

// contradictionCases: records whose own fields contradict each other (a
// copy kind against its memory kinds). Each is made from the shipped
// captures, damaged the way the row says; verify and audit answer alike.
func contradictionCases() []badCase {
	const group = "records that contradict themselves"
	off := []string{"--nvidia-rule", "off"}
	audit := func(mk func(t *testing.T, dir string) []string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string { return append(mk(t, dir), off...) }
	}
	dtod := `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyKind = 8 WHERE ` + asyncCopies
	return []badCase{
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
	}
}
