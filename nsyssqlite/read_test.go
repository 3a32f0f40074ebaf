package nsyssqlite

import "testing"

func TestStripAPIVersion(t *testing.T) {
	for in, want := range map[string]string{
		"cudaMemcpy_v3020":       "cudaMemcpy",
		"cudaLaunchKernel_v7000": "cudaLaunchKernel",
		"cuKernelGetName":        "cuKernelGetName",
		"cudaMemcpy_ptds_v7000":  "cudaMemcpy_ptds",
		"cudaFoo_v":              "cudaFoo_v",
		"cudaFoo_vx1":            "cudaFoo_vx1",
		"_v12":                   "_v12",
		"cudaMemcpy":             "cudaMemcpy",
		"cuMemcpy_v2":            "cuMemcpy",
		"foo_v":                  "foo_v",
		"a_vx1":                  "a_vx1",
	} {
		if got := StripAPIVersion(in); got != want {
			t.Errorf("StripAPIVersion(%q) = %q, want %q", in, got, want)
		}
	}
}
