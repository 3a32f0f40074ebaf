package check

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/regular"
	"github.com/nsyscheck/nsyscheck/privacy"
	"github.com/nsyscheck/nsyscheck/runner"
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
	// NoRule leaves NVIDIA's rule out.
	NoRule bool
	// RatesDir is a run folder of `nsyscheck run` whose pinned copy rates
	// and PCIe link the prediction may use ("" for none).
	RatesDir string
	// LinkGBps is the host-device link rate when no measured rate is at
	// hand (0: the run folder's, else DefaultLinkGBps).
	LinkGBps float64
}

// DefaultLinkGBps is the link rate assumed when neither a run folder nor
// AuditOptions.LinkGBps gives one: PCIe 5.0 x16 per direction after line
// encoding.
var DefaultLinkGBps = runner.RatedGBps(5, 16)

// Audit audits the capture before the fix and, when after is not "", the
// capture after it, and checks the first audit's prediction on the second.
func Audit(ctx context.Context, before, after string, opts AuditOptions) (*audit.Output, error) {
	rates, err := AuditRates(opts)
	if err != nil {
		return nil, err
	}
	out := &audit.Output{}
	if out.Before, err = AuditCapture(ctx, before, rates, opts); err != nil {
		return nil, err
	}
	if after == "" {
		return out, nil
	}
	if out.After, err = AuditCapture(ctx, after, rates, opts); err != nil {
		return nil, err
	}
	out.Check = audit.Compare(out.Before, out.After)
	return out, nil
}

// AuditCapture streams one capture's copies into an audit, sets NVIDIA's
// rule beside it and scans the capture files for exposures.
func AuditCapture(ctx context.Context, path string, rates *audit.Rates, opts AuditOptions) (*audit.Audit, error) {
	// A capture file given directly is scanned for exposures while its
	// copies stream: the scan reads the file's bytes, the stream SQLite's.
	var early chan []diag.Diagnostic
	if scannable(path) {
		early = make(chan []diag.Diagnostic, 1)
		go func() { early <- exposures(path) }()
	}
	acc := audit.NewAccumulator()
	var names privacy.CopyMasker // no credential in a name reaches a class key
	scan, err := capture.StreamCopies(path, capture.Options{Nsys: opts.Nsys}, func(c *capture.CopyCall) {
		names.Mask(c)
		acc.Add(c)
	})
	if err != nil {
		if early != nil {
			<-early
		}
		return nil, err
	}
	au := acc.Finish(scan, rates)
	for _, n := range scan.Notes {
		au.Diagnostics = append(au.Diagnostics, diag.Diagnostic{Level: diag.Info, Detail: diag.Note{Of: diag.CodeInputSubstituted, Text: n}})
	}
	if early != nil {
		au.Exposures = append(au.Exposures, <-early...)
	}
	for _, f := range scan.Files {
		if f != path && scannable(f) {
			au.Exposures = append(au.Exposures, exposures(f)...)
		}
	}
	if opts.NoRule {
		au.RuleUnavailable(runner.AnalyzeRule, "not asked for (--nvidia-rule off)")
	} else {
		nvidiaRule(ctx, au, scan, opts.Nsys)
	}
	return au, nil
}

// scannable reports whether a file is one the exposure scan reads: an
// SQLite export or a .nsys-rep, told by content, and not nsyscheck's own
// export of a report.
func scannable(f string) bool {
	if st, err := os.Stat(f); err != nil || st.IsDir() || strings.HasSuffix(f, capture.ExportSuffix) {
		return false
	}
	k, err := nsysdb.Detect(f)
	return err == nil && (k == nsysdb.KindSQLite || k == nsysdb.KindNsysRep)
}

// exposures scans a capture file for what it reveals beyond the run, with
// verify's rules (attachExposure).
func exposures(f string) []diag.Diagnostic {
	rep, err := privacy.Scan(f)
	if err != nil {
		return []diag.Diagnostic{{Level: diag.Warning, Detail: diag.ScanFailed{File: f, Err: err.Error()}}}
	}
	return rep.Diagnostics()
}

// AuditRates gathers the rates the prediction may use besides the
// capture's own: the run folder's pinned copies and link, and the link rate.
func AuditRates(opts AuditOptions) (*audit.Rates, error) {
	r := &audit.Rates{LinkGBps: DefaultLinkGBps, LinkSource: "assumed PCIe 5.0 x16; pass --link-gbps or --rates to give the real link"}
	if opts.LinkGBps != 0 {
		if err := checkRate("--link-gbps", opts.LinkGBps); err != nil {
			return nil, err
		}
	}
	if opts.RatesDir != "" {
		if err := readRunRates(opts.RatesDir, r); err != nil {
			return nil, err
		}
	}
	if opts.LinkGBps != 0 {
		r.LinkGBps, r.LinkSource = opts.LinkGBps, "--link-gbps"
	}
	return r, nil
}

// The rates the prediction accepts, in GB/s: from 10 MB/s, far below any
// host-device link, to 10 TB/s, above any link or memory. A rate outside
// them makes every predicted time meaningless, and one small enough
// overflows it (--link-gbps 1e-300 predicted -9.2e18 ns).
const (
	MinRateGBps = 0.01
	MaxRateGBps = 10000
)

// checkRate refuses a rate outside [MinRateGBps, MaxRateGBps] (NaN and
// infinities included), naming what gave it.
func checkRate(what string, gbps float64) error {
	if gbps >= MinRateGBps && gbps <= MaxRateGBps {
		return nil
	}
	return fmt.Errorf("%s %g: give a rate in GB/s between %g and %g (PCIe 5.0 x16 moves %.1f GB/s per direction)",
		what, gbps, MinRateGBps, float64(MaxRateGBps), DefaultLinkGBps)
}

// readRunRates reads the pinned copy timings (results JSON) and the PCIe
// link (run.json) of a run folder.
func readRunRates(dir string, r *audit.Rates) error {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return &capture.InputError{Path: dir, Problem: "not a run folder", Err: err,
			Hint: "--rates takes the folder 'nsyscheck run' wrote (with run.json and pinned.results.json)"}
	}
	r.Source = dir
	results := filepath.Join(dir, runner.ResultsFile)
	if _, err := os.Stat(results); err != nil {
		m, _ := filepath.Glob(filepath.Join(dir, "*.results.json"))
		if len(m) != 1 {
			return &capture.InputError{Path: dir, Problem: "no " + runner.ResultsFile + " in the run folder",
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
			if err := checkRate(fmt.Sprintf("%s: the pinned %s copy of %d bytes in %g ms is", results, cp.Direction, cp.Bytes, cp.Ms), gbps); err != nil {
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
	if data, err := regular.ReadFile(filepath.Join(dir, runner.InfoFile), runner.MaxInfoFile); err == nil {
		var info runner.Info
		if json.Unmarshal(data, &info) == nil && info.GPU != nil && info.GPU.PCIe.RatedGBps > 0 {
			p := info.GPU.PCIe
			if err := checkRate(filepath.Join(dir, runner.InfoFile)+": the link's rated rate", p.RatedGBps); err != nil {
				return err
			}
			r.LinkGBps = p.RatedGBps
			r.LinkSource = fmt.Sprintf("PCIe %d.0 x%d of %s, from %s", p.GenMax, p.WidthMax, info.GPU.Name, filepath.Join(dir, runner.InfoFile))
		}
	}
	if len(r.Copies) == 0 && r.AsyncCallNs == 0 {
		return &capture.InputError{Path: results, Problem: "the run's results hold no pinned copy timings",
			Hint: "--rates takes the folder of a complete 'nsyscheck run'"}
	}
	return nil
}

// nvidiaRule sets NVIDIA's cuda_memcpy_async rule beside the audit: run by
// nsys analyze on the capture's SQLite export when nsys is installed, else
// read from NAME_cuda_memcpy_async.csv beside the capture.
func nvidiaRule(ctx context.Context, au *audit.Audit, scan *capture.CopyScan, nsysOverride string) {
	var db string
	for _, f := range scan.Files {
		if k, err := nsysdb.Detect(f); err == nil && k == nsysdb.KindSQLite {
			db = f
		}
	}
	var notes []string
	if db != "" {
		if nsysPath, err := capture.FindNsys(nsysOverride); err == nil {
			flagged, err := runner.AnalyzeAll(ctx, nsysPath, db)
			if err == nil {
				au.CompareRule(runner.AnalyzeRule, "nsys analyze -r "+runner.AnalyzeAllArg+" on "+db, flaggedOf(flagged))
				return
			}
			notes = append(notes, err.Error())
		} else {
			notes = append(notes, "nsys is not installed here")
		}
	} else {
		notes = append(notes, "the capture has no SQLite export for nsys analyze")
	}
	if p := ruleCSVBeside(scan.Path); p != "" {
		rows, err := runner.ReadAnalyze(p)
		if err != nil {
			au.RuleUnavailable(runner.AnalyzeRule, err.Error())
			return
		}
		src := "the rule's CSV beside the capture, " + p
		if len(rows) == runner.AnalyzeDefaultRows {
			src += fmt.Sprintf(" (exactly %d rows: nsys analyze's default limit; make it with -r %s to list every copy)",
				runner.AnalyzeDefaultRows, runner.AnalyzeAllArg)
		}
		au.CompareRule(runner.AnalyzeRule, src, flaggedOf(rows))
		return
	}
	notes = append(notes, "no *_"+runner.AnalyzeRule+".csv beside the capture")
	au.RuleUnavailable(runner.AnalyzeRule, strings.Join(notes, "; "))
}

func flaggedOf(rows []runner.FlaggedCopy) []audit.Flagged {
	out := make([]audit.Flagged, 0, len(rows))
	for _, r := range rows {
		out = append(out, audit.Flagged{PID: r.PID, Start: r.Start, Duration: r.Duration, MB: r.MB})
	}
	return out
}

// ruleCSVBeside finds the rule's CSV beside a capture: NAME_cuda_memcpy_async.csv
// for a file NAME.*, or the one *_cuda_memcpy_async.csv in a folder.
func ruleCSVBeside(path string) string {
	suffix := "_" + runner.AnalyzeRule + ".csv"
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if m, _ := filepath.Glob(filepath.Join(path, "*"+suffix)); len(m) == 1 {
			return m[0]
		}
		return ""
	}
	name := filepath.Base(path)
	for _, ext := range []string{capture.ExportSuffix, ".sqlite", ".nsys-rep", ".qdrep"} {
		if strings.HasSuffix(strings.ToLower(name), ext) {
			p := filepath.Join(filepath.Dir(path), name[:len(name)-len(ext)]+suffix)
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return ""
}
