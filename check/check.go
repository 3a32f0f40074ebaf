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
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/coverage"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/exportcache"
	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/internal/environ"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/nsysrule"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/privacy"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/runinfo"
	"github.com/nsyscheck/nsyscheck/source"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Options configure loading.
type Options struct {
	// Nsys is the nsys executable that exports a .nsys-rep ("" finds it).
	Nsys string
	// Env is the environment NSYS, PATH and the user's cache folder are
	// read from (nil: the process's).
	Env environ.Env
	// Run is the run's facts when the caller holds them in memory (run
	// checking its own export before run.json is final); nil reads the
	// run.json beside the input where Load needs it.
	Run *runinfo.Info
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
	Run *runinfo.Info
	// scans are what the exposure scan found in the input's capture files
	// while Load held them open; Enrich reports them.
	scans []fileScan
	// TraceLost says what the capture's CUDA trace lost although nsys
	// traced CUDA and the program ran to the end; nil when nothing was
	// lost. The verdicts then carry a trace-lost warning naming those that
	// rest on the program's numbers.
	TraceLost *diag.TraceLoss
}

// PCIe is the PCIe link of the run's GPU as its run.json records it; zero
// where the input holds no run.json.
func (k *Checked) PCIe() runinfo.PCIe {
	if k.Run == nil || k.Run.GPU == nil {
		return runinfo.PCIe{}
	}
	return k.Run.GPU.PCIe
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
		// A run folder's run.json qualifies the verdicts (a trace that lost
		// calls, a GPU shared with other work): one that cannot be read is
		// refused, not read as none, which would drop those warnings.
		info, err := runinfo.ReadStrict(folderOf(k.Capture.Path))
		if err != nil {
			var ie *inputerr.Error
			if errors.As(err, &ie) {
				ie.Hint = "give the folder of a complete 'nsyscheck run' or run it again; a capture copied into this folder is read apart from it once copied out"
			}
			return nil, err
		}
		k.Enrich(info)
		out = append(out, k)
	}
	return out, nil
}

// Load loads one capture and evaluates it; run calls it on its own export
// and Enriches the result once the run's other steps are done. The input is
// opened once (source.Open): the capture is read from it and, while it is
// open, its export and report are scanned for what they expose of the
// machine (privacy.Scan), for Enrich to report. An export without any CUDA
// API trace in a run folder whose nsys traced CUDA and whose program ran to
// the end is not an error: another profiler took the trace, so Load
// evaluates the program's own numbers and sets TraceLost. Every credential
// the capture's strings carry is masked first (privacy.MaskCapture), so that
// no verdict, evidence or report shows one.
func Load(path string, opts Options) (*Checked, error) {
	lo := LoadOptions(opts.Nsys)
	lo.Context, lo.Env = opts.Context, opts.Env
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	src, err := source.Open(ctx, path, source.Options{Nsys: opts.Nsys, Env: opts.Env})
	var c *capture.Capture
	cov, det := coverage.NewWatcher(), framework.NewDetector()
	lo.Watch = records.Tee(cov.Handler(), det.Handler())
	if err == nil {
		defer src.Close()
		c, err = capture.FromSource(ctx, src, lo)
	}
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
	k := Evaluate(c)
	k.scans = scanFiles(ctx, src, programFiles(c), privacy.Known{})
	attachCoverage(k.Result, cov.Coverage(), det.Detect().Framework)
	return k, nil
}

// attachCoverage adds what the capture says of itself beside the verdicts
// (coverage: nsys's messages, the events it did not keep, CUDA not
// traced, graph launches traced whole); an incomplete capture names the
// claims its trace decided or could not, which it touches.
func attachCoverage(r *predictions.Result, c *coverage.Coverage, fw framework.Name) {
	for _, d := range c.CaptureDiagnostics(fw) {
		if inc, ok := d.Detail.(coverage.Incomplete); ok {
			for _, cl := range r.Claims {
				if cl.From == predictions.SourceTrace || cl.Verdict == predictions.Unavailable {
					inc.Claims = append(inc.Claims, cl.ID)
				}
			}
			d.Detail = inc
		}
		if z, ok := d.Detail.(coverage.ZeroKernels); ok {
			z.Claims = kernelClaims(r)
			d.Detail = z
		}
		addDiag(r, d.Level, d.Detail)
	}
}

// kernelClaims are the claims of r of a part that reads kernel launches
// (predictions.Part.APINames) decided from the trace, or left unavailable:
// those a kernel's time in the trace enters.
func kernelClaims(r *predictions.Result) []string {
	kernels := map[int]bool{}
	for _, p := range predictions.Lesson.Parts() {
		if slices.ContainsFunc(p.APINames, func(api string) bool { return strings.Contains(api, "Launch") }) {
			kernels[p.ID] = true
		}
	}
	var out []string
	for _, cl := range r.Claims {
		if kernels[cl.Prediction] && (cl.From == predictions.SourceTrace || cl.Verdict == predictions.Unavailable) {
			out = append(out, cl.ID)
		}
	}
	return out
}

// fileScan is what privacy.Scan found in one capture file, or why it could
// not scan it.
type fileScan struct {
	path string
	rep  *privacy.Report
	err  error
}

// scanFiles scans the capture files a source holds open (its SQLite export
// and its .nsys-rep) for what they expose, except nsyscheck's own export of
// a report, which holds nothing the report does not; and, for a folder of
// CSV reports, every report it reads, and NVIDIA's rule's CSV beside a
// capture, which verify and audit read too (privacy.ScanCSV); and the
// lesson program's own file verify read (programFile: its results JSON or
// transcript, "" for none; privacy.ScanText).
//
// known is what the read of the export found that the scan would find
// again (privacy.Known); it holds for the export alone.
func scanFiles(ctx context.Context, src *source.Source, programFiles []string, known privacy.Known) []fileScan {
	var out []fileScan
	for _, f := range scannable(src) {
		k := privacy.Known{}
		if src.Export != nil && f.Path == src.Export.Path {
			k = known
		}
		rep, err := privacy.ScanKnown(ctx, f, k)
		out = append(out, fileScan{path: f.Path, rep: rep, err: err})
	}
	csvs := csvReports(src)
	if p := ruleCSV(src.Path); p != "" && !slices.Contains(csvs, p) {
		csvs = append(csvs, p)
	}
	for _, p := range csvs {
		rep, err := privacy.ScanCSV(ctx, p)
		out = append(out, fileScan{path: p, rep: rep, err: err})
	}
	for _, p := range programFiles {
		rep, err := privacy.ScanText(ctx, p)
		out = append(out, fileScan{path: p, rep: rep, err: err})
	}
	return out
}

// programFiles are the program's files beside the capture that the scan
// reads: the one its numbers came from, and those set aside (another
// run's, another program's), which lie beside it all the same and go
// where it goes.
func programFiles(c *capture.Capture) []string {
	var out []string
	if c.ProgramFile != "" {
		out = append(out, c.ProgramFile)
	}
	for _, s := range c.SetAside {
		if st, err := os.Stat(s.Path); err == nil && st.Mode().IsRegular() && !slices.Contains(out, s.Path) {
			out = append(out, s.Path)
		}
	}
	return out
}

// ruleCSV is NVIDIA's rule's CSV beside the capture at path (in its
// folder of CSV reports, or NAME_cuda_memcpy_async.csv beside NAME.sqlite),
// "" when there is none: the one verify (Enrich) and the audit
// (nvidiaRule) read, and the exposure scan scans.
func ruleCSV(path string) string {
	return nsysrule.Beside(path, captureExts)
}

// csvReports are the CSV reports a folder source reads, in a fixed order.
func csvReports(src *source.Source) []string {
	if src.Kind != nsysdb.KindCSV {
		return nil
	}
	out := make([]string, 0, len(src.Reports))
	for _, p := range src.Reports {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// scannable lists the files of a source the exposure scan reads: an SQLite
// export or a .nsys-rep, and not nsyscheck's own export of a report.
func scannable(src *source.Source) []*source.File {
	var out []*source.File
	for _, f := range src.Files() {
		if (f.Kind == nsysdb.KindSQLite || f.Kind == nsysdb.KindNsysRep) && !strings.HasSuffix(f.Path, exportcache.Suffix) {
			out = append(out, f)
		}
	}
	return out
}

// Evaluate evaluates the predictions on a loaded capture. The result is not
// final until Enrich has run.
func Evaluate(c *capture.Capture) *Checked {
	return &Checked{Result: predictions.Evaluate(c), Capture: c}
}

// Enrich adds what the capture's folder holds beyond the capture, the run's
// facts (info, nil where there is no run.json; run passes its own, still in
// memory) and what the capture exposes of the machine.
func (k *Checked) Enrich(info *runinfo.Info) {
	r, c := k.Result, k.Capture
	k.Run = info
	for _, n := range c.Notes {
		addDiag(r, diag.Info, diag.Note{Of: diag.CodeInputSubstituted, Text: n})
	}
	if p := ruleCSV(c.Path); p != "" {
		if flagged, err := nsysrule.ReadCSV(p); err != nil {
			addDiag(r, diag.Warning, diag.NsysRuleUnread{Err: err.Error()})
		} else {
			compareNsysRule(r, c, flagged, filepath.Base(p))
		}
	}
	if info != nil && info.GPU != nil {
		attachPCIe(r, info.GPU.PCIe)
	}
	attachSharing(r, info)
	k.TraceLost = attachLostTrace(r, c, info, k.TraceLost)
	attachResident(r)
	attachExposure(r, k.scans)
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

func addDiag(r *predictions.Result, level diag.Level, d diag.Detail) {
	r.Diagnostics = append(r.Diagnostics, diag.Diagnostic{Level: level, Detail: d})
}

// compareNsysRule sets NVIDIA's rule (which lists async copies whose host side
// is pageable) beside nsyscheck's reading of part 2: the pageable group's
// timed calls must all be flagged and none of the pinned group's.
func compareNsysRule(r *predictions.Result, c *capture.Capture, flagged []nsysrule.FlaggedCopy, file string) {
	var groups *predictions.CallDurations
	calls := predictions.CallRows.Of(r)
	for i := range calls {
		if calls[i].From == predictions.SourceTrace && len(calls[i].PageableCorrelationIDs) > 0 {
			groups = &calls[i]
		}
	}
	if groups == nil {
		addDiag(r, diag.Info, diag.NsysRuleAlone{Rule: nsysrule.Name, File: file, Flagged: len(flagged)})
		return
	}
	// The rule reports each copy by the start of its GPU copy record; a
	// capture without those records (the CSV reports) cannot be matched.
	if c.Memcpys.Len() == 0 {
		addDiag(r, diag.Info, diag.NsysRuleAlone{Rule: nsysrule.Name, File: file, Flagged: len(flagged), NoCopyRecords: true})
		return
	}
	// The rule reports each copy by its start: match it to a call or its copy.
	byStart := map[int64]int64{}
	for _, call := range c.Calls {
		if call.Name == "cudaMemcpyAsync" {
			byStart[call.Start] = call.CorrelationID
		}
	}
	for _, m := range c.Memcpys.All() {
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
	d := diag.NsysRule{Rule: nsysrule.Name, File: file, Flagged: len(flagged), PageableHit: pg, Pageable: len(groups.PageableCorrelationIDs),
		PinnedHit: pn, Pinned: len(groups.PinnedCorrelationIDs), Other: other, Unmatched: unmatched}
	d.Agrees = pg == d.Pageable && pn == 0
	if !d.Agrees && pn == d.Pinned && pg == d.Pageable && diag.Has(r.Diagnostics, predictions.CodePinnedSourcePageable) {
		// Both groups flagged, as the copy records say: the "pinned" buffer
		// is pageable, which pinned-source-pageable already reports.
		d.Agrees, d.ByCopyRecords = true, true
	}
	level := diag.Info
	if !d.Agrees || d.ByCopyRecords {
		// Agreeing with the copy records rather than the reading of
		// part 2 is still a warning.
		level = diag.Warning
	}
	addDiag(r, level, d)
}

// attachPCIe states the link and how close pinned copies at 256 MiB came to
// its rated bandwidth.
func attachPCIe(r *predictions.Result, link runinfo.PCIe) {
	if link.RatedGBps == 0 {
		return
	}
	const at = 256 << 20 // the sweep's largest size
	d := diag.PCIeLink{GenMax: link.GenMax, WidthMax: link.WidthMax, GenNow: link.GenCurrent, WidthNow: link.WidthCurrent,
		RatedGBps: link.RatedGBps, PinnedBytes: at}
	for _, dir := range []vocab.Direction{vocab.H2D, vocab.D2H} {
		best := 0.0
		for _, row := range predictions.CopyRows.Of(r) {
			if row.Direction == dir && row.Source == vocab.MemPinned && row.Bytes == at && (best == 0 || row.From == predictions.SourceTrace) {
				best = row.GBps
			}
		}
		if best > 0 {
			d.Pinned = append(d.Pinned, diag.LinkShare{Dir: string(dir), GBps: best})
		}
	}
	addDiag(r, diag.Info, d)
}

// attachResident sets the device-resident kernel's bandwidth beside the
// device-to-device copy bandwidth measured in the same run (prediction 3's
// premise: the resident kernel sits near the card's copy bandwidth).
func attachResident(r *predictions.Result) {
	if r.DeviceCopyGBps == 0 {
		return
	}
	for _, k := range predictions.KernelRows.Of(r) {
		if k.Variant == vocab.DeviceResident && k.GBps > 0 {
			addDiag(r, diag.Info, diag.ResidentVsCopy{KernelGBps: k.GBps, From: string(k.From), DeviceGBps: r.DeviceCopyGBps})
			return
		}
	}
}

// attachExposure reports what the capture files an input was read from
// (SQLite exports and .nsys-rep reports) reveal of the machine beyond the
// check — other processes, environment variables outside the allowlist,
// secrets — as Load's scan of them found: a capture-exposes warning per
// kind of finding. Values are never shown in full. A file the scan could
// not read whole gets a capture-scan-failed warning beside what the rest of
// the scan found: it was not cleared.
func attachExposure(r *predictions.Result, scans []fileScan) {
	for _, s := range scans {
		r.Diagnostics = append(r.Diagnostics, exposureDiagnostics(s.path, s.rep, s.err)...)
	}
}

// exposureDiagnostics are the diagnostics of one file's scan: what it
// exposes, and a capture-scan-failed warning when the scan failed.
func exposureDiagnostics(path string, rep *privacy.Report, err error) []diag.Diagnostic {
	var out []diag.Diagnostic
	if err != nil {
		out = append(out, diag.Diagnostic{Level: diag.Warning, Detail: diag.ScanFailed{File: path, Err: err.Error()}})
	}
	if rep != nil {
		out = append(out, rep.Diagnostics()...)
	}
	return out
}

// OpenRegular opens a user's file (an --expect file) for reading only if it
// is a regular file: a FIFO or a device is refused at once, never waited on
// (capture.OpenRegular).
func OpenRegular(path string) (*os.File, error) {
	f, _, err := inputerr.Open(path)
	return f, err
}
