package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/check"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/nsysrule"
	"github.com/nsyscheck/nsyscheck/ranks"
	"github.com/nsyscheck/nsyscheck/report"
)

// auditOptions are audit's flags.
type auditOptions struct {
	Format   string
	Rates    string
	LinkGBps float64
	Nsys     string
	Rule     string
	Expect   string
	Verbose  bool
	PinBy    string
	Match    []string
	// FailAbove is --fail-above's PERCENT, given when FailAboveSet.
	FailAbove    float64
	FailAboveSet bool
	// Ranks audits each capture given as a rank of one job; Jobs is how
	// many at once.
	Ranks bool
	Jobs  int
}

func newAuditCmd(s Streams) *cobra.Command {
	opts := &auditOptions{}
	cmd := &cobra.Command{
		Use:   "audit CAPTURE [AFTER]",
		Short: "Predict what pinning does to an application's own time from a replay of its capture, and check it",
		Long: `audit answers what pinning the buffers of an application's host-device
copies would do to its own time. It reads the capture once into a timeline
of its calls, GPU operations and their dependencies, replays it as captured
(its fit says how far to trust it) and again with every copy from pageable
memory re-costed as pinned, at low, middle and high costs, and measures each
region: every NVTX range name, and the whole capture as (capture). Costs come
from the capture's own pinned copies of similar size, else a run folder of
'nsyscheck run' (--rates), else the link rate. It says which framework the
capture shows (PyTorch, CuPy, JAX, the CUDA runtime or driver API) and what
to change in its words.

Beneath the answer: every copy sorted into classes (API, direction, host
memory kind, size bucket, thread, stream, NVTX range) with its share of its
region, the lesson's findings with the correlation ids of their copies
(secretly synchronous pageable async copies, async copies that could not
overlap), and the host time the copy calls should save.

Given AFTER, a capture of the same program after the fix, it checks the
prediction region by region: held when every judged region's time after (its
median instance, or its span when most instances ran behind the host) lies in
its predicted bound, widened by the model's own error, the replay's fit and
the spread of the region's instances; died otherwise; unavailable when the
capture cannot show what the fix changed (XLA's own staging). The NVTX ranges
with copy calls are judged when there are any, else the whole capture. It
says when a region got no faster though its copy calls got shorter, and what
pinning cost in the capture after. Two captures that moved different bytes (by more than 1% of all they moved) or
ran different kernels are refused: they are not one program before and after.
--match NAME=AFTER_NAME compares differently named regions (two halves of one
capture: audit CAPTURE CAPTURE --match pageable=pinned).

Beside it stands NVIDIA's cuda_memcpy_async rule (--nvidia-rule): by default
(auto) read from NAME_cuda_memcpy_async.csv beside the capture, nsys's own
output, else answered by the rule's definition (runtime API async copies from
or to pageable memory) from the records the audit reads anyway, in the same
pass and with no run of nsys (17 ms of CPU for 600,000 copies); nsys, the
rule run by nsys analyze on the capture's export beside the audit, which
waits for it (on the H200 nsys analyze took 5.2 s on a 600,000-copy export
the audit read in 1.9 s); off, left out.

CAPTURE and AFTER may be a .nsys-rep, a .sqlite export, or a folder of nsys
stats CSV reports (*_cuda_api_trace.csv and *_cuda_gpu_trace.csv, optionally
*_nvtx_pushpop_trace.csv). See docs/audit.md.

--ranks audits the captures of one distributed job, one per rank (nsys
profile -o report.%q{RANK}): each CAPTURE a capture, a folder of them, or a
quoted pattern such as 'run/report.*.nsys-rep', audited -j at once (default:
the machine's cores), and sets them side by side: a row per rank (its
copies, the share from pageable memory, the judged region's time now and
pinned, the host time pinning saves) and the ranks that stand out against
their peers (slower than 1.18x the others' median, or 10 points more
pageable). The JSON of earlier --ranks audits (--format json, one per shard
of ranks of a Slurm array, say) is read back and merged into the one table.
See docs/fleet.md.

Text output leads with the answer: the verdict, the region table and what
explains it, what to change. It wraps at the terminal's width (COLUMNS when
set; 100 columns when piped); a class whose row would not fit has its key on
a line of its own. -v lists every class, and of each finding every evidence
copy kept: the 10 whose calls held the host longest (a finding counts all).
--format json writes the envelope every JSON output of nsyscheck shares
(docs/output.schema.json): kind "audit", one audit per capture as results,
and the check.

Exit status: 0 no copy breaks the rule (one capture; with --fail-above, no
judged region's pageable copy calls hold the host above PERCENT of its median
instance) or the check held (two), 1 otherwise (the check died or was
unavailable), 2 an input could not be read, the captures are not of one
program, or a capture holds no answer (no copy records, or copies that join
no call: the audit is unavailable and says what the capture lacks), 130
interrupted.`,
		Example: `  nsyscheck audit train-pageable/train.nsys-rep
  nsyscheck audit train-pageable/ train-pinned/ --format markdown
  nsyscheck audit app.sqlite --fail-above 5
  nsyscheck audit app.sqlite --rates run/ --format json
  nsyscheck audit --ranks 'run/report.*.nsys-rep' -j 8`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.FailAboveSet = c.Flags().Changed("fail-above")
			if opts.Ranks {
				return runAuditRanks(opts, args, s)
			}
			if len(args) > 2 {
				return &statusError{code: exitError, err: fmt.Errorf("audit takes CAPTURE and at most AFTER; to audit %d captures of one job's ranks, give --ranks", len(args))}
			}
			if c.Flags().Changed("jobs") {
				return &statusError{code: exitError, err: fmt.Errorf("-j sets how many captures --ranks audits at once; give --ranks")}
			}
			return runAudit(opts, args, s)
		},
	}
	addFormatFlag(cmd, &opts.Format, "output format: text, json or markdown")
	cmd.Flags().StringVar(&opts.Rates, "rates", "", "a run folder of 'nsyscheck run' on the same machine (`RUN_DIR`) whose pinned copy rates the prediction may use")
	cmd.Flags().Float64Var(&opts.LinkGBps, "link-gbps", 0, "the host-device link rate in GB/s, when no measured rate is at hand (default: the run folder's, else the usual link of the capture's GPU, else PCIe 5.0 x16)")
	cmd.Flags().StringVar(&opts.Nsys, "nsys", "", "nsys executable, to export .nsys-rep files and run NVIDIA's rule")
	cmd.Flags().StringVar(&opts.Rule, "nvidia-rule", ruleAuto, "NVIDIA's "+nsysrule.Name+" rule beside the audit: auto (its CSV beside the capture, else answered from the audit's own records; no nsys run), nsys (run by nsys analyze beside the audit, which waits for it: seconds on a large capture) or off")
	_ = cmd.RegisterFlagCompletionFunc("nvidia-rule", cobra.FixedCompletions([]string{ruleAuto, ruleNsys, ruleOff}, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().BoolVarP(&opts.Verbose, "verbose", "v", false, "text output: list every class, and of each finding the 10 evidence copies kept")
	cmd.Flags().StringVar(&opts.PinBy, "pin-by", "", "how the program is to pin its buffers: in-place (allocated pinned and reused), copy (each copied into pinned memory, as tensor.pin_memory() of each batch does) or pin-thread (each copied by a pin thread of the program's interpreter, as DataLoader(pin_memory=True) with workers does); default as AFTER shows it, else from the framework the capture shows")
	_ = cmd.RegisterFlagCompletionFunc("pin-by", cobra.FixedCompletions([]string{"in-place", "copy", "pin-thread"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().StringArrayVar(&opts.Match, "match", nil, "compare region `NAME=AFTER_NAME` of CAPTURE with the region AFTER_NAME of AFTER (repeatable); only the regions named are judged")
	cmd.Flags().Float64Var(&opts.FailAbove, "fail-above", 0, "one capture: exit 1 only when copies from pageable memory hold the host for more than `PERCENT` of some region's median instance (per NVTX range name with copies, else (capture))")
	cmd.Flags().BoolVar(&opts.Ranks, "ranks", false, "audit each CAPTURE (a capture, a folder of them, a quoted pattern, or the JSON of earlier --ranks audits) as a rank of one job, and set them side by side")
	cmd.Flags().IntVarP(&opts.Jobs, "jobs", "j", 0, "with --ranks: how many captures to audit at once (default: the machine's cores)")
	cmd.Flags().StringVar(&opts.Expect, "expect", "", "compare the audit with the expected numbers in `FILE` (see docs/audit.md); its \"against\" names AFTER when one CAPTURE is given")
	return cmd
}

// --nvidia-rule's values.
const (
	ruleAuto = "auto"
	ruleNsys = "nsys"
	ruleOff  = "off"
)

// ruleMode reads --nvidia-rule: whether the rule is left out, and whether
// nsys analyze runs it.
func ruleMode(v string) (off, nsys bool, err error) {
	switch v {
	case ruleAuto:
		return false, false, nil
	case ruleNsys:
		return false, true, nil
	case ruleOff:
		return true, false, nil
	}
	return false, false, &statusError{code: exitError, err: fmt.Errorf("unknown --nvidia-rule %q: use auto (the rule's CSV beside the capture, else answered from the audit's own records), nsys (run by nsys analyze) or off", v)}
}

// auditGates reads --match and --fail-above for an audit of n captures.
func auditGates(opts *auditOptions, n int) (map[string]string, *float64, error) {
	match, err := matchOf(opts.Match)
	if err != nil || !opts.FailAboveSet {
		return match, nil, err
	}
	if !(opts.FailAbove >= 0 && opts.FailAbove <= 100) {
		return nil, nil, fmt.Errorf("--fail-above %g: give a percentage between 0 and 100 of a region's median instance", opts.FailAbove)
	}
	if n > 1 {
		return nil, nil, fmt.Errorf("--fail-above gates a one-capture audit; with AFTER the check decides the exit status")
	}
	share := opts.FailAbove / 100
	return match, &share, nil
}

// matchOf reads --match NAME=AFTER_NAME flags.
func matchOf(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	// of is the region of CAPTURE each region of AFTER is matched to: one
	// region after, judged against two before, would be one time checked
	// against two predictions.
	of := map[string]string{}
	for _, f := range flags {
		b, a, ok := strings.Cut(f, "=")
		if !ok || b == "" || a == "" {
			return nil, fmt.Errorf("--match %q: give NAME=AFTER_NAME, a region of CAPTURE and the region of AFTER to compare it with", f)
		}
		if _, dup := m[b]; dup {
			return nil, fmt.Errorf("--match: region %s is matched twice; keep one", b)
		}
		if first, dup := of[a]; dup {
			return nil, fmt.Errorf("--match: region %s of AFTER is matched twice, to %s and to %s of CAPTURE, so its one time would be judged against two predictions; match each region of AFTER once", a, first, b)
		}
		m[b] = a
		of[a] = b
	}
	return m, nil
}

func runAudit(opts *auditOptions, args []string, s Streams) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	noRule, nsysRule, err := ruleMode(opts.Rule)
	if err != nil {
		return err
	}
	match, failAbove, err := auditGates(opts, len(args))
	if err != nil {
		return &statusError{code: exitError, err: err}
	}
	var expect *audit.Expectation
	if opts.Expect != "" {
		if expect, err = audit.ReadExpectation(opts.Expect); err != nil {
			return &statusError{code: exitError, err: err}
		}
		if expect.Against != "" && len(args) == 1 {
			against := filepath.Join(filepath.Dir(opts.Expect), expect.Against)
			if _, err := os.Stat(against); errors.Is(err, fs.ErrNotExist) {
				return &statusError{code: exitError, err: &inputerr.Error{Path: opts.Expect, Where: `"against"`,
					Problem: fmt.Sprintf("%q names %s (relative to the file's folder), which does not exist", expect.Against, against),
					Hint:    "name the capture after the fix relative to " + filepath.Dir(opts.Expect) + ", or give it as AFTER"}}
			}
			args = append(args, against)
		}
		if match == nil {
			match = expect.Match
		}
	}
	after := ""
	if len(args) > 1 {
		after = args[1]
	}
	ctx, stop := signalContext()
	defer stop()
	// Inputs are named relative to the working folder, so that nothing the
	// audit prints names a home folder (as verify's output does).
	before := shownPath(args[0])
	if after != "" {
		after = shownPath(after)
	}
	out, err := untilInterrupted(ctx, func() (*audit.Output, error) {
		return check.Audit(ctx, before, after, check.AuditOptions{Nsys: opts.Nsys, Env: s.Env, NoRule: noRule, NsysRule: nsysRule,
			RatesDir: opts.Rates, LinkGBps: opts.LinkGBps, PinBy: opts.PinBy, Match: match, FailAbove: failAbove})
	})
	if ctx.Err() != nil {
		return &statusError{code: exitSignal, err: interruption(err, "auditing", args)}
	}
	if err != nil && expect != nil && expect.Refused != nil {
		// The expected answer is a refusal: the capture holds no answer.
		return expectedRefusal(s, opts.Expect, expect.CompareRefusal(err), report.Refused(err))
	}
	if err != nil && opts.Format == report.FormatJSON {
		// A refusal is a JSON document too, carrying why and what the
		// capture said of itself; the exit status stays the refusal's.
		var ds []diag.Diagnostic
		if r := (*audit.Refusal)(nil); errors.As(err, &r) {
			ds = r.Diagnostics
		}
		inputs := []string{before}
		if after != "" {
			inputs = append(inputs, after)
		}
		env := report.AuditRefusalEnvelope(inputs, report.Refused(err), ds, buildVersion())
		env.Refused.Input = sharePaths(cacheRule(s.Env)).apply(env.Refused.Input)
		if werr := report.WriteJSON(s.Out, env); werr != nil {
			return &statusError{code: exitError, err: werr}
		}
	}
	if err != nil {
		return &statusError{code: exitError, err: report.Refused(err)}
	}
	// Inputs are named as given, relative; an export in the user's cache
	// folder as "cache:", as verify names it.
	out.MapPaths(sharePaths(cacheRule(s.Env)).apply)
	for _, au := range []*audit.Audit{out.Before, out.After} {
		if au == nil {
			continue
		}
		for _, d := range au.Diagnostics {
			if d.Code() == diag.CodeInputSubstituted {
				fmt.Fprintf(s.Err, "%s: %s\n", au.Capture, report.DiagnosticText(d))
			}
		}
	}
	wopts := report.WriteOptions{Text: report.TextOptions{Width: textWidth(s.Out, s.Env), Verbose: opts.Verbose}, Version: buildVersion()}
	if err := report.WriteAudit(s.Out, opts.Format, out, wopts); err != nil {
		return &statusError{code: exitError, err: err}
	}
	if expect != nil {
		diffs := expect.Compare(out)
		if len(diffs) > 0 {
			fmt.Fprintf(s.Err, "audit differs from %s:\n", opts.Expect)
			for _, d := range diffs {
				fmt.Fprintf(s.Err, "  %s\n", report.ExpectDifference(d))
			}
			return &statusError{code: exitDied}
		}
		fmt.Fprintf(s.Err, "audit matches %s\n", opts.Expect)
		return nil
	}
	if !out.Passed() {
		return &statusError{code: exitDied}
	}
	return nil
}

// expectedRefusal reports the audit's refusal (err) against an expected
// one: a match exits 0, saying why it was refused; differences exit 1.
func expectedRefusal(s Streams, file string, diffs []audit.ExpectDifference, err error) error {
	if len(diffs) > 0 {
		fmt.Fprintf(s.Err, "audit differs from %s:\n", file)
		for _, d := range diffs {
			fmt.Fprintf(s.Err, "  %s\n", report.ExpectDifference(d))
		}
		return &statusError{code: exitDied}
	}
	fmt.Fprintf(s.Err, "audit matches %s: refused, as expected: %v\n", file, err)
	return nil
}

// runAuditRanks audits the captures of a job's ranks (--ranks) and writes
// their table. Exit status: 2 a rank's capture could not be audited, 1 a
// rank's copies break the rule or a rank stands out, 0 otherwise.
func runAuditRanks(opts *auditOptions, args []string, s Streams) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	noRule, nsysRule, err := ruleMode(opts.Rule)
	if err != nil {
		return err
	}
	if opts.Expect != "" || opts.FailAboveSet || len(opts.Match) > 0 || opts.PinBy != "" {
		return &statusError{code: exitError, err: fmt.Errorf("--ranks sets each rank beside its peers: --expect, --fail-above, --match and --pin-by are for one capture or one pair")}
	}
	if opts.Jobs < 0 {
		return &statusError{code: exitError, err: fmt.Errorf("-j %d: give how many captures to audit at once, 1 or more", opts.Jobs)}
	}
	ctx, stop := signalContext()
	defer stop()
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = shownPath(a)
		if opts.Format == "json" && filepath.IsAbs(a) {
			// A shard's JSON is merged where it was not written: the
			// path shown relative to this folder would name nothing there.
			shown[i] = filepath.Clean(a)
		}
	}
	type result struct {
		s *ranks.Summary
		a []ranks.Audited
	}
	res, err := untilInterrupted(ctx, func() (result, error) {
		sum, audited, err := check.AuditRanks(ctx, shown, check.RanksOptions{Jobs: opts.Jobs, AuditOptions: check.AuditOptions{Nsys: opts.Nsys, Env: s.Env,
			NoRule: noRule, NsysRule: nsysRule, RatesDir: opts.Rates, LinkGBps: opts.LinkGBps}})
		return result{sum, audited}, err
	})
	if ctx.Err() != nil {
		return &statusError{code: exitSignal, err: interruption(err, "auditing", args)}
	}
	if err != nil {
		return &statusError{code: exitError, err: err}
	}
	share := sharePaths(cacheRule(s.Env)).apply
	for i := range res.a {
		if au := res.a[i].Audit; au != nil {
			(&audit.Output{Before: au}).MapPaths(share)
		}
		res.a[i].Capture = share(res.a[i].Capture)
	}
	for i := range res.s.Rows {
		res.s.Rows[i].Capture = share(res.s.Rows[i].Capture)
	}
	wopts := report.WriteOptions{Text: report.TextOptions{Width: textWidth(s.Out, s.Env), Verbose: opts.Verbose}, Version: buildVersion()}
	if err := report.WriteRanks(s.Out, opts.Format, res.s, res.a, wopts); err != nil {
		return &statusError{code: exitError, err: err}
	}
	failed, broken := false, len(res.s.Findings) > 0
	for _, a := range res.a {
		switch {
		case a.Audit == nil:
			failed = true
		case !(&audit.Output{Before: a.Audit}).Passed():
			broken = true
		}
	}
	switch {
	case failed:
		return &statusError{code: exitError}
	case broken:
		return &statusError{code: exitDied}
	}
	return nil
}
