package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/runner"
)

// Diagnostic codes of a run on a shared GPU.
const (
	codeSharedGPU = "shared-gpu"
	codeTraceLost = "trace-lost"
)

// attachSharing warns, beside the verdicts, that the run's GPU had other
// work on it around the profile (from run.json's sharing record).
func attachSharing(r *predictions.Result, info runner.Info) {
	if info.Sharing == nil || !info.Sharing.Foreign {
		return
	}
	gpu := "the GPU"
	if info.GPU != nil {
		gpu = fmt.Sprintf("GPU %d", info.GPU.Index)
	}
	addDiag(r, codeSharedGPU, predictions.Warning, fmt.Sprintf(
		"%s was shared: %s; bandwidth and timing verdicts were measured beside that work and may be disturbed (run again on an idle GPU to trust them)",
		gpu, strings.TrimPrefix(info.Sharing.Summary, "other work shared the GPU: ")))
}

// noRuntimeTable is the loader's problem for an export without the CUDA
// API trace table.
const noRuntimeTable = "no CUDA API trace in this export"

// loadRunExport loads a run's compacted export. When the export holds no
// CUDA API trace at all although the program ran to the end (its results
// JSON is there), it loads the program's own numbers instead and returns
// what was lost; every other failure is returned as it is.
func loadRunExport(run *runner.Run) (*capture.Capture, string, error) {
	opts := capture.Options{APINames: predictions.Names(), ProgramThread: true}
	c, err := capture.Load(run.Path(runner.Base+".sqlite"), opts)
	if err == nil {
		return c, "", nil
	}
	var ie *capture.InputError
	if !errors.As(err, &ie) || ie.Problem != noRuntimeTable {
		return nil, "", err
	}
	prog, perr := capture.Load(run.Path(runner.ResultsFile), capture.Options{})
	if perr != nil {
		// The program did not leave its numbers: the capture's own error
		// says more than the fallback's.
		return nil, "", err
	}
	return prog, "the export holds no CUDA API trace at all (no " + ie.Where + ")", nil
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
	msg := what + ", although the program ran to the end and wrote its own results; nsys traced with -t cuda,nvtx, " +
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
	addDiag(r, codeTraceLost, predictions.Warning, msg)
}
