package check

import (
	"errors"
	"fmt"
	"github.com/nsyscheck/nsyscheck/diag"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/runner"
)

// Diagnostic codes of a run on a shared GPU.
const (
	CodeSharedGPU diag.Code = "shared-gpu"
	CodeTraceLost diag.Code = "trace-lost"
)

// attachSharing warns, beside the verdicts, that the run's GPU had other
// work on it around the profile (from run.json's sharing record).
func attachSharing(r *predictions.Result, info *runner.Info) {
	if info == nil || !info.SharedGPU() {
		return
	}
	gpu := "the GPU"
	if info.GPU != nil {
		gpu = fmt.Sprintf("GPU %d", info.GPU.Index)
	}
	addDiag(r, CodeSharedGPU, diag.Warning, fmt.Sprintf(
		"%s was shared: %s; bandwidth and timing verdicts were measured beside that work and may be disturbed (run again on an idle GPU to trust them)",
		gpu, strings.TrimPrefix(info.Sharing.Summary, "other work shared the GPU: ")))
}

// lostTraceFallback handles an export that holds no CUDA API trace at all
// in a run folder whose program ran to the end (its results JSON is there)
// and whose nsys traced CUDA (info says so; nil reads the folder's
// run.json): it loads the program's own numbers instead and says what was
// lost. Otherwise it returns nil, and err stands.
func lostTraceFallback(path string, err error, info *runner.Info) (*capture.Capture, string) {
	var ie *capture.InputError
	if !errors.As(err, &ie) || ie.Problem != capture.ProblemNoAPITrace {
		return nil, ""
	}
	dir := folderOf(path)
	if info == nil {
		info = readRunInfo(dir)
	}
	if info == nil || !info.TracedCUDA() {
		return nil, ""
	}
	prog, perr := capture.Load(filepath.Join(dir, runner.ResultsFile), capture.Options{})
	if perr != nil {
		return nil, ""
	}
	return prog, "the export holds no CUDA API trace at all (no " + ie.Where + ")"
}

// attachLostTrace adds the trace-lost diagnostic to the verdicts of a run
// folder whose trace lost calls the program made: lost names a trace lost
// altogether (the export had none); "" compares the capture's calls with
// the program's. It returns what was lost, "" when nothing was.
func attachLostTrace(r *predictions.Result, c *capture.Capture, info *runner.Info, lost string) string {
	if info == nil {
		return lost
	}
	if lost == "" && info.TracedCUDA() {
		lost = traceShortfall(c)
	}
	if lost != "" {
		attachTraceLost(r, lost, info.SharedGPU())
	}
	return lost
}

// traceShortfall compares the calls in a capture's API trace with what the
// program says it timed, and describes an empty or truncated trace; ""
// when the trace holds at least as many calls as the program timed.
func traceShortfall(c *capture.Capture) string {
	if c.Program == nil || !c.Has(capture.FactAPITrace) {
		return ""
	}
	calls := map[string]int{}
	for _, call := range c.Calls {
		calls[call.Name]++
	}
	for _, o := range c.OtherThreads {
		calls["cudaMemcpyAsync"] += o.MemcpyAsync
		calls["cudaMemcpy"] += o.Memcpy
	}
	if len(c.Calls) == 0 {
		return "the API trace holds no CUDA calls"
	}
	timed := map[string]int{}
	for _, t := range c.Program.Copies {
		timed["cudaMemcpy"] += t.Runs
	}
	for _, t := range c.Program.Async {
		timed["cudaMemcpyAsync"] += t.Runs
	}
	for _, t := range c.Program.Kernels {
		timed["cudaLaunchKernel"] += t.Runs
	}
	var short []string
	for _, name := range []string{"cudaMemcpy", "cudaMemcpyAsync", "cudaLaunchKernel"} {
		if timed[name] > 0 && calls[name] < timed[name] {
			short = append(short, fmt.Sprintf("%d %s calls where the program timed %d", calls[name], name, timed[name]))
		}
	}
	if len(short) == 0 {
		return ""
	}
	return "the API trace is truncated: it holds " + strings.Join(short, ", ")
}

// attachTraceLost explains a lost or truncated trace of a program that ran
// to the end, and names the claims that then rest on the program's own
// numbers only.
func attachTraceLost(r *predictions.Result, what string, shared bool) {
	var own, none []string
	for _, c := range r.Claims {
		switch {
		case c.Verdict == predictions.Unavailable:
			none = append(none, c.ID)
		case c.From == predictions.SourceProgram:
			own = append(own, c.ID)
		}
	}
	msg := what + ", although the program ran to the end and wrote its own results; nsys traced with -t " + runner.ProfileTrace + ", " +
		"so the flags are not the cause: another profiler or CUPTI client (a second nsys or Nsight session, DCGM profiling metrics) " +
		"was probably attached at the same time and took the trace"
	if shared {
		msg += " (other work was seen on the GPU: see shared-gpu)"
	}
	if len(own) > 0 {
		msg += "; verdicts resting on the program's own numbers only: " + strings.Join(own, ", ")
	}
	if len(none) > 0 {
		msg += "; unavailable without the trace: " + strings.Join(none, ", ")
	}
	msg += "; run again when no other profiler is active"
	addDiag(r, CodeTraceLost, diag.Warning, msg)
}
