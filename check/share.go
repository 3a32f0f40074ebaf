package check

import (
	"errors"
	"path/filepath"

	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/runinfo"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/predictions"
)

// attachSharing warns, beside the verdicts, that the run's GPU had other
// work on it around the profile (from run.json's sharing record).
func attachSharing(r *predictions.Result, info *runinfo.Info) {
	if info == nil || !info.SharedGPU() {
		return
	}
	d := diag.SharedGPU{GPU: -1, Seen: info.Sharing.Seen()}
	if info.GPU != nil {
		d.GPU = info.GPU.Index
	}
	addDiag(r, diag.Warning, d)
}

// lostTraceFallback handles an export that holds no CUDA API trace at all
// in a run folder whose program ran to the end (its results JSON is there)
// and whose nsys traced CUDA (info says so; nil reads the folder's
// run.json): it loads the program's own numbers instead and says what was
// lost. Otherwise it returns nil, and err stands.
func lostTraceFallback(path string, err error, info *runinfo.Info) (*capture.Capture, *diag.TraceLoss) {
	var ie *inputerr.Error
	if !errors.As(err, &ie) || ie.Problem != inputerr.ProblemNoAPITrace {
		return nil, nil
	}
	dir := folderOf(path)
	if info == nil {
		// A run.json that cannot be read is no run known to have traced
		// CUDA: the error stands, as where there is none.
		info, _ = runinfo.ReadStrict(dir)
	}
	if info == nil || !info.TracedCUDA() {
		return nil, nil
	}
	prog, perr := capture.Load(filepath.Join(dir, runinfo.ResultsFile), capture.Options{})
	if perr != nil {
		return nil, nil
	}
	return prog, &diag.TraceLoss{NoTrace: true, Lacks: ie.Where}
}

// attachLostTrace adds the trace-lost diagnostic to the verdicts of a run
// folder whose trace lost calls the program made: lost names a trace lost
// altogether (the export had none); nil compares the capture's calls with
// the program's. It returns what was lost, nil when nothing was.
func attachLostTrace(r *predictions.Result, c *capture.Capture, info *runinfo.Info, lost *diag.TraceLoss) *diag.TraceLoss {
	if info == nil {
		return lost
	}
	if lost == nil && info.TracedCUDA() {
		lost = traceShortfall(c)
	}
	if lost != nil {
		attachTraceLost(r, *lost, info.SharedGPU())
	}
	return lost
}

// traceShortfall compares the calls in a capture's API trace with what the
// program says it timed: an empty or truncated trace, nil when the trace
// holds at least as many calls as the program timed.
func traceShortfall(c *capture.Capture) *diag.TraceLoss {
	if c.Program == nil || !c.Has(records.FactAPITrace) {
		return nil
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
		return &diag.TraceLoss{NoCalls: true}
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
	var short []diag.CallShortfall
	for _, name := range []string{"cudaMemcpy", "cudaMemcpyAsync", "cudaLaunchKernel"} {
		if timed[name] > 0 && calls[name] < timed[name] {
			short = append(short, diag.CallShortfall{API: name, Held: calls[name], Timed: timed[name]})
		}
	}
	if len(short) == 0 {
		return nil
	}
	return &diag.TraceLoss{Short: short}
}

// attachTraceLost explains a lost or truncated trace of a program that ran
// to the end, and names the claims that then rest on the program's own
// numbers only.
func attachTraceLost(r *predictions.Result, lost diag.TraceLoss, shared bool) {
	d := diag.TraceLost{Loss: lost, Trace: runinfo.ProfileTrace, Shared: shared}
	for _, c := range r.Claims {
		switch {
		case c.Verdict == predictions.Unavailable:
			d.None = append(d.None, c.ID)
		case c.From == predictions.SourceProgram:
			d.Own = append(d.Own, c.ID)
		}
	}
	addDiag(r, diag.Warning, d)
}
