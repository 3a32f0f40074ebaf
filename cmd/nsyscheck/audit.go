package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/check"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/nsysrule"
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
}

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

Text output wraps at the terminal's width (COLUMNS when set; 100 columns
when piped); a class whose row would not fit has its key on a line of its
own. -v lists every class and every evidence copy of each finding.
--format json writes the envelope every JSON output of nsyscheck shares
(docs/output.schema.json): kind "audit", one audit per capture as results,
and the check.

Exit status: 0 no copy breaks the rule (one capture) or the check held
(two), 1 some copy breaks it or the check died, 2 an input could not be
read or holds no answer (no copy records, or copies that join no call: the
audit is unavailable, and says what the capture lacks), 130 interrupted.`,
		Example: `  nsyscheck audit train-pageable/train.nsys-rep
  nsyscheck audit train-pageable/ train-pinned/ --format markdown
  nsyscheck audit app.sqlite --rates run/ --format json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			return runAudit(opts, args, s)
		},
	}
	addFormatFlag(cmd, &opts.Format, "output format: text, json or markdown")
	cmd.Flags().StringVar(&opts.Rates, "rates", "", "a run folder of 'nsyscheck run' on the same machine (`RUN_DIR`) whose pinned copy rates the prediction may use")
	cmd.Flags().Float64Var(&opts.LinkGBps, "link-gbps", 0, "the host-device link rate in GB/s, when no measured rate is at hand (default: the run folder's, else PCIe 5.0 x16)")
	cmd.Flags().StringVar(&opts.Nsys, "nsys", "", "nsys executable, to export .nsys-rep files and run NVIDIA's rule")
	cmd.Flags().StringVar(&opts.Rule, "nvidia-rule", "auto", "NVIDIA's "+nsysrule.Name+" rule beside the audit: auto or off")
	_ = cmd.RegisterFlagCompletionFunc("nvidia-rule", cobra.FixedCompletions([]string{"auto", "off"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().BoolVarP(&opts.Verbose, "verbose", "v", false, "text output: list every class and every evidence copy of each finding")
	cmd.Flags().StringVar(&opts.Expect, "expect", "", "compare the audit with the expected numbers in `FILE` (see docs/audit.md); its \"against\" names AFTER when one CAPTURE is given")
	return cmd
}

func runAudit(opts *auditOptions, args []string, s Streams) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if opts.Rule != "auto" && opts.Rule != "off" {
		return &statusError{code: exitError, err: fmt.Errorf("unknown --nvidia-rule %q: use auto or off", opts.Rule)}
	}
	var expect *audit.Expectation
	if opts.Expect != "" {
		var err error
		if expect, err = audit.ReadExpectation(opts.Expect); err != nil {
			return &statusError{code: exitError, err: err}
		}
		if expect.Against != "" && len(args) == 1 {
			args = append(args, filepath.Join(filepath.Dir(opts.Expect), expect.Against))
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
		return check.Audit(ctx, before, after, check.AuditOptions{Nsys: opts.Nsys, NoRule: opts.Rule == "off",
			RatesDir: opts.Rates, LinkGBps: opts.LinkGBps})
	})
	if ctx.Err() != nil {
		return &statusError{code: exitSignal, err: interruption(err, "auditing", args)}
	}
	if err != nil {
		return &statusError{code: exitError, err: err}
	}
	// Inputs are named as given, relative; an export in the user's cache
	// folder as "cache:", as verify names it.
	out.MapPaths(sharePaths(cacheRule()).apply)
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
	wopts := report.WriteOptions{Text: report.TextOptions{Width: textWidth(s.Out), Verbose: opts.Verbose}, Version: buildVersion()}
	if err := report.WriteAudit(s.Out, opts.Format, out, wopts); err != nil {
		return &statusError{code: exitError, err: err}
	}
	if expect != nil {
		diffs := expect.Compare(out)
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
	if !out.Passed() {
		return &statusError{code: exitDied}
	}
	return nil
}
