package check

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/program"
	"github.com/nsyscheck/nsyscheck/records"

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
	prog := &program.Measurements{
		Copies:  []program.CopyTiming{{Runs: 10}, {Runs: 10}},
		Async:   []program.AsyncTiming{{Source: "pageable", Runs: 10}, {Source: "pinned", Runs: 10}},
		Kernels: []program.KernelTiming{{Runs: 10}, {Runs: 10}},
	}
	full := append(append(callsOf("cudaMemcpy", 26), callsOf("cudaMemcpyAsync", 22)...), callsOf("cudaLaunchKernel", 22)...)
	if got := traceShortfall(&capture.Capture{Program: prog, Calls: full}); got != nil {
		t.Errorf("a full trace: %+v", got)
	}
	cut := append(callsOf("cudaMemcpy", 26), callsOf("cudaMemcpyAsync", 5)...)
	got := traceShortfall(&capture.Capture{Program: prog, Calls: cut})
	want := &diag.TraceLoss{Short: []diag.CallShortfall{{API: "cudaMemcpyAsync", Held: 5, Timed: 20}, {API: "cudaLaunchKernel", Held: 0, Timed: 20}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("truncated trace: %+v, want %+v (cudaMemcpy is not short)", got, want)
	}
	// The calls another thread made count too.
	other := &capture.Capture{Program: prog, Calls: append(callsOf("cudaMemcpy", 26), callsOf("cudaLaunchKernel", 20)...),
		OtherThreads: []records.ThreadCount{{PID: 1, TID: 2, MemcpyAsync: 20}}}
	if got := traceShortfall(other); got != nil {
		t.Errorf("calls on another thread: %+v", got)
	}
	if got := traceShortfall(&capture.Capture{Program: prog}); got == nil || !got.NoCalls {
		t.Errorf("empty trace: %+v", got)
	}
	if got := traceShortfall(&capture.Capture{Calls: cut}); got != nil {
		t.Errorf("no program numbers: %+v", got)
	}
	noTrace := &capture.Capture{Program: prog, Missing: []records.Gap{{Fact: records.FactAPITrace, Reason: "CSV without trace"}}}
	if got := traceShortfall(noTrace); got != nil {
		t.Errorf("an input without an API trace: %+v", got)
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
	if want := (diag.TraceLoss{NoTrace: true, Lacks: "table CUPTI_ACTIVITY_KIND_RUNTIME"}); k.TraceLost == nil || !reflect.DeepEqual(*k.TraceLost, want) {
		t.Errorf("TraceLost = %+v, want %+v", k.TraceLost, want)
	}
	d, ok := codes(k.Result)[diag.CodeTraceLost]
	if !ok || d.Level != diag.Warning {
		t.Fatalf("no trace-lost warning: %v", k.Result.Diagnostics)
	}
	lost, _ := d.Detail.(diag.TraceLost)
	if own, none := strings.Join(lost.Own, ", "), strings.Join(lost.None, ", "); own != "1.floor, 1.growth, 2.pageable, 2.pinned, 3.factor" || none != "4.calltime, 4.bytes" {
		t.Errorf("trace-lost resting on the program %q, unavailable %q", own, none)
	}

	// An empty API trace is found by Enrich, from the run's facts.
	ks, err = Paths([]string{"../testdata/trace-lost/empty-trace/pinned.sqlite"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ks[0].TraceLost == nil || !ks[0].TraceLost.NoCalls {
		t.Errorf("empty trace: TraceLost = %+v", ks[0].TraceLost)
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
	if _, ok := codes(ks[0].Result)[diag.CodeTraceLost]; ok || ks[0].TraceLost != nil {
		t.Errorf("complete run: %+v, %v", ks[0].TraceLost, ks[0].Result.Diagnostics)
	}
}

// A run beside a foreign load warns with what run.json recorded of it.
func TestEnrichSharedGPU(t *testing.T) {
	ks, err := Paths([]string{"../testdata/fleet/h200-shared", "../testdata/fleet/h200-queued"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, ok := codes(ks[0].Result)[diag.CodeSharedGPU]
	if s, _ := d.Detail.(diag.SharedGPU); !ok || s.GPU != 0 || !strings.HasPrefix(s.Seen, "before profiling: 1 compute process(es) (python3 pid 1549, 866 MiB), utilisation up to 100%") {
		t.Errorf("shared run: %v", ks[0].Result.Diagnostics)
	}
	if _, ok := codes(ks[1].Result)[diag.CodeSharedGPU]; ok {
		t.Errorf("queued run, alone on the GPU, warned: %v", ks[1].Result.Diagnostics)
	}
}
