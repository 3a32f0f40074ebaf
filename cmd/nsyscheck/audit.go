package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/privacy"
	"github.com/nsyscheck/nsyscheck/runner"
)

// auditOptions are audit's flags.
type auditOptions struct {
	Format   string
	Rates    string
	LinkGBps float64
	Nsys     string
	Rule     string
	Expect   string
}

// defaultLinkGBps is the link rate assumed when neither a run folder nor
// --link-gbps gives one: PCIe 5.0 x16 per direction after line encoding.
var defaultLinkGBps = runner.RatedGBps(5, 16)

func newAuditCmd(s Streams) *cobra.Command {
	opts := &auditOptions{}
	cmd := &cobra.Command{
		Use:   "audit CAPTURE [AFTER]",
		Short: "Apply the pinned-memory rule to any application's capture, predict what pinning saves, and check it",
		Long: `audit reads every host-device memory copy of an application's capture and
sorts the copies into classes: API (blocking or async), direction, host
memory kind (pageable, pinned, managed, unknown), size bucket, process and
thread, stream and innermost NVTX range. For each class it gives the count,
bytes, host time held by the calls, GPU time and bandwidth, and names the
classes that cost the host most.

It then applies the lesson's rule: pageable async copies whose call held the
host for at least 80% of the copy are secretly synchronous, and async copies
whose call outlasted the copy could not overlap anything. Each finding lists
the correlation ids of its copies.

It predicts the host time pinning the pageable copies would save, from the
capture's own pinned copies of similar size, else a run folder of
'nsyscheck run' (--rates), else the link rate, and says which with a bound.

Given AFTER, a capture of the same program after the fix, it checks that
prediction: host time in host-to-device copy calls before and after, bytes
moved (the same within 1%, else a warning), pageable host-to-device copies
gone; the verdict is held or died.

Beside it stands NVIDIA's cuda_memcpy_async rule: run with nsys analyze when
nsys is installed and the capture is a .nsys-rep or SQLite export, else read
from NAME_cuda_memcpy_async.csv beside the capture.

CAPTURE and AFTER may be a .nsys-rep, a .sqlite export, or a folder of nsys
stats CSV reports (*_cuda_api_trace.csv and *_cuda_gpu_trace.csv, optionally
*_nvtx_pushpop_trace.csv). See docs/audit.md.

Exit status: 0 no copy breaks the rule (one capture) or the check held
(two), 1 some copy breaks it or the check died, 2 an input could not be read.`,
		Example: `  nsyscheck audit train-pageable/train.nsys-rep
  nsyscheck audit train-pageable/ train-pinned/ --format markdown
  nsyscheck audit app.sqlite --rates run/ --format json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			return runAudit(opts, args, s)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "text", "output format: text, json or markdown")
	cmd.Flags().StringVar(&opts.Rates, "rates", "", "a run folder of 'nsyscheck run' on the same machine (`RUN_DIR`) whose pinned copy rates the prediction may use")
	cmd.Flags().Float64Var(&opts.LinkGBps, "link-gbps", 0, "the host-device link rate in GB/s, when no measured rate is at hand (default: the run folder's, else PCIe 5.0 x16)")
	cmd.Flags().StringVar(&opts.Nsys, "nsys", "", "nsys executable, to export .nsys-rep files and run NVIDIA's rule")
	cmd.Flags().StringVar(&opts.Rule, "nvidia-rule", "auto", "NVIDIA's cuda_memcpy_async rule beside the audit: auto or off")
	cmd.Flags().StringVar(&opts.Expect, "expect", "", "compare the audit with the expected numbers in `FILE` (see docs/audit.md); its \"against\" names AFTER when one CAPTURE is given")
	return cmd
}

// AuditOutput is the JSON form of `audit`: one audit, or two and the check.
type AuditOutput struct {
	SchemaVersion string       `json:"schemaVersion"`
	Before        *audit.Audit `json:"before"`
	After         *audit.Audit `json:"after,omitempty"`
	Check         *audit.Check `json:"check,omitempty"`
}

func runAudit(opts *auditOptions, args []string, s Streams) error {
	switch opts.Format {
	case "text", "json", "markdown":
	default:
		return &statusError{code: exitError, err: fmt.Errorf("unknown --format %q: use text, json or markdown", opts.Format)}
	}
	if opts.Rule != "auto" && opts.Rule != "off" {
		return &statusError{code: exitError, err: fmt.Errorf("unknown --nvidia-rule %q: use auto or off", opts.Rule)}
	}
	rates, err := auditRates(opts)
	if err != nil {
		return &statusError{code: exitError, err: err}
	}
	var expect *auditExpectation
	if opts.Expect != "" {
		if expect, err = readAuditExpectation(opts.Expect); err != nil {
			return &statusError{code: exitError, err: err}
		}
		if expect.Against != "" && len(args) == 1 {
			args = append(args, filepath.Join(filepath.Dir(opts.Expect), expect.Against))
		}
	}
	out := AuditOutput{SchemaVersion: audit.SchemaVersion}
	for i, p := range args {
		au, err := auditCapture(p, opts, rates)
		if err != nil {
			return &statusError{code: exitError, err: err}
		}
		if i == 0 {
			out.Before = au
		} else {
			out.After = au
		}
	}
	if out.After != nil {
		out.Check = audit.Compare(out.Before, out.After)
	}
	if err := writeAudit(s.Out, opts.Format, &out); err != nil {
		return &statusError{code: exitError, err: err}
	}
	if expect != nil {
		diffs := expect.compare(&out)
		if len(diffs) > 0 {
			fmt.Fprintf(s.Err, "audit differs from %s:\n", opts.Expect)
			for _, d := range diffs {
				fmt.Fprintf(s.Err, "  %s\n", d)
			}
			return &statusError{code: exitDied}
		}
		fmt.Fprintf(s.Err, "audit matches %s\n", opts.Expect)
		return nil
	}
	if out.Check != nil {
		if out.Check.Verdict != audit.Held {
			return &statusError{code: exitDied}
		}
		return nil
	}
	for _, f := range out.Before.Findings {
		if f.Count > 0 {
			return &statusError{code: exitDied}
		}
	}
	return nil
}

// auditCapture streams one capture's copies into an audit and sets NVIDIA's
// rule beside it.
func auditCapture(path string, opts *auditOptions, rates *audit.Rates) (*audit.Audit, error) {
	// A capture file given directly is scanned for exposures while its
	// copies stream: the scan reads the file's bytes, the stream SQLite's.
	var early chan []string
	if exposable(path) {
		early = make(chan []string, 1)
		go func() { early <- exposures(path) }()
	}
	acc := audit.NewAccumulator()
	scan, err := capture.StreamCopies(path, capture.Options{Nsys: opts.Nsys}, acc.Add)
	if err != nil {
		if early != nil {
			<-early
		}
		return nil, err
	}
	au := acc.Finish(scan, rates)
	if early != nil {
		au.Exposures = append(au.Exposures, <-early...)
	}
	for _, f := range scan.Files {
		if f != path && exposable(f) {
			au.Exposures = append(au.Exposures, exposures(f)...)
		}
	}
	if opts.Rule == "auto" {
		nvidiaRule(au, scan, opts)
	} else {
		au.RuleUnavailable(runner.AnalyzeRule, "not asked for (--nvidia-rule off)")
	}
	return au, nil
}

// exposable reports whether a file is one the exposure scan reads: an
// SQLite export or a .nsys-rep, not nsyscheck's own export of one.
func exposable(f string) bool {
	ext := strings.ToLower(filepath.Ext(f))
	if st, err := os.Stat(f); err != nil || st.IsDir() {
		return false
	}
	return (ext == ".sqlite" || ext == ".nsys-rep") && !strings.HasSuffix(f, ".nsyscheck.sqlite")
}

// exposures scans a capture file for what it reveals beyond the run, with
// verify's rules (attachExposure).
func exposures(f string) []string {
	rep, err := privacy.Scan(f)
	if err != nil {
		return []string{fmt.Sprintf("could not scan %s: %v", f, err)}
	}
	var out []string
	for _, d := range rep.Diagnostics() {
		out = append(out, d.Message)
	}
	return out
}

// auditRates gathers the rates the prediction may use besides the capture's
// own: the run folder's pinned copies and link, and the link rate.
func auditRates(opts *auditOptions) (*audit.Rates, error) {
	r := &audit.Rates{LinkGBps: defaultLinkGBps, LinkSource: "assumed PCIe 5.0 x16; pass --link-gbps or --rates to give the real link"}
	if opts.Rates != "" {
		if err := readRunRates(opts.Rates, r); err != nil {
			return nil, err
		}
	}
	if opts.LinkGBps < 0 {
		return nil, fmt.Errorf("--link-gbps %g: give a positive rate in GB/s", opts.LinkGBps)
	}
	if opts.LinkGBps > 0 {
		r.LinkGBps, r.LinkSource = opts.LinkGBps, "--link-gbps"
	}
	return r, nil
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
			if cp.Source != "pinned" || cp.Ms <= 0 {
				continue
			}
			dir := capture.CopyHtoD
			if cp.Direction == "d2h" {
				dir = capture.CopyDtoH
			}
			r.Copies = append(r.Copies, audit.RatePoint{Direction: dir, Bytes: cp.Bytes, GBps: float64(cp.Bytes) / (cp.Ms * 1e6)})
		}
		for _, a := range c.Program.Async {
			if a.Source == "pinned" && a.CallMs > 0 {
				r.AsyncCallNs = a.CallMs * 1e6
			}
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, runner.InfoFile)); err == nil {
		var info runner.Info
		if json.Unmarshal(data, &info) == nil && info.GPU != nil && info.GPU.PCIe.RatedGBps > 0 {
			p := info.GPU.PCIe
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
func nvidiaRule(au *audit.Audit, scan *capture.CopyScan, opts *auditOptions) {
	var db string
	for _, f := range scan.Files {
		if strings.HasSuffix(strings.ToLower(f), ".sqlite") {
			db = f
		}
	}
	var notes []string
	if db != "" {
		if nsys, err := capture.FindNsys(opts.Nsys); err == nil {
			flagged, err := analyzeAll(nsys, db)
			if err == nil {
				au.CompareRule(runner.AnalyzeRule, "nsys analyze -r "+analyzeArg+" on "+db, flagged)
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
		if len(rows) == 50 {
			src += " (exactly 50 rows: nsys analyze's default limit; make it with -r " + analyzeArg + " to list every copy)"
		}
		au.CompareRule(runner.AnalyzeRule, src, flaggedOf(rows))
		return
	}
	notes = append(notes, "no *_"+runner.AnalyzeRule+".csv beside the capture")
	au.RuleUnavailable(runner.AnalyzeRule, strings.Join(notes, "; "))
}

// analyzeArg runs the rule with no row limit (its default lists 50 rows).
const analyzeArg = runner.AnalyzeRule + ":rows=-1"

// analyzeAll runs the rule on an SQLite export into a temporary folder and
// reads its CSV.
func analyzeAll(nsys, db string) ([]audit.Flagged, error) {
	tmp, err := os.MkdirTemp("", "nsyscheck-analyze-")
	if err != nil {
		return nil, fmt.Errorf("nsys analyze: %w", err)
	}
	defer os.RemoveAll(tmp)
	base := filepath.Join(tmp, "rule")
	out, err := exec.Command(nsys, "analyze", "-r", analyzeArg, "--format", "csv", "-o", base, db).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 300 {
			msg = "..." + msg[len(msg)-300:]
		}
		return nil, fmt.Errorf("nsys analyze failed (%v): %s", err, msg)
	}
	m, _ := filepath.Glob(filepath.Join(tmp, "*"+runner.AnalyzeRule+"*.csv"))
	if len(m) == 0 {
		// A rule that found nothing still writes its (empty) CSV.
		return nil, errors.New("nsys analyze wrote no CSV: " + strings.TrimSpace(string(out)))
	}
	rows, err := runner.ReadAnalyze(m[0])
	if err != nil {
		return nil, err
	}
	return flaggedOf(rows), nil
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
	for _, ext := range []string{".nsyscheck.sqlite", ".sqlite", ".nsys-rep", ".qdrep"} {
		if strings.HasSuffix(strings.ToLower(name), ext) {
			p := filepath.Join(filepath.Dir(path), name[:len(name)-len(ext)]+suffix)
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return ""
}

func writeAudit(w io.Writer, format string, out *AuditOutput) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "markdown":
		return audit.WriteMarkdown(w, out.Before, out.After, out.Check)
	}
	if err := out.Before.WriteText(w); err != nil {
		return err
	}
	if out.After != nil {
		fmt.Fprintln(w)
		if err := out.After.WriteText(w); err != nil {
			return err
		}
	}
	if out.Check != nil {
		return out.Check.WriteText(w)
	}
	return nil
}
