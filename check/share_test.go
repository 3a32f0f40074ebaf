package check

import (
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
)

func callsOf(name string, n int) []capture.APICall {
	calls := make([]capture.APICall, n)
	for i := range calls {
		calls[i] = capture.APICall{Name: name, PID: 1, TID: 1}
	}
	return calls
}

// A trace holding fewer calls than the program timed is truncated; one
// holding at least as many is not; without the program's numbers nothing
// can be said.
func TestTraceShortfall(t *testing.T) {
	prog := &capture.Measurements{
		Copies:  []capture.CopyTiming{{Runs: 10}, {Runs: 10}},
		Async:   []capture.AsyncTiming{{Source: "pageable", Runs: 10}, {Source: "pinned", Runs: 10}},
		Kernels: []capture.KernelTiming{{Runs: 10}, {Runs: 10}},
	}
	full := append(append(callsOf("cudaMemcpy", 26), callsOf("cudaMemcpyAsync", 22)...), callsOf("cudaLaunchKernel", 22)...)
	if got := traceShortfall(&capture.Capture{Program: prog, Calls: full}); got != "" {
		t.Errorf("a full trace: %q", got)
	}
	cut := append(callsOf("cudaMemcpy", 26), callsOf("cudaMemcpyAsync", 5)...)
	got := traceShortfall(&capture.Capture{Program: prog, Calls: cut})
	for _, want := range []string{"truncated", "5 cudaMemcpyAsync calls where the program timed 20", "0 cudaLaunchKernel calls where the program timed 20"} {
		if !strings.Contains(got, want) {
			t.Errorf("truncated trace: %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "cudaMemcpy calls") {
		t.Errorf("cudaMemcpy reported short: %q", got)
	}
	// The calls another thread made count too.
	other := &capture.Capture{Program: prog, Calls: append(callsOf("cudaMemcpy", 26), callsOf("cudaLaunchKernel", 20)...),
		OtherThreads: []capture.ThreadCount{{PID: 1, TID: 2, MemcpyAsync: 20}}}
	if got := traceShortfall(other); got != "" {
		t.Errorf("calls on another thread: %q", got)
	}
	if got := traceShortfall(&capture.Capture{Program: prog}); got != "the API trace holds no CUDA calls" {
		t.Errorf("empty trace: %q", got)
	}
	if got := traceShortfall(&capture.Capture{Calls: cut}); got != "" {
		t.Errorf("no program numbers: %q", got)
	}
	noTrace := &capture.Capture{Program: prog, Missing: []capture.Gap{{Fact: capture.FactAPITrace, Reason: "CSV without trace"}}}
	if got := traceShortfall(noTrace); got != "" {
		t.Errorf("an input without an API trace: %q", got)
	}
}
