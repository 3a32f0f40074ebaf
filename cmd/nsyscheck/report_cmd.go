package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/auditjson"
	"github.com/nsyscheck/nsyscheck/check"
	"github.com/nsyscheck/nsyscheck/fleet"
	"github.com/nsyscheck/nsyscheck/internal/words"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/report"
)

// reportOptions are report's flags.
type reportOptions struct {
	Out       string
	Force     bool
	PCIeGBps  float64
	Nsys      string
	Reference string
}

func newReportCmd(s Streams) *cobra.Command {
	opts := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report [CAPTURE...] -o DIR",
		Short: "Write Markdown and HTML reports with plots for one or more captures",
		Long: `report verifies each CAPTURE as verify does and writes a report a person can
look at into DIR:

  report.md      the results tables, what the run said about each prediction
                 (verdict and the numbers that decided it), the exercise,
                 diagnostics, and the plots linked beside it
  report.html    the same in one file, plots inline; it needs no network
  bandwidth.png  copy bandwidth by size, pageable and pinned, both directions,
                 with the PCIe link's rated bandwidth when it is known
  async.png      part 2: time in the cudaMemcpyAsync call vs to completion
  kernels.png    part 3: device-resident vs zero-copy, with prediction 3's band
  calls.png      prediction 4: every timed cudaMemcpyAsync call's duration
  (and an .svg of each plot)

A plot the input has no data for is left out, and the report says why.
With several CAPTUREs, each gets its own subfolder of DIR, named after it,
and DIR gets index.html and index.md comparing them side by side (every
claim's verdict and value per capture, links to each report) with
compare.png, their host-to-device bandwidth on one scale. Two captures never
share a subfolder, nor takes one the name of the index's files: a name taken
gets -2, -3, ... (a/x.sqlite b/x.sqlite c/x-2.sqlite give x, x-3, x-2).
Each subfolder records which capture it holds (.nsyscheck-input, a hash of
the capture's path), so a later run finds each capture's folder again and
never takes a folder holding another capture's report, or files of yours,
even with --force.
With none, the real H200 capture shipped inside nsyscheck is used.

Given the JSON of 'nsyscheck audit --format json', report renders the audit
instead: ` + auditFilesHelp() + `, each region's time with its copies
pinned (and, with a check, after the fix) as a share of its time before.

--reference REF checks each capture's exercise against a reference, as
verify --reference does, in every report.

The rated PCIe bandwidth comes from a run folder's run.json; --pcie-gbps
gives it for other inputs. Existing files are never replaced unless --force
is given; without it nothing is written when any would be.

Exit status: 0 the reports were written (whatever the verdicts), 2 an input
could not be read or a report could not be written, 130 interrupted (Ctrl-C
or SIGTERM; nothing half-written is left: a signal while the reports are
being written lets them be put in place whole, and the message says so).

Every folder is written into a temporary folder first, all of them before
any is put in place; a run that fails (a full disk, a name it may not
replace) leaves every folder as it was. A new folder, or one holding only an
earlier report, is put in place by one rename (an atomic exchange), so a
killed run leaves it as it was or whole. A folder holding other files too
gets the report's files renamed in one by one, each file replaced set aside
until all are in place: a failure puts them back, while a run killed
between two renames leaves some new and some earlier files (never a partial
file), and the rerun needs --force.`,
		Example: `  nsyscheck report testdata/captures/h200-pinned -o h200-report
  nsyscheck report capA/ lesson.json -o compare
  nsyscheck report run/ lesson.json -o reports --force
  nsyscheck report capture.sqlite -o out --pcie-gbps 31.5`,
		RunE: func(c *cobra.Command, args []string) error {
			return runReport(opts, args, s)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Out, "out", "o", "", "folder to write the reports into (required)")
	f.BoolVar(&opts.Force, "force", false, "replace report files that already exist")
	f.Float64Var(&opts.PCIeGBps, "pcie-gbps", 0, "rated PCIe bandwidth per direction in GB/s, drawn on the bandwidth plot (default: from run.json where there is one)")
	f.StringVar(&opts.Nsys, "nsys", "", "nsys executable used to export .nsys-rep files")
	addReferenceFlag(cmd, &opts.Reference)
	_ = cmd.MarkFlagRequired("out")
	_ = cmd.MarkFlagDirname("out")
	return cmd
}

func runReport(opts *reportOptions, paths []string, s Streams) error {
	s, flush := messages(s)
	defer flush()
	if opts.PCIeGBps != 0 { // 0: the run folder's rate, where there is one
		if err := check.CheckFlagRate("--pcie-gbps", opts.PCIeGBps); err != nil {
			return &statusError{code: exitError, err: err}
		}
	}
	// A signal while the reports are written does not cut a folder short:
	// each folder is put in place whole or not at all (WriteDir), and the
	// command then stops with exit status 130, saying which were written.
	sig, stopSig := signalContext()
	defer stopSig()
	if all, err := ranksJSON(paths); err != nil {
		return err
	} else if all {
		return runRanksReport(sig, opts, paths, s)
	}
	if len(paths) == 1 {
		// An audit written by `audit --format json` is rendered as such.
		type read struct {
			out *audit.Output
			ok  bool
		}
		r, err := untilInterrupted(sig, func() (read, error) {
			out, ok, err := auditjson.ReadOutput(paths[0])
			return read{out, ok}, err
		})
		if sig.Err() != nil {
			return &statusError{code: exitSignal, err: interruption(err, "reading", paths)}
		}
		if r.ok || err != nil {
			if err != nil {
				return &statusError{code: exitError, err: err}
			}
			return runAuditReport(sig, opts, paths[0], r.out, s)
		}
	}
	if err := refuseOwnOutput(append(append([]string(nil), paths...), opts.Reference), "nsyscheck report%s -o DIR"); err != nil {
		return err
	}
	ids := inputIDs(paths)
	if err := refuseRepeats(paths, ids); err != nil {
		return err
	}
	checked, cleanup, err := loadAndCheck(sig, paths, opts.Nsys, s)
	defer cleanup()
	if err != nil {
		return err
	}
	results := check.Results(checked)
	if err := checkReference(sig, results, opts.Reference, opts.Nsys, s); err != nil {
		return err
	}
	dirs := []string{opts.Out}
	if len(results) > 1 {
		dirs = reportFolders(opts.Out, paths, ids)
	}
	fs := check.Fleet(checked, 2)
	// Refuse before drawing anything: the names every folder gets are
	// known from the results, and drawing the plots is the costly part.
	if err := refuseReportNames(results, dirs, opts, fs); err != nil {
		return err
	}
	type built struct {
		reps  []*report.Report
		files []map[string][]byte
	}
	b, err := untilInterrupted(sig, func() (built, error) {
		reps, files, err := buildReports(checked, opts.PCIeGBps)
		return built{reps, files}, err
	})
	if sig.Err() != nil {
		return interruptedWriting(nil, dirs)
	}
	if err != nil {
		return err
	}
	reps, files := b.reps, b.files
	if len(results) > 1 {
		for i := range files {
			files[i][inputMarker] = []byte(ids[i] + "\n")
		}
	}
	index, topFiles, err := buildTop(results, dirs, fs)
	if err != nil {
		return err
	}
	if err := writeReports(sig, opts, results, dirs, reps, files, topFiles, s); err != nil {
		return err
	}
	printReportSummary(s, opts.Out, index, len(topFiles), fs)
	return nil
}

// writeReports writes every input's report into its folder and the files
// at the top of out (the side-by-side index, the fleet page) as one set
// (report.WriteSet): all are written into temporary folders, then put in
// place, and a failure leaves every folder as it was. A signal before the
// set is written stops with nothing written; one while it is written
// lets it be put in place whole, then stops with exit status 130.
func writeReports(sig context.Context, opts *reportOptions, results []*predictions.Result, dirs []string, reps []*report.Report,
	files []map[string][]byte, topFiles map[string][]byte, s Streams) error {
	all := append(append([]string(nil), dirs...), topNames(opts.Out, topFiles)...)
	if sig.Err() != nil {
		return interruptedWriting(nil, all)
	}
	set := make([]report.Folder, 0, len(dirs)+1)
	for i, dir := range dirs {
		set = append(set, report.Folder{Dir: dir, Files: files[i], Stale: reps[i].Undrawn()})
	}
	if len(topFiles) > 0 {
		set = append(set, report.Folder{Dir: opts.Out, Files: topFiles})
	}
	written, err := report.WriteSet(set, opts.Force)
	if err != nil {
		return &statusError{code: exitError, err: err}
	}
	if sig.Err() != nil {
		return interruptedWriting(all, nil)
	}
	for i, dir := range dirs {
		for _, p := range reps[i].Plots {
			if p.Skipped != "" {
				fmt.Fprintf(s.Err, "%s: %s plot not drawn: %s\n", results[i].Input.Path, p.Name, p.Skipped)
			}
		}
		n := len(written[i])
		if _, ok := files[i][inputMarker]; ok {
			n-- // the input marker is bookkeeping
		}
		fmt.Fprintf(s.Out, "%s: %s (%d files)\n", ctlchar.Line(results[i].Input.Path), ctlchar.Line(filepath.Join(dir, report.HTMLFile)), n)
	}
	return nil
}

// printReportSummary prints the closing lines: the side-by-side index (with
// a note when its comparison plot was not drawn) and the fleet table, where
// there are such. nTop is the number of files written at the top of out.
func printReportSummary(s Streams, out string, index *report.Index, nTop int, fs *fleet.Summary) {
	if index != nil {
		if index.Plot.Skipped != "" {
			fmt.Fprintf(s.Err, "comparison plot not drawn: %s\n", index.Plot.Skipped)
		}
		n := nTop
		if fs != nil {
			n-- // the fleet page
		}
		fmt.Fprintf(s.Out, "side by side: %s (%d files)\n", filepath.Join(out, report.IndexHTMLFile), n)
	}
	if fs != nil {
		fmt.Fprintf(s.Out, "fleet of %d GPUs: %s (%d outlier findings)\n", len(fs.Rows), filepath.Join(out, report.FleetMarkdownFile), len(fs.Findings))
	}
}

// buildReports renders each checked input's report and its files, with
// the link's rated bandwidth from its run folder or else pcieGBps.
func buildReports(checked []*check.Checked, pcieGBps float64) ([]*report.Report, []map[string][]byte, error) {
	reps := make([]*report.Report, len(checked))
	files := make([]map[string][]byte, len(checked))
	for i, c := range checked {
		r := c.Result
		link := report.LinkOf(c.PCIe())
		if pcieGBps > 0 {
			link = report.Link{RatedGBps: pcieGBps}
		}
		var err error
		if reps[i], err = report.Build(r, report.Options{Link: link}); err != nil {
			return nil, nil, &statusError{code: exitError, err: fmt.Errorf("%s: %w", r.Input.Path, err)}
		}
		if files[i], err = reps[i].Files(); err != nil {
			return nil, nil, &statusError{code: exitError, err: fmt.Errorf("%s: %w", r.Input.Path, err)}
		}
	}
	return reps, files, nil
}

// buildTop renders what goes into the output folder itself, through the
// same writer as the reports: the index page comparing several inputs side
// by side, and the fleet table when the inputs are a fleet's run folders.
func buildTop(results []*predictions.Result, dirs []string, fs *fleet.Summary) (*report.Index, map[string][]byte, error) {
	top := map[string][]byte{}
	var index *report.Index
	if len(results) > 1 {
		var err error
		if index, err = report.BuildIndex(indexEntries(results, dirs)); err != nil {
			return nil, nil, &statusError{code: exitError, err: err}
		}
		files, err := index.Files()
		if err != nil {
			return nil, nil, &statusError{code: exitError, err: err}
		}
		for name, b := range files {
			top[name] = b
		}
	}
	if fs != nil {
		page, err := report.FleetFile(*fs)
		if err != nil {
			return nil, nil, &statusError{code: exitError, err: err}
		}
		top[report.FleetMarkdownFile] = page
	}
	return index, top, nil
}

// indexEntries are the index's entries: each result with its folder,
// relative to the index.
func indexEntries(results []*predictions.Result, dirs []string) []report.Entry {
	entries := make([]report.Entry, len(results))
	for i, r := range results {
		entries[i] = report.Entry{Result: r, Dir: filepath.Base(dirs[i])}
	}
	return entries
}

// refuseReportNames makes, before any report is drawn, the refusals the
// writer would make once they are (report.CheckNames): without --force,
// every file that exists already in one list; a folder that is a file, a
// name that is a folder, or a folder holding another kind of report. The
// names come from the results alone (report.Names, report.IndexNames).
func refuseReportNames(results []*predictions.Result, dirs []string, opts *reportOptions, fs *fleet.Summary) error {
	names := make([][]string, len(results))
	for i, r := range results {
		names[i] = report.Names(r, report.Options{})
		if len(results) > 1 {
			names[i] = append(names[i], inputMarker)
		}
	}
	var top []string
	if len(results) > 1 {
		top = report.IndexNames(indexEntries(results, dirs))
	}
	if fs != nil {
		top = append(top, report.FleetMarkdownFile)
	}
	if clash := reportClashes(dirs, names, opts.Out, top); !opts.Force && len(clash) > 0 {
		return &statusError{code: exitError, err: fmt.Errorf("not replacing existing files (use --force to overwrite): %s", strings.Join(clash, ", "))}
	}
	for i, dir := range dirs {
		if err := report.CheckNames(dir, names[i], opts.Force); err != nil {
			return &statusError{code: exitError, err: err}
		}
	}
	if len(top) > 0 {
		if err := report.CheckNames(opts.Out, top, opts.Force); err != nil {
			return &statusError{code: exitError, err: err}
		}
	}
	return nil
}

// reportClashes lists, sorted, the files report would write that exist
// already: each report's files (names) in its folder (the input marker
// aside), and the index and the fleet table (top) in out.
func reportClashes(dirs []string, names [][]string, out string, top []string) []string {
	var clash []string
	for i, dir := range dirs {
		for _, name := range names[i] {
			if name == inputMarker {
				continue // bookkeeping: the report beside it is what clashes
			}
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				clash = append(clash, filepath.Join(dir, name))
			}
		}
	}
	for _, name := range top {
		if _, err := os.Lstat(filepath.Join(out, name)); err == nil {
			clash = append(clash, filepath.Join(out, name))
		}
	}
	sort.Strings(clash)
	return clash
}

// interruptedWriting is the exit-130 error of a report stopped by SIGINT or
// SIGTERM: what was written whole before it stopped (the set the signal
// came during), or what it did not write at all (no folder is left
// half-written).
func interruptedWriting(whole, left []string) error {
	var b strings.Builder
	b.WriteString("interrupted")
	if len(whole) > 0 {
		fmt.Fprintf(&b, ": written whole before stopping: %s", strings.Join(whole, ", "))
	} else {
		b.WriteString(": nothing was written")
	}
	if len(left) > 0 {
		fmt.Fprintf(&b, "; not written: %s", strings.Join(left, ", "))
	}
	b.WriteString(" (run report again, with --force to replace what was written)")
	return &statusError{code: exitSignal, err: errors.New(b.String())}
}

// topNames are the paths of the files report writes into out itself.
func topNames(out string, top map[string][]byte) []string {
	var names []string
	for n := range top {
		names = append(names, filepath.Join(out, n))
	}
	sort.Strings(names)
	return names
}

// auditFilesHelp names the files of an audit's report, as report writes
// them (report.AuditFiles), for report's help.
func auditFilesHelp() string {
	return words.List(report.AuditFiles())
}
