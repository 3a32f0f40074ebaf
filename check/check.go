// Package check is the pipeline every command shares: load a capture,
// evaluate the lesson's predictions on it, enrich the result with what the
// capture's folder holds beyond the capture (NVIDIA's cuda_memcpy_async rule
// output, the PCIe link from run.json, the device-resident kernel against
// the device copy bandwidth, other work seen on a run's GPU, a CUDA trace
// another profiler took), and scan the capture for what it exposes of the
// machine. verify, run and report print the one Checked it returns; Fleet
// sets the run folders among them side by side. Audit is the same path for
// `audit`, with the audit of an application's copies in place of the
// lesson's predictions.
package check

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/regular"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/privacy"
	"github.com/nsyscheck/nsyscheck/report"
	"github.com/nsyscheck/nsyscheck/runner"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Diagnostic codes the pipeline adds beside the predictions' own.
const (
	CodeNsysRule   diag.Code = "nsys-analyze"
	CodePCIe       diag.Code = "pcie-link"
	CodeResident   diag.Code = "resident-vs-device-copy"
	CodeScanFailed diag.Code = "capture-scan-failed"
	// CodeInputSubstituted marks a choice the loader made for the user, such
	// as reading the SQLite export beside a report nsys could not export.
	CodeInputSubstituted diag.Code = "input-substituted"
)

// Options configure loading.
type Options struct {
	// Nsys is the nsys executable that exports a .nsys-rep ("" finds it).
	Nsys string
	// Run is the run's facts when the caller holds them in memory (run
	// checking its own export before run.json is final); nil reads the
	// run.json beside the input where Load needs it.
	Run *runner.Info
	// Context, once cancelled (a signal), stops an nsys export: its
	// process group is stopped and its temporary files removed. Nil means
	// never.
	Context context.Context
}

// Checked is one input's final result: the verdicts with every diagnostic
// the pipeline adds, the capture they came from, and the run's facts
// (run.json) where the input is a run folder.
type Checked struct {
	Result  *predictions.Result
	Capture *capture.Capture
	// Run is the run folder's run.json, nil where there is none.
	Run *runner.Info
	// TraceLost says what the capture's CUDA trace lost although nsys
	// traced CUDA and the program ran to the end (e.g. "the API trace holds
	// no CUDA calls"); "" when nothing was lost. The verdicts then carry a
	// trace-lost warning naming those that rest on the program's numbers.
	TraceLost string
}

// Link is the PCIe link of the run's GPU, for the bandwidth plot; zero
// where the input holds no run.json.
func (k *Checked) Link() report.Link {
	if k.Run == nil || k.Run.GPU == nil {
		return report.Link{}
	}
	return LinkOf(k.Run.GPU.PCIe)
}

// LinkOf is the report's view of a PCIe link.
func LinkOf(p runner.PCIe) report.Link {
	return report.Link{RatedGBps: p.RatedGBps, Gen: p.GenMax, Width: p.WidthMax}
}

// LoadOptions are the capture options every command loads with: the API
// calls the predictions read, on the program's thread only.
func LoadOptions(nsys string) capture.Options {
	return capture.Options{APINames: predictions.Names(), ProgramThread: true, Nsys: nsys}
}

// Paths loads, evaluates, enriches and scans every path in turn.
func Paths(paths []string, opts Options) ([]*Checked, error) {
	var out []*Checked
	for _, p := range paths {
		k, err := Load(p, opts)
		if err != nil {
			return nil, err
		}
		k.Enrich(readRunInfo(folderOf(k.Capture.Path)))
		out = append(out, k)
	}
	return out, nil
}

// Load loads one capture and evaluates it; run calls it on its own export
// and Enriches the result once the run's other steps are done. An export
// without any CUDA API trace in a run folder whose nsys traced CUDA and
// whose program ran to the end is not an error: another profiler took the
// trace, so Load evaluates the program's own numbers and sets TraceLost.
// Every credential the capture's strings carry is masked first
// (privacy.MaskCapture), so that no verdict, evidence or report shows one.
func Load(path string, opts Options) (*Checked, error) {
	lo := LoadOptions(opts.Nsys)
	lo.Context = opts.Context
	c, err := capture.Load(path, lo)
	if err != nil {
		prog, lost := lostTraceFallback(path, err, opts.Run)
		if prog == nil {
			return nil, err
		}
		privacy.MaskCapture(prog)
		k := Evaluate(prog)
		k.TraceLost = lost
		return k, nil
	}
	privacy.MaskCapture(c)
	return Evaluate(c), nil
}

// Evaluate evaluates the predictions on a loaded capture. The result is not
// final until Enrich has run.
func Evaluate(c *capture.Capture) *Checked {
	return &Checked{Result: predictions.Evaluate(c), Capture: c}
}

// Enrich adds what the capture's folder holds beyond the capture, the run's
// facts (info, nil where there is no run.json; run passes its own, still in
// memory) and what the capture exposes of the machine.
func (k *Checked) Enrich(info *runner.Info) {
	r, c := k.Result, k.Capture
	k.Run = info
	for _, n := range c.Notes {
		addDiag(r, CodeInputSubstituted, diag.Info, n)
	}
	dir := folderOf(c.Path)
	if m, _ := filepath.Glob(filepath.Join(dir, "*_"+runner.AnalyzeRule+".csv")); len(m) == 1 {
		if flagged, err := runner.ReadAnalyze(m[0]); err != nil {
			addDiag(r, CodeNsysRule, diag.Warning, err.Error())
		} else {
			compareNsysRule(r, c, flagged, filepath.Base(m[0]))
		}
	}
	if info != nil && info.GPU != nil {
		attachPCIe(r, info.GPU.PCIe)
	}
	attachSharing(r, info)
	k.TraceLost = attachLostTrace(r, c, info, k.TraceLost)
	attachResident(r)
	attachExposure(r, c)
}

// Results are the verdicts of each checked input.
func Results(ks []*Checked) []*predictions.Result {
	out := make([]*predictions.Result, len(ks))
	for i, k := range ks {
		out[i] = k.Result
	}
	return out
}

// folderOf is the folder an input lies in (the input itself when it is one).
func folderOf(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return path
	}
	return filepath.Dir(path)
}

// readRunInfo reads run.json in dir; nil where there is none or it cannot
// be read.
func readRunInfo(dir string) *runner.Info {
	data, err := regular.ReadFile(filepath.Join(dir, runner.InfoFile), runner.MaxInfoFile)
	if err != nil {
		return nil
	}
	var info runner.Info
	if json.Unmarshal(data, &info) != nil {
		return nil
	}
	return &info
}

func addDiag(r *predictions.Result, code diag.Code, level diag.Level, msg string) {
	r.Diagnostics = append(r.Diagnostics, diag.Diagnostic{Level: level, Detail: diag.Note{Of: code, Text: msg}})
}

// compareNsysRule sets NVIDIA's rule (which lists async copies whose host side
// is pageable) beside nsyscheck's reading of part 2: the pageable group's
// timed calls must all be flagged and none of the pinned group's.
func compareNsysRule(r *predictions.Result, c *capture.Capture, flagged []runner.FlaggedCopy, file string) {
	var groups *predictions.CallDurations
	for i := range r.AsyncCalls {
		if r.AsyncCalls[i].From == predictions.SourceTrace && len(r.AsyncCalls[i].PageableCorrelationIDs) > 0 {
			groups = &r.AsyncCalls[i]
		}
	}
	if groups == nil {
		addDiag(r, CodeNsysRule, diag.Info, fmt.Sprintf(
			"NVIDIA's %s rule (%s) flags %d copies from pageable memory; the trace gave no part 2 groups to compare them with",
			runner.AnalyzeRule, file, len(flagged)))
		return
	}
	// The rule reports each copy by the start of its GPU copy record; a
	// capture without those records (the CSV reports) cannot be matched.
	if len(c.Memcpys) == 0 {
		addDiag(r, CodeNsysRule, diag.Info, fmt.Sprintf(
			"NVIDIA's %s rule (%s) flags %d copies from pageable memory; this input has no GPU memory-copy records to match them with (verify the SQLite export to compare)",
			runner.AnalyzeRule, file, len(flagged)))
		return
	}
	// The rule reports each copy by its start: match it to a call or its copy.
	byStart := map[int64]int64{}
	for _, call := range c.Calls {
		if call.Name == "cudaMemcpyAsync" {
			byStart[call.Start] = call.CorrelationID
		}
	}
	for _, m := range c.Memcpys {
		if _, ok := byStart[m.Start]; !ok {
			byStart[m.Start] = m.CorrelationID
		}
	}
	flaggedIDs := map[int64]bool{}
	unmatched := 0
	for _, f := range flagged {
		if id, ok := byStart[f.Start]; ok {
			flaggedIDs[id] = true
		} else {
			unmatched++
		}
	}
	count := func(ids []int64) int {
		n := 0
		for _, id := range ids {
			if flaggedIDs[id] {
				n++
			}
		}
		return n
	}
	pg, pn := count(groups.PageableCorrelationIDs), count(groups.PinnedCorrelationIDs)
	other := len(flaggedIDs) - pg - pn
	// Copies the rule flags that match no call loaded (other threads or
	// processes, which nsyscheck does not read) neither confirm nor
	// contradict the reading of part 2: they are only counted.
	agrees := pg == len(groups.PageableCorrelationIDs) && pn == 0
	level, verdict := diag.Info, "agrees with"
	if !agrees {
		level, verdict = diag.Warning, "disagrees with"
	}
	reading := "nsyscheck's reading of part 2 (the pageable group copies from pageable memory, the pinned group does not)"
	if !agrees && pn == len(groups.PinnedCorrelationIDs) && pg == len(groups.PageableCorrelationIDs) && diag.Has(r.Diagnostics, predictions.CodePinnedSourcePageable) {
		// Both groups flagged, as the copy records say: the "pinned" buffer
		// is pageable, which pinned-source-pageable already reports.
		verdict = "agrees with"
		reading = "the copy records, which show the pinned group copying from pageable memory too (see pinned-source-pageable)"
	}
	addDiag(r, CodeNsysRule, level, fmt.Sprintf(
		"NVIDIA's %s rule (%s) flags %d copies from pageable memory: %d of the %d timed pageable calls, %d of the %d timed pinned calls, %d other (e.g. warm-ups)%s; it %s %s",
		runner.AnalyzeRule, file, len(flagged), pg, len(groups.PageableCorrelationIDs), pn, len(groups.PinnedCorrelationIDs),
		other, unmatchedNote(unmatched), verdict, reading))
}

func unmatchedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d matching no call of the program's thread", n)
}

// attachPCIe states the link and how close pinned copies at 256 MiB came to
// its rated bandwidth.
func attachPCIe(r *predictions.Result, link runner.PCIe) {
	if link.RatedGBps == 0 {
		return
	}
	var parts []string
	for _, dir := range []vocab.Direction{vocab.H2D, vocab.D2H} {
		best := 0.0
		for _, row := range r.Copies {
			if row.Direction == dir && row.Source == vocab.MemPinned && row.Bytes == 256<<20 && (best == 0 || row.From == predictions.SourceTrace) {
				best = row.GBps
			}
		}
		if best > 0 {
			parts = append(parts, fmt.Sprintf("pinned %s at 256 MiB %.1f GB/s = %.0f%%", strings.ToUpper(string(dir)), best, 100*best/link.RatedGBps))
		}
	}
	msg := fmt.Sprintf("GPU link PCIe Gen%d x%d (now Gen%d x%d), rated %.1f GB/s per direction",
		link.GenMax, link.WidthMax, link.GenCurrent, link.WidthCurrent, link.RatedGBps)
	if len(parts) > 0 {
		msg += ": " + strings.Join(parts, ", ")
	}
	addDiag(r, CodePCIe, diag.Info, msg)
}

// attachResident sets the device-resident kernel's bandwidth beside the
// device-to-device copy bandwidth measured in the same run (prediction 3's
// premise: the resident kernel sits near the card's copy bandwidth).
func attachResident(r *predictions.Result) {
	if r.DeviceCopyGBps == 0 {
		return
	}
	for _, k := range r.Kernels {
		if k.Variant == vocab.DeviceResident && k.GBps > 0 {
			addDiag(r, CodeResident, diag.Info, fmt.Sprintf(
				"device-resident kernel %.0f GB/s (%s) = %.0f%% of the device-to-device cudaMemcpy bandwidth %.0f GB/s measured in the same run",
				k.GBps, k.From, 100*k.GBps/r.DeviceCopyGBps, r.DeviceCopyGBps))
			return
		}
	}
}

// attachExposure scans the capture files an input was read from (SQLite
// exports and .nsys-rep reports) for what they reveal of the machine beyond
// the check — other processes, environment variables outside the allowlist,
// secrets — and adds a capture-exposes warning per kind of finding. Values
// are never shown in full.
func attachExposure(r *predictions.Result, c *capture.Capture) {
	seen := map[string]bool{}
	for _, f := range append([]string{c.Path}, c.Files...) {
		if seen[f] || strings.HasSuffix(f, capture.ExportSuffix) {
			continue
		}
		// Only files that hold an export or a report are scanned: the
		// kind is told by content (nsysdb), as every input's is.
		if st, err := os.Stat(f); err != nil || st.IsDir() {
			continue
		}
		if k, err := nsysdb.Detect(f); err != nil || (k != nsysdb.KindSQLite && k != nsysdb.KindNsysRep) {
			continue
		}
		seen[f] = true
		rep, err := privacy.Scan(f)
		if err != nil {
			addDiag(r, CodeScanFailed, diag.Info,
				fmt.Sprintf("could not scan %s for exposed environment or processes: %v", f, err))
			continue
		}
		r.Diagnostics = append(r.Diagnostics, rep.Diagnostics()...)
	}
}

// OpenRegular opens a user's file (an --expect file) for reading only if it
// is a regular file: a FIFO or a device is refused at once, never waited on
// (capture.OpenRegular).
func OpenRegular(path string) (*os.File, error) {
	f, _, err := capture.OpenRegular(path)
	return f, err
}
