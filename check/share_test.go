package check

import (
	"github.com/nsyscheck/nsyscheck/diag"
	"os"
	"path/filepath"
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

// A real run folder whose export holds no CUDA API trace table although
// nsys traced CUDA (run.json says so): Paths evaluates the program's own
// numbers, says what was lost and which verdicts rest on the program only.
// The same export without its run folder stays an error advising the flags.
func TestPathsTraceLost(t *testing.T) {
	ks, err := Paths([]string{"../testdata/trace-lost/no-trace"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := ks[0]
	if want := "the export holds no CUDA API trace at all (no table CUPTI_ACTIVITY_KIND_RUNTIME)"; k.TraceLost != want {
		t.Errorf("TraceLost = %q, want %q", k.TraceLost, want)
	}
	d, ok := codes(k.Result)[CodeTraceLost]
	if !ok || d.Level != diag.Warning {
		t.Fatalf("no trace-lost warning: %v", k.Result.Diagnostics)
	}
	for _, want := range []string{
		"verdicts resting on the program's own numbers only: 1.floor, 1.growth, 2.pageable, 2.pinned, 3.factor",
		"unavailable without the trace: 4.calltime, 4.bytes",
	} {
		if !strings.Contains(noteText(d), want) {
			t.Errorf("trace-lost %q lacks %q", noteText(d), want)
		}
	}

	// An empty API trace is found by Enrich, from the run's facts.
	ks, err = Paths([]string{"../testdata/trace-lost/empty-trace/pinned.sqlite"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ks[0].TraceLost != "the API trace holds no CUDA calls" {
		t.Errorf("empty trace: TraceLost = %q", ks[0].TraceLost)
	}

	plain := filepath.Join(t.TempDir(), "pinned.sqlite")
	data, err := os.ReadFile("../testdata/trace-lost/no-trace/pinned.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Paths([]string{plain}, Options{}); err == nil || !strings.Contains(err.Error(), "profile with nsys profile -t cuda,nvtx") {
		t.Errorf("export without its run folder: %v", err)
	}
	// A complete run folder loses nothing.
	ks, err = Paths([]string{"../testdata/captures/h200-run"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := codes(ks[0].Result)[CodeTraceLost]; ok || ks[0].TraceLost != "" {
		t.Errorf("complete run: %q, %v", ks[0].TraceLost, ks[0].Result.Diagnostics)
	}
}

// A run beside a foreign load warns with what run.json recorded of it.
func TestEnrichSharedGPU(t *testing.T) {
	ks, err := Paths([]string{"../testdata/fleet/h200-shared", "../testdata/fleet/h200-queued"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, ok := codes(ks[0].Result)[CodeSharedGPU]
	if !ok || !strings.HasPrefix(noteText(d), "GPU 0 was shared: before profiling: 1 compute process(es) (python3 pid 1549, 866 MiB), utilisation up to 100%") {
		t.Errorf("shared run: %v", ks[0].Result.Diagnostics)
	}
	if _, ok := codes(ks[1].Result)[CodeSharedGPU]; ok {
		t.Errorf("queued run, alone on the GPU, warned: %v", ks[1].Result.Diagnostics)
	}
}
