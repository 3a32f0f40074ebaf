package check

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/trace"
	"strings"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/coverage"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/exportcache"
	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/internal/environ"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/limits"
	"github.com/nsyscheck/nsyscheck/nsysrule"
	"github.com/nsyscheck/nsyscheck/privacy"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/runinfo"
	"github.com/nsyscheck/nsyscheck/source"
	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// The audit's path through the pipeline: stream a capture's copies (load),
// class them and apply the rule (audit, in place of evaluate), set NVIDIA's
// cuda_memcpy_async rule beside it (enrich) and scan the capture for what it
// exposes (scan). With a capture after the fix, the second audit checks the
// first's prediction.

// AuditOptions configure an audit.
type AuditOptions struct {
	// Nsys is the nsys executable that exports a .nsys-rep and runs
	// NVIDIA's rule ("" finds it).
	Nsys string
	// Env is the environment NSYS, PATH and the user's cache folder are
	// read from, and nsys analyze runs with (nil: the process's).
	Env environ.Env
	// NoRule leaves NVIDIA's rule out (--nvidia-rule off).
	NoRule bool
	// NsysRule has nsys analyze run NVIDIA's rule on the capture's SQLite
	// export beside the stream (--nvidia-rule nsys), or says why it could
	// not; otherwise the rule is read from its CSV beside the capture, or
	// answered from the audit's own records (RuleSourceScan), with no run
	// of nsys.
	NsysRule bool
	// RatesDir is a run folder of `nsyscheck run` whose pinned copy rates
	// and PCIe link the prediction may use ("" for none).
	RatesDir string
	// LinkGBps is the host-device link rate when no measured rate is at
	// hand (0: the run folder's, else DefaultLinkGBps).
	LinkGBps float64
	// PinBy is how the program is to pin its buffers (replay.PinByOf's
	// names); "" chooses from the framework the capture shows
	// (audit.PinByOf).
	PinBy string
	// Match maps a region of the capture before to the region of the
	// capture after it is compared with, when their names differ; only the
	// regions it names are judged then.
	Match map[string]string
	// FailAbove, when not nil, gates a one-capture audit: it fails only
	// when copies from pageable memory hold the host for more than this
	// share of some judged region's median instance (audit.Audit.FailAbove).
	FailAbove *float64
}

// DefaultLinkGBps is the link rate assumed when neither a run folder nor
// AuditOptions.LinkGBps gives one: PCIe 5.0 x16 per direction after line
// encoding.
var DefaultLinkGBps = runinfo.RatedGBps(defaultLinkGen, defaultLinkWidth)

// The PCIe link assumed: generation 5, 16 lanes.
const (
	defaultLinkGen   = 5
	defaultLinkWidth = 16
)

// Audit audits the capture before the fix and, when after is not "", the
// capture after it, and checks the first audit's prediction on the second;
// two captures that are not of one program are refused
// (*audit.NotSameProgram).
func Audit(ctx context.Context, before, after string, opts AuditOptions) (*audit.Output, error) {
	rates, err := AuditRates(opts)
	if err != nil {
		return nil, err
	}
	if opts.PinBy != "" {
		if _, ok := replay.PinByOf(opts.PinBy); !ok {
			return nil, fmt.Errorf("unknown --pin-by %q: use in-place (buffers allocated pinned and reused), copy (each buffer copied into pinned memory) or pin-thread (copied by a pin thread of the program's interpreter, as a DataLoader with workers pins)", opts.PinBy)
		}
	}
	if len(opts.Match) > 0 && after == "" {
		return nil, fmt.Errorf("--match compares a region of CAPTURE with one of AFTER: give AFTER too (the same capture, to compare two of its regions)")
	}
	out := &audit.Output{}
	if after == "" {
		if out.Before, _, err = auditCapture(ctx, before, rates, opts, nil); err != nil {
			return nil, err
		}
		if opts.FailAbove != nil {
			out.Before.FailAbove(*opts.FailAbove)
		}
		return out, nil
	}
	// The capture after is read first: the way it shows its program pinned
	// (audit.PinShownBy) is the way the prediction from the capture before
	// pins, unless --pin-by names one. A capture before that cannot be
	// read is still named first.
	var shown *audit.PinShown
	out.After, shown, err = auditCapture(ctx, after, rates, opts, nil)
	if err != nil {
		if _, _, berr := auditCapture(ctx, before, rates, opts, nil); berr != nil {
			return nil, berr
		}
		return nil, err
	}
	if out.Before, _, err = auditCapture(ctx, before, rates, opts, shown); err != nil {
		return nil, err
	}
	if err := audit.SameProgram(out.Before, out.After); err != nil {
		return nil, err
	}
	if err := sameMachine(after, out.Before, out.After); err != nil {
		return nil, err
	}
	for b, a := range opts.Match {
		if out.Before.Region(b) == nil {
			return nil, fmt.Errorf("--match %s=%s: %s has no region %s (its regions: %s)", b, a, before, b, regionNames(out.Before))
		}
		if out.After.Region(a) == nil {
			return nil, fmt.Errorf("--match %s=%s: %s has no region %s (its regions: %s)", b, a, after, a, regionNames(out.After))
		}
	}
	out.Check = audit.Compare(out.Before, out.After, opts.Match)
	return out, nil
}

// regionNames lists an audit's regions.
func regionNames(au *audit.Audit) string {
	names := make([]string, len(au.Regions))
	for i, r := range au.Regions {
		names[i] = r.Name
	}
	return strings.Join(names, ", ")
}

// AuditCapture reads one capture's trace in one pass into the audit's
// accumulator, the timeline and the framework's detector (records.Tee),
// replays the timeline as captured and with its pageable copies pinned,
// sets NVIDIA's rule beside it and scans the capture files for exposures.
// The input is opened once (source.Open, stopped with ctx while nsys
// exports a report); its capture files are scanned for exposures, the scan
// reading the files' bytes and tables. NVIDIA's rule is had beside them:
// with AuditOptions.NsysRule, nsys analyze run on the export beside the
// stream; else its CSV beside the capture, read beside the stream; else
// the rule's definition applied to the records the stream reads anyway
// (each read down to its count and digest), so that it costs no time of
// its own unless it disagrees with the audit or nsys analyze outlasts it. An
// SQLite export's checks of the whole file (SQLite's integrity check, the
// checks over whole tables) run once the records have streamed, and the
// exposure scan once they have passed, beside the timeline's finish and the
// replay (capture.TraceThenCheck): the stream's goroutines have the
// machine's cores to themselves, one of these at a time takes the core the
// finish and the replay leave, and no answer is given before the file has
// passed the checks.
func AuditCapture(ctx context.Context, path string, rates *audit.Rates, opts AuditOptions) (*audit.Audit, error) {
	au, _, err := auditCapture(ctx, path, rates, opts, nil)
	return au, err
}

// auditCapture is AuditCapture, its what-if pinning as the capture after
// the fix showed its program pinned where after is not nil (and --pin-by
// names no way); it returns too the way to pin the capture itself shows,
// nil for none (audit.PinShownBy).
func auditCapture(ctx context.Context, path string, rates *audit.Rates, opts AuditOptions, after *audit.PinShown) (*audit.Audit, *audit.PinShown, error) {
	ctx, task := trace.NewTask(ctx, "audit")
	defer task.End()
	trace.Log(ctx, "capture", path)
	src, err := source.Open(ctx, path, source.Options{Nsys: opts.Nsys, Env: opts.Env})
	if err != nil {
		return nil, nil, err
	}
	defer src.Close()
	early := make(chan []diag.Diagnostic, 1)
	exposures := func(known privacy.Known) {
		defer trace.StartRegion(ctx, "exposure scan").End()
		var out []diag.Diagnostic
		for _, s := range scanFiles(ctx, src, nil, known) {
			out = append(out, exposureDiagnostics(s.path, s.rep, s.err)...)
		}
		early <- out
	}
	ruleCtx, stopRule := context.WithCancel(ctx)
	rule, ruleScan := startRule(ruleCtx, src, opts)
	var res *ruleResult
	defer func() {
		if res == nil { // an error ended the audit first
			stopRule()
			r := <-rule
			res = &r
		}
		res.close()
		stopRule()
	}()
	acc := audit.NewAccumulator()
	tb := timeline.NewBuilder(ctx, timeline.Options{})
	det := framework.NewDetector()
	cov := coverage.NewWatcher()
	var names privacy.CopyMasker // no credential in a name reaches a class key or a region
	streamed := trace.StartRegion(ctx, "stream")
	scan, checked, err := capture.TraceThenCheck(ctx, src, func(s *capture.CopyScan) records.Handler {
		return names.Handler(records.Tee(acc.Handler(s), tb.Handler(), det.Handler(), cov.Handler(), ruleHandler(ruleScan)))
	})
	streamed.End()
	if err != nil {
		return nil, nil, coverRefusal(err, cov.Coverage(), det.Detect().Framework)
	}
	// The exposure scan needs no record: it runs beside the replay too,
	// on the stream's connection, given back, once the checks of the
	// whole export have ended, so that one of them at a time takes the
	// core the timeline's finish and the replay leave; an export that
	// fails them is refused, unscanned.
	go func() {
		if checked() != nil {
			early <- nil
			return
		}
		// The processes that made calls, which the stream read.
		exposures(privacy.Known{RuntimeTable: scan.APITable, RuntimePIDs: scan.CallPIDs})
	}()
	var exposed []diag.Diagnostic
	scanned := false
	defer func() { // the scan ends before the files it reads close
		if !scanned {
			<-early
		}
	}()
	if err := ratesFit(path, scan.Meta.GPU, rates); err != nil {
		if cerr := checked(); cerr != nil {
			return nil, nil, cerr
		}
		return nil, nil, err
	}
	r, err := replayOf(ctx, tb, det.Detect(), linkOfGPU(rates, scan.Meta.GPU), opts.PinBy, after)
	waited := trace.StartRegion(ctx, "wait for the checks")
	cerr := checked()
	waited.End()
	if cerr != nil {
		return nil, nil, cerr
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var shown *audit.PinShown
	if p, ok := audit.PinShownBy(r.Timeline, r.Framework); ok {
		shown = &p
	}
	au := acc.Finish(scan, r)
	au.Cover(cov.Coverage())
	for _, n := range scan.Notes {
		au.Diagnostics = append(au.Diagnostics, diag.Diagnostic{Level: diag.Info, Detail: diag.Note{Of: diag.CodeInputSubstituted, Text: n}})
	}
	if len(scan.Uncopied) > 0 {
		var n int64
		for _, c := range scan.Uncopied {
			n += c.Calls
		}
		au.Diagnostics = append(au.Diagnostics, diag.Diagnostic{Level: diag.Warning, Detail: diag.Note{Of: diag.CodeUncopiedCalls,
			Text: fmt.Sprintf("%d of the %d copy calls have no copy record (%s): what they moved is not in the audit; nsys loses a few records of a long capture, more than %g%% refuse the audit",
				n, scan.CopyCalls, capture.APICounts(scan.Uncopied), 100*capture.UncopiedShare)}})
	}
	waited = trace.StartRegion(ctx, "wait for the exposure scan and the rule")
	exposed, scanned = <-early, true
	au.Exposures = append(au.Exposures, exposed...)
	got := <-rule
	waited.End()
	res = &got
	if res.note != "" {
		au.RuleUnavailable(nsysrule.Name, res.note)
		return au, shown, nil
	}
	again := func(a *audit.Accumulator) error { return copiesAgain(ctx, src, a.Handler) }
	if res.scan != nil {
		res.side = res.scan.Side(scannedRows(ctx, src))
	}
	if _, err := au.CompareRule(nsysrule.Name, res.source, res.side, again); err != nil {
		if ctx.Err() != nil {
			return nil, nil, err
		}
		au.RuleUnavailable(nsysrule.Name, err.Error())
	}
	return au, shown, nil
}

// replayOf builds the timeline and replays it as captured and pinned, the
// way to pin chosen from the framework, else as the capture after the fix
// showed it (after, nil for none), unless pinBy names it.
func replayOf(ctx context.Context, tb *timeline.Builder, det framework.Detection, rates *audit.Rates, pinBy string, after *audit.PinShown) (audit.Replayed, error) {
	finished := trace.StartRegion(ctx, "timeline finish")
	tl, err := tb.Finish()
	finished.End()
	if err != nil {
		return audit.Replayed{}, err
	}
	r := audit.Replayed{Timeline: tl, Framework: det, PinByFrom: audit.PinByFramework}
	if rates != nil {
		link := rates.Link
		r.Link = &link
	}
	by := audit.PinByOf(det)
	if after != nil {
		by, r.PinByFrom, r.Shown = after.By, audit.PinByAfter, after
	}
	if pinBy != "" {
		by, _ = replay.PinByOf(pinBy)
		r.PinByFrom, r.Shown = audit.PinByFlag, nil
	}
	replayed := trace.StartRegion(ctx, "replay")
	r.Result, err = replay.Replay(ctx, tl, audit.ReplayOptions(tl, rates, by))
	replayed.End()
	if err != nil {
		return audit.Replayed{}, fmt.Errorf("replaying the timeline: %w", err)
	}
	return r, nil
}

// AuditRates gathers the rates the prediction may use besides the
// capture's own: the run folder's pinned copies and link, and the link rate.
func AuditRates(opts AuditOptions) (*audit.Rates, error) {
	r := &audit.Rates{LinkGBps: DefaultLinkGBps,
		Link: audit.LinkOrigin{Kind: audit.LinkAssumed, Gen: defaultLinkGen, Width: defaultLinkWidth, GBps: DefaultLinkGBps}}
	if opts.LinkGBps != 0 {
		if err := checkRate("--link-gbps", opts.LinkGBps, false); err != nil {
			return nil, err
		}
	}
	if opts.RatesDir != "" {
		if err := readRunRates(opts.RatesDir, r); err != nil {
			return nil, err
		}
	}
	if opts.LinkGBps != 0 {
		r.LinkGBps, r.Link = opts.LinkGBps, audit.LinkOrigin{Kind: audit.LinkFlag, GBps: opts.LinkGBps}
	}
	return r, nil
}

// The rates the prediction accepts, in GB/s: from 10 MB/s, far below any
// host-device link, to the fastest host link there is (NVLink-C2C). A rate
// outside them makes every predicted time meaningless, and one small
// enough overflows it (--link-gbps 1e-300 predicted -9.2e18 ns); a link
// rate above them prices copies no link can make (--link-gbps 4000 on an
// H200 predicted a quarter of the time).
const (
	MinRateGBps = 0.01
	MaxRateGBps = limits.FastestHostLinkGBps
)

// CheckFlagRate refuses a link rate given on the command line (flag names
// it) outside [MinRateGBps, MaxRateGBps], NaN and infinities included.
func CheckFlagRate(flag string, gbps float64) error { return checkRate(flag, gbps, false) }

// checkRate refuses a rate outside [MinRateGBps, MaxRateGBps] (NaN and
// infinities included), naming what gave it. A measured copy (measured
// true) may seem to run limits.BurstShare above its link.
func checkRate(what string, gbps float64, measured bool) error {
	top := float64(MaxRateGBps)
	if measured {
		top *= limits.BurstShare
	}
	if gbps >= MinRateGBps && gbps <= top {
		return nil
	}
	return fmt.Errorf("%s %g: give a rate in GB/s between %g and %g (NVLink-C2C, the fastest host link there is; PCIe 5.0 x16 moves %.1f GB/s per direction)",
		what, gbps, MinRateGBps, top, DefaultLinkGBps)
}

// readRunRates reads the pinned copy timings (results JSON) and the PCIe
// link (run.json) of a run folder.
func readRunRates(dir string, r *audit.Rates) error {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return &inputerr.Error{Path: dir, Problem: "not a run folder", Err: err,
			Hint: "--rates takes the folder 'nsyscheck run' wrote (with run.json and pinned.results.json)"}
	}
	r.Source = dir
	info, err := runinfo.ReadStrict(dir)
	if err != nil {
		return err
	}
	// A run that did not complete (failed, interrupted, or still running)
	// may have left results of a step it did not finish, or of an earlier
	// run in the same folder: its rates are of no run known to be whole.
	if info != nil && info.Status != "" && info.Status != "complete" {
		problem := fmt.Sprintf("%s says the run is %s", runinfo.InfoFile, info.Status)
		if info.FailedStep != "" {
			problem += fmt.Sprintf(" (at step %s)", info.FailedStep)
		}
		return &inputerr.Error{Path: dir, Problem: problem + ", so its results may be partial or left from an earlier run",
			Hint: "--rates takes the folder of a complete 'nsyscheck run'; run it again"}
	}
	results := filepath.Join(dir, runinfo.ResultsFile)
	if _, err := os.Stat(results); err != nil {
		m, _ := filepath.Glob(filepath.Join(dir, "*.results.json"))
		if len(m) != 1 {
			return &inputerr.Error{Path: dir, Problem: "no " + runinfo.ResultsFile + " in the run folder",
				Hint: "--rates takes the folder 'nsyscheck run' wrote; run it again if it did not finish"}
		}
		results = m[0]
	}
	c, err := capture.LoadMeasurements(results)
	if err != nil {
		return err
	}
	if c.Program != nil {
		for _, cp := range c.Program.Copies {
			if cp.Source != string(vocab.MemPinned) || cp.Ms <= 0 {
				continue
			}
			dir := vocab.CopyHtoD
			if cp.Direction == string(vocab.D2H) {
				dir = vocab.CopyDtoH
			}
			gbps := float64(cp.Bytes) / (cp.Ms * 1e6)
			if err := checkRate(fmt.Sprintf("%s: the pinned %s copy of %d bytes in %g ms is", results, cp.Direction, cp.Bytes, cp.Ms), gbps, true); err != nil {
				return err
			}
			r.Copies = append(r.Copies, audit.RatePoint{Direction: dir, Bytes: cp.Bytes, GBps: gbps})
		}
		for _, a := range c.Program.Async {
			if a.Source == string(vocab.MemPinned) && a.CallMs > 0 {
				r.AsyncCallNs = a.CallMs * 1e6
			}
		}
	}
	r.GPU = c.Meta.GPU
	if info != nil && info.GPU != nil && info.GPU.Name != "" {
		if r.GPU != "" && !limits.SameGPU(r.GPU, info.GPU.Name) {
			return &inputerr.Error{Path: dir,
				Problem: fmt.Sprintf("%s says the run used %s, its %s %s: the folder mixes two runs, so its rates are of no one GPU", runinfo.InfoFile, info.GPU.Name, filepath.Base(results), r.GPU),
				Hint:    "give --rates the folder of one complete 'nsyscheck run' on the capture's machine"}
		}
		r.GPU = info.GPU.Name
	}
	if info != nil && info.GPU != nil && info.GPU.PCIe.RatedGBps != 0 {
		p := info.GPU.PCIe
		if err := checkRate(filepath.Join(dir, runinfo.InfoFile)+": the link's rated rate", p.RatedGBps, false); err != nil {
			return err
		}
		r.LinkGBps = p.RatedGBps
		r.Link = audit.LinkOrigin{Kind: audit.LinkRun, Gen: p.GenMax, Width: p.WidthMax, GPU: info.GPU.Name,
			File: filepath.Join(dir, runinfo.InfoFile), GBps: p.RatedGBps}
	}
	if len(r.Copies) == 0 && r.AsyncCallNs == 0 {
		return &inputerr.Error{Path: results, Problem: "the run's results hold no pinned copy timings",
			Hint: "--rates takes the folder of a complete 'nsyscheck run'"}
	}
	return nil
}

// sameMachine refuses a check of AFTER captured on another GPU than
// BEFORE: the prediction prices BEFORE's copies on BEFORE's GPU and link,
// so AFTER's times from another GPU would test another machine, not the
// fix. Audits that name no GPU are taken as they are.
func sameMachine(path string, before, after *audit.Audit) error {
	if before.GPU == "" || after.GPU == "" || limits.SameGPU(before.GPU, after.GPU) {
		return nil
	}
	return &inputerr.Error{Path: path,
		Problem: fmt.Sprintf("AFTER was captured on %s, BEFORE on %s: the check predicts the fix on BEFORE's GPU and link, so AFTER's times would test another machine, not the fix", after.GPU, before.GPU),
		Hint:    "capture AFTER on BEFORE's machine, or audit each capture alone"}
}

// ratesFit refuses run rates measured on another GPU than the capture's:
// priced with another GPU's link, the prediction would be another
// machine's, not the capture's. (A warning beside it would still print a
// number that reads as this capture's.) Rates or a capture that name no
// GPU are taken as they are.
func ratesFit(path, gpu string, rates *audit.Rates) error {
	if rates == nil || rates.GPU == "" || gpu == "" || limits.SameGPU(gpu, rates.GPU) {
		return nil
	}
	return &inputerr.Error{Path: path,
		Problem: fmt.Sprintf("the capture was made on %s, the --rates run folder %s on %s: its pinned rates would predict another GPU's copies", gpu, rates.Source, rates.GPU),
		Hint:    "give --rates a run of 'nsyscheck run' on the capture's machine, or leave it out to predict from the capture's own copies and the link"}
}

// linkOfGPU is rates with the link a capture of the GPU named gpu
// crosses where no input gave one: the GPU's usual link as
// limits.GPUs know it (an A100's PCIe 4.0 x16, a GH200's NVLink-C2C), in
// place of the PCIe 5.0 x16 assumed for a GPU they do not know.
func linkOfGPU(rates *audit.Rates, gpu string) *audit.Rates {
	g := limits.Of(gpu)
	if rates == nil || rates.Link.Kind != audit.LinkAssumed || g == nil {
		return rates
	}
	r := *rates
	r.LinkGBps = g.LinkGBps
	r.Link = audit.LinkOrigin{Kind: audit.LinkAssumed, Gen: g.Gen, Width: g.Width, Name: g.Link, GBps: g.LinkGBps}
	return &r
}

// ruleResult is NVIDIA's rule as the audit takes it: the rule's copies,
// read down to their count and digest (side), and how they were had
// (source); or why they were not (note); or, answered from the audit's own
// records, the scan that sums them as they stream (side made of it once
// they have). close removes what nsys wrote.
type ruleResult struct {
	side   *audit.RuleSide
	scan   *audit.RuleScan
	source audit.RuleSource
	note   string
	close  func()
}

// startRule has NVIDIA's cuda_memcpy_async rule's copies had beside the
// stream, the result on the channel once they are: with --nvidia-rule
// nsys, nsys analyze on the capture's SQLite export; else the rule's CSV
// beside the capture, nsys's own output, where there is one; else the
// rule's definition applied to the records the audit streams, whose scan
// it returns for the stream's handlers (nil where the rule is had
// otherwise).
func startRule(ctx context.Context, src *source.Source, opts AuditOptions) (<-chan ruleResult, *audit.RuleScan) {
	out := make(chan ruleResult, 1)
	switch beside := ruleCSV(src.Path); {
	case opts.NoRule:
		out <- ruleResult{note: "not asked for (--nvidia-rule off)", close: func() {}}
	case opts.NsysRule:
		db := ""
		if src.Export != nil {
			db = src.Export.Path
		}
		go func() { out <- analyzeRule(ctx, db, opts.Nsys, opts.Env) }()
	case beside != "":
		go func() { out <- besideRule(beside) }()
	default:
		scan := audit.NewRuleScan(nsysrule.Lists)
		out <- ruleResult{scan: scan, source: audit.RuleSource{Kind: audit.RuleSourceScan}, close: func() {}}
		return out, scan
	}
	return out, nil
}

// ruleHandler is the handler that feeds the rule's scan, none where the
// rule is had otherwise (scan nil).
func ruleHandler(scan *audit.RuleScan) records.Handler {
	if scan == nil {
		return records.Handler{}
	}
	return scan.Handler()
}

// analyzeRule runs NVIDIA's cuda_memcpy_async rule with nsys analyze on
// the capture's SQLite export db ("" when it has none) and reads its
// copies; env is the environment nsys is found in and runs with. Where it
// cannot run, the note says why and what answers the rule instead.
func analyzeRule(ctx context.Context, db, nsysOverride string, env environ.Env) ruleResult {
	const instead = "; --nvidia-rule auto reads the rule's CSV beside the capture, else answers the rule from the audit's own records"
	if db == "" {
		return ruleResult{note: "--nvidia-rule nsys: the capture has no SQLite export for nsys analyze to run on" + instead, close: func() {}}
	}
	nsysPath, err := exportcache.FindNsys(nsysOverride, env)
	switch {
	case err != nil && nsysOverride != "":
		var ie *inputerr.Error
		if errors.As(err, &ie) {
			return ruleResult{note: "--nvidia-rule nsys: no nsys at --nsys " + nsysOverride + ": " + ie.Problem + instead, close: func() {}}
		}
		return ruleResult{note: "--nvidia-rule nsys: " + err.Error() + instead, close: func() {}}
	case err != nil:
		return ruleResult{note: "--nvidia-rule nsys: nsys is not installed here (install Nsight Systems, or give --nsys PATH)" + instead, close: func() {}}
	}
	a, err := nsysrule.Analyze(ctx, nsysPath, db, env)
	if err != nil {
		return ruleResult{note: err.Error(), close: func() {}}
	}
	side, err := audit.ReadRule(ruleRows(a.CSV))
	if err != nil {
		a.Close()
		return ruleResult{note: err.Error(), close: func() {}}
	}
	return ruleResult{side: side, source: audit.RuleSource{Kind: audit.RuleSourceAnalyze, Path: db}, close: func() { a.Close() }}
}

// besideRule reads NVIDIA's cuda_memcpy_async rule's copies from its CSV
// beside the capture (ruleCSV).
func besideRule(beside string) ruleResult {
	side, err := audit.ReadRule(ruleRows(beside))
	if err != nil {
		return ruleResult{note: err.Error(), close: func() {}}
	}
	src := audit.RuleSource{Kind: audit.RuleSourceCSV, Path: beside, Capped: side.Count() == nsysrule.DefaultRows}
	return ruleResult{side: side, source: src, close: func() {}}
}

// copiesAgain streams the capture's copies a second time, each joined to
// its call and its names masked as the first read's were, into the
// handler feed returns.
func copiesAgain(ctx context.Context, src *source.Source, feed func(*capture.CopyScan) records.Handler) error {
	var names privacy.CopyMasker
	_, err := capture.CopiesOf(ctx, src, func(s *capture.CopyScan) records.Handler { return names.Handler(feed(s)) })
	return err
}

// scannedRows streams the copies NVIDIA's rule lists by its definition
// (listedRows), read again from the capture, as the audit compares them:
// CompareRule reads them where the scan's answer and the audit's differ.
func scannedRows(ctx context.Context, src *source.Source) audit.RuleRows {
	return func(yield func(audit.Flagged) error) error {
		rows, err := listedRows(ctx, src)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := yield(flaggedOf(r)); err != nil {
				return err
			}
		}
		return nil
	}
}

// listedRows reads the capture's copies again and returns the rows NVIDIA's
// rule writes of those its definition lists (nsysrule.Lists, RowOf), in
// the rule's order.
func listedRows(ctx context.Context, src *source.Source) ([]nsysrule.FlaggedCopy, error) {
	var rows []nsysrule.FlaggedCopy
	err := copiesAgain(ctx, src, func(*capture.CopyScan) records.Handler {
		return records.Handler{Op: func(o *records.Op) error {
			if nsysrule.Lists(o) {
				rows = append(rows, nsysrule.RowOf(o))
			}
			return nil
		}}
	})
	if err != nil {
		return nil, fmt.Errorf("reading the copies again to list those the %s rule lists: %w", nsysrule.Name, err)
	}
	nsysrule.SortRows(rows)
	return rows, nil
}

// ruleRows streams the rule's CSV at path as the audit compares it.
func ruleRows(path string) audit.RuleRows {
	return func(yield func(audit.Flagged) error) error {
		return nsysrule.EachCSV(path, func(r nsysrule.FlaggedCopy) error {
			return yield(flaggedOf(r))
		})
	}
}

// flaggedOf is a row of the rule as the audit compares it.
func flaggedOf(r nsysrule.FlaggedCopy) audit.Flagged {
	return audit.Flagged{PID: r.PID, Start: r.Start, Duration: r.Duration, MB: r.MB, Sized: r.Sized}
}

// captureExts end the names of the capture files a rule's CSV is found
// beside (nsysrule.Beside): the trace's, and the lesson program's own
// files of the same run (NAME.results.json, NAME.transcript.txt beside
// NAME.sqlite and NAME_cuda_memcpy_async.csv).
var captureExts = []string{exportcache.Suffix, ".sqlite", ".nsys-rep", ".qdrep", ".results.json", ".transcript.txt"}

// coverRefusal adds to the refusal of a trace with no copy record
// (capture.ProblemNoCopies) what the capture says it could not show, where
// it says so: nsys lost its events, did not trace CUDA, or traced graphs
// whole (an *audit.Refusal, which report words). Any other error is
// returned as it is.
func coverRefusal(err error, c *coverage.Coverage, fw framework.Name) error {
	var ie *inputerr.Error
	if !errors.As(err, &ie) {
		return err
	}
	ds := c.CaptureDiagnostics(fw)
	r := &audit.Refusal{Err: err, Diagnostics: ds}
	if strings.HasPrefix(ie.Problem, capture.ProblemNoCopies) {
		for _, d := range ds {
			if coverage.Hides(d.Code()) {
				r.Limits = append(r.Limits, d)
			}
		}
	}
	return r
}
