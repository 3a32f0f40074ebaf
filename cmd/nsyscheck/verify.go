package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	nsyscheck "github.com/nsyscheck/nsyscheck"
	"github.com/nsyscheck/nsyscheck/check"
	"github.com/nsyscheck/nsyscheck/coverage"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/fleet"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/privacy"
	"github.com/nsyscheck/nsyscheck/program"
	"github.com/nsyscheck/nsyscheck/report"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// verifyOptions are verify's flags.
type verifyOptions struct {
	Format         string
	Expect         string
	Nsys           string
	FailOnExposure bool
	Verbose        bool
	Reference      string
}

func newVerifyCmd(s Streams) *cobra.Command {
	opts := &verifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify [CAPTURE...]",
		Short: "Verify the lesson's predictions against one or more captures",
		Long: `verify reads each CAPTURE and gives a verdict (held, died or unavailable) for
every claim of the lesson's four predictions, with the numbers that decided it.

CAPTURE may be:
  a .nsys-rep report       exported to SQLite with nsys (cached beside it as
                           NAME.nsyscheck.sqlite, or in the user cache folder)
  a .sqlite export         nsys export --type sqlite
  a folder                 a run folder, or one holding an export or the
                           nsys stats CSV reports (*_cuda_api_trace.csv, ...)
  a transcript             the bundled program's standard output
  a .json file             the program's results JSON, or a measurements file
                           (see docs/measurements.md)

Several captures are verified side by side in one table. Run folders of
two or more GPUs also get the fleet table after the verdicts (in JSON, the
envelope's "fleet"): each GPU's pinned bandwidth against its rated link and
its peers (docs/fleet.md).

Text output wraps at the terminal's width (COLUMNS when set; 100 columns
when the output is not a terminal). Per claim it shows the verdict, the
measured value with its unit against the bound, the statement, and the
evidence line that decided it; -v shows every evidence line of every source. With no CAPTURE,
verify checks the real H200 capture shipped inside nsyscheck.

--expect FILE compares the verdicts with an expected set ({"claims":
{"1.floor": "held", ...}, "predictions": {"1": "held", ...}}): a mismatch
prints the differences and exits 1; a match exits 0, even where the expected
verdict is "died".

--reference REF checks the lesson's exercise against a reference capture
or measurements file, as the lesson asks: the host-to-device
pageable/pinned ratio at 64 MiB within 20% of the reference's, and no
pinned row at that size slower than its pageable one (else the pinned
buffer probably is not pinned). The check has its own verdict, beside the
predictions'; one that did not hold makes verify exit 1.

--fail-on-exposure makes verify fail, with exit status 3, when a capture
exposes more of its machine than the check needs (capture-exposes warnings:
environment variables outside the allowlist, other processes, secrets), or
when a capture could not be scanned whole (a capture-scan-failed warning:
nothing says it is safe), so that CI can refuse to publish it.

Exit status: 0 every prediction held (or --expect matched), 1 some
prediction died or was unavailable (or --expect did not match, or the
--reference check did not hold), 2 an input
could not be read, 3 --fail-on-exposure was given and a capture exposes its
machine (this wins over 1), 130 interrupted (Ctrl-C or SIGTERM, within a
second: an nsys export under way is stopped and its partial file removed). A control the input cannot check (4.bytes) is
named beside its prediction ("bytes unchecked: ...") and does not fail it.`,
		Example: `  nsyscheck verify
  nsyscheck verify run/pinned.sqlite --format json
  nsyscheck verify capA.nsys-rep capB/ lesson.json
  nsyscheck verify capture/ --expect capture/expect.json`,
		RunE: func(c *cobra.Command, args []string) error {
			return runVerify(opts, args, s)
		},
	}
	addFormatFlag(cmd, &opts.Format, "output format: text, json or markdown")
	cmd.Flags().StringVar(&opts.Expect, "expect", "", "compare verdicts with the expected set in `FILE` (one CAPTURE only)")
	cmd.Flags().StringVar(&opts.Nsys, "nsys", "", "nsys executable used to export .nsys-rep files")
	addReferenceFlag(cmd, &opts.Reference)
	cmd.Flags().BoolVarP(&opts.Verbose, "verbose", "v", false, "text output: show every evidence line of every source, not only the line that decided each claim")
	cmd.Flags().BoolVar(&opts.FailOnExposure, "fail-on-exposure", false, "exit 3 when a capture exposes environment variables, other processes or secrets (capture-exposes warnings), or could not be scanned whole, whatever the verdicts")
	return cmd
}

// loadAndCheck runs the check pipeline on every path. With no path it
// unpacks and uses the shipped capture. ctx is cancelled by SIGINT and
// SIGTERM (signalContext): a signal while it runs stops an nsys export
// (its whole process group) and removes its temporary files, and the
// command then exits with status 130. The returned cleanup removes the
// unpacked shipped capture.
func loadAndCheck(ctx context.Context, paths []string, nsys string, s Streams) ([]*check.Checked, func(), error) {
	cleanup := func() {}
	shipped := len(paths) == 0
	if shipped {
		dir, err := nsyscheck.WriteShipped("")
		if err != nil {
			return nil, cleanup, &statusError{code: exitError, err: err}
		}
		cleanup = func() { _ = os.RemoveAll(strings.TrimSuffix(dir, nsyscheck.ShippedName)) }
		fmt.Fprintf(s.Err, "No capture given: verifying %s, the H200 capture inside nsyscheck.\n"+
			"To verify your own: its .nsys-rep, .sqlite, CSV folder, transcript or JSON.\n\n", nsyscheck.ShippedName)
		paths = []string{dir}
	}
	checked, err := untilInterrupted(ctx, func() ([]*check.Checked, error) {
		return check.Paths(paths, check.Options{Nsys: nsys, Context: ctx, Env: s.Env})
	})
	if ctx.Err() != nil {
		return nil, cleanup, &statusError{code: exitSignal, err: interruption(err, "reading and checking", paths)}
	}
	if err != nil {
		return nil, cleanup, &statusError{code: exitError, err: err}
	}
	for i, k := range checked {
		for _, n := range k.Capture.Notes {
			fmt.Fprintf(s.Err, "%s: %s\n", shownPath(paths[i]), n)
		}
		k.Result.MapPaths(shareInput(paths[i], shipped, s.Env).apply)
	}
	return checked, cleanup, nil
}

func runVerify(opts *verifyOptions, paths []string, s Streams) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if opts.Expect != "" && len(paths) != 1 {
		return &statusError{code: exitError, err: fmt.Errorf("--expect compares one capture's verdicts; give exactly one CAPTURE (got %d)", len(paths))}
	}
	var expect *expectation
	if opts.Expect != "" {
		var err error
		if expect, err = readExpectation(opts.Expect); err != nil {
			return &statusError{code: exitError, err: err}
		}
	}
	if err := refuseOwnOutput(append(append([]string(nil), paths...), opts.Reference), "nsyscheck verify%s"); err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	checked, cleanup, err := loadAndCheck(ctx, paths, opts.Nsys, s)
	defer cleanup()
	if err != nil {
		return err
	}
	results := check.Results(checked)
	if err := checkReference(ctx, results, opts.Reference, opts.Nsys, s); err != nil {
		return err
	}
	fs := check.Fleet(checked, 2)
	textOpts := report.TextOptions{Width: textWidth(s.Out, s.Env), Verbose: opts.Verbose}
	if err := writeResults(s.Out, opts.Format, results, fs, textOpts); err != nil {
		return &statusError{code: exitError, err: err}
	}
	if opts.FailOnExposure {
		exposed, unscanned := exposing(results)
		if len(exposed) > 0 {
			verb := "expose"
			if len(exposed) == 1 {
				verb = "exposes"
			}
			fmt.Fprintf(s.Err, "failing as --fail-on-exposure asks: %s %s what a shared capture should not (see the capture-exposes warnings; nsyscheck scrub writes a clean copy)\n", strings.Join(exposed, ", "), verb)
		}
		if len(unscanned) > 0 {
			fmt.Fprintf(s.Err, "failing as --fail-on-exposure asks: %s could not be scanned whole, so nothing says it is safe to share (see the capture-scan-failed warnings; export the capture again)\n", strings.Join(unscanned, ", "))
		}
		if len(exposed)+len(unscanned) > 0 {
			return &statusError{code: exitExposed}
		}
	}
	if expect != nil {
		if diffs := expect.compare(results[0]); len(diffs) > 0 {
			fmt.Fprintf(s.Err, "verdicts differ from %s:\n", opts.Expect)
			for _, d := range diffs {
				fmt.Fprintf(s.Err, "  %s\n", d)
			}
			return &statusError{code: exitDied}
		}
		fmt.Fprintf(s.Err, "verdicts match %s\n", opts.Expect)
		return nil
	}
	for _, r := range results {
		if !r.AllHeld() || r.Reference != nil && r.Reference.Verdict != predictions.Held {
			return &statusError{code: exitDied}
		}
	}
	return nil
}

// addReferenceFlag adds --reference, the exercise's reference.
func addReferenceFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "reference", "", "check the exercise against the reference capture or measurements file `REF` (h2d pageable/pinned at 64 MiB within 20%)")
}

// checkReference reads the reference, when one is given, as verify reads
// a capture, and checks each result's exercise against it.
func checkReference(ctx context.Context, results []*predictions.Result, ref, nsys string, s Streams) error {
	if ref == "" {
		return nil
	}
	checked, cleanup, err := loadAndCheck(ctx, []string{ref}, nsys, s)
	defer cleanup()
	if err != nil {
		return err
	}
	against := checked[0].Result
	for _, r := range results {
		rc := predictions.CheckReference(r, against)
		r.Reference = &rc
	}
	return nil
}

// exposing names the inputs with a capture-exposes warning, and those with
// a capture-scan-failed warning: a scan that failed clears nothing.
func exposing(results []*predictions.Result) (exposed, unscanned []string) {
	for _, r := range results {
		if diag.Has(r.Diagnostics, privacy.DiagnosticCode) {
			exposed = append(exposed, r.Input.Path)
		}
		if diag.Has(r.Diagnostics, diag.CodeScanFailed) {
			unscanned = append(unscanned, r.Input.Path)
		}
	}
	return exposed, unscanned
}

// writeResults renders results in the named format: text at the given
// width, JSON in the versioned envelope, or Markdown; then the fleet table
// fs, when not nil.
func writeResults(w io.Writer, format string, results []*predictions.Result, fs *fleet.Summary, textOpts report.TextOptions) error {
	return report.Write(w, format, results, report.WriteOptions{Text: textOpts, Version: buildVersion(), Fleet: fs})
}

// expectation is an --expect file: verdicts by claim id and prediction id,
// and, where given, the codes of what the capture cannot show (package
// coverage) in full ([] for none).
type expectation struct {
	Claims      map[string]string `json:"claims"`
	Predictions map[string]string `json:"predictions"`
	Coverage    *[]string         `json:"coverage,omitempty"`
}

func readExpectation(path string) (*expectation, error) {
	f, err := check.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("read expected verdicts: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read expected verdicts: %s: %w", path, err)
	}
	var e expectation
	if err := program.DecodeHandWritten(path, data, &e, program.HandWritten{Kind: "an expected-verdicts file",
		Want: `{"claims": {"1.floor": "held", ...}, "predictions": {"1": "held", ...}}`,
		Deep: `an expected-verdicts file is {"claims": {...}, "predictions": {...}}`, Twice: "verdict holds", Many: "verdicts hold"}); err != nil {
		return nil, err
	}
	if len(e.Claims) == 0 && len(e.Predictions) == 0 {
		return nil, fmt.Errorf("%s: expects no verdicts; list claims and/or predictions", path)
	}
	if why := e.invalid(); why != "" {
		return nil, fmt.Errorf("%s: %s", path, why)
	}
	return &e, nil
}

// invalid says which claim or prediction the expectation names that the
// lesson does not have, or which verdict it expects that is none, ""
// when every one is the lesson's and a verdict: such a file would only
// ever differ.
func (e *expectation) invalid() string {
	verdicts := []string{string(vocab.Held), string(vocab.Died), string(vocab.Unavailable)}
	var claims, parts []string
	for _, p := range predictions.Lesson.Parts() {
		parts = append(parts, strconv.Itoa(p.ID))
		for _, c := range p.Claims {
			claims = append(claims, c.ID)
		}
	}
	for _, set := range []struct {
		key   string
		m     map[string]string
		known []string
	}{{"claims", e.Claims, claims}, {"predictions", e.Predictions, parts}} {
		for _, id := range slices.Sorted(maps.Keys(set.m)) {
			switch v := set.m[id]; {
			case !slices.Contains(set.known, id):
				return fmt.Sprintf("%s.%s: the lesson has no such %s (its %s: %s)", set.key, id, strings.TrimSuffix(set.key, "s"), set.key, strings.Join(set.known, ", "))
			case !slices.Contains(verdicts, v):
				return fmt.Sprintf("%s.%s: %q is no verdict (want %s)", set.key, id, v, strings.Join(verdicts, ", "))
			}
		}
	}
	return ""
}

// compare lists every expected verdict the result does not match.
func (e *expectation) compare(r *predictions.Result) []string {
	claims := map[string]string{}
	for _, c := range r.Claims {
		claims[c.ID] = string(c.Verdict)
	}
	preds := map[string]string{}
	for _, p := range r.Predictions {
		preds[strconv.Itoa(p.ID)] = string(p.Verdict)
	}
	var diffs []string
	diff := func(kind string, want, have map[string]string) {
		keys := make([]string, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			h, ok := have[k]
			if !ok {
				h = "(absent)"
			}
			if h != want[k] {
				diffs = append(diffs, fmt.Sprintf("%s %s: expected %s, got %s", kind, k, want[k], h))
			}
		}
	}
	diff("claim", e.Claims, claims)
	diff("prediction", e.Predictions, preds)
	if e.Coverage != nil {
		if want, got := slices.Sorted(slices.Values(*e.Coverage)), coverage.CodesIn(r.Diagnostics); !slices.Equal(want, got) {
			diffs = append(diffs, fmt.Sprintf("coverage: expected [%s], got [%s]", strings.Join(want, ", "), strings.Join(got, ", ")))
		}
	}
	return diffs
}
