package main

import (
	"context"
	"fmt"
	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/check"
	"github.com/nsyscheck/nsyscheck/report"
	"github.com/nsyscheck/nsyscheck/source"
)

// runAuditReport writes the report of an audit read from JSON.
// A signal while it is written stops the command with exit status 130
// once the folder is in place whole.
func runAuditReport(sig context.Context, opts *reportOptions, path string, out *audit.Output, s Streams) error {
	// Refuse before drawing: the names are known from the audit alone.
	if err := report.CheckNames(opts.Out, report.AuditNames(out), opts.Force); err != nil {
		return &statusError{code: exitError, err: err}
	}
	rep, err := untilInterrupted(sig, func() (*report.AuditReport, error) { return report.BuildAudit(out) })
	if sig.Err() != nil {
		return interruptedWriting(nil, []string{opts.Out})
	}
	if err != nil {
		return &statusError{code: exitError, err: fmt.Errorf("%s: %w", path, err)}
	}
	written, err := rep.WriteDir(opts.Out, opts.Force)
	if err != nil {
		return &statusError{code: exitError, err: err}
	}
	if sig.Err() != nil {
		return interruptedWriting([]string{opts.Out}, nil)
	}
	if rep.Plot.Skipped != "" {
		fmt.Fprintf(s.Err, "%s: %s plot not drawn: %s\n", path, rep.Plot.Name, rep.Plot.Skipped)
	}
	fmt.Fprintf(s.Out, "%s: %s (%d files)\n", ctlchar.Line(path), ctlchar.Line(filepath.Join(opts.Out, report.AuditHTMLFile)), len(written))
	return nil
}

// ranksJSON reports whether every path is the JSON of audit --ranks
// --format json (kind audit-ranks, as source.OwnOutput tells it), which
// report renders as the job's table, the shards merged into one. Paths of
// which some, not all, are such JSON are refused: report merges shards
// with one another alone, and would otherwise tell the shard it cannot
// read as "not a capture".
func ranksJSON(paths []string) (bool, error) {
	shard, other := "", ""
	for _, p := range paths {
		if out, ok := source.OwnOutput(p); ok && out.Kind == source.OutputAuditRanks {
			if shard == "" {
				shard = p
			}
		} else if other == "" {
			other = p
		}
	}
	if shard == "" || other == "" {
		return shard != "", nil
	}
	return false, &statusError{code: exitError, err: fmt.Errorf("report: %s is the JSON of audit --ranks, which report merges with other such JSON alone, and %s is not: give the JSON of the job's --ranks audits alone (report shard-*.json -o DIR), or merge them all first (nsyscheck audit --ranks --format json FILES > job.json, then report job.json)",
		shownPath(shard), shownPath(other))}
}

// runRanksReport writes the report of a job's ranks from the JSON of its
// --ranks audits (one file, or one per shard, merged).
func runRanksReport(sig context.Context, opts *reportOptions, paths []string, s Streams) error {
	type built struct {
		rep *report.RanksReport
	}
	b, err := untilInterrupted(sig, func() (built, error) {
		sum, _, err := check.AuditRanks(sig, paths, check.RanksOptions{Asked: "report"})
		if err != nil {
			return built{}, err
		}
		// Refuse before drawing: the names are known from the ranks alone.
		if err := report.CheckNames(opts.Out, report.RanksNames(sum), opts.Force); err != nil {
			return built{}, err
		}
		rep, err := report.BuildRanks(sum)
		return built{rep}, err
	})
	if sig.Err() != nil {
		return interruptedWriting(nil, []string{opts.Out})
	}
	if err != nil {
		return &statusError{code: exitError, err: err}
	}
	written, err := b.rep.WriteDir(opts.Out, opts.Force)
	if err != nil {
		return &statusError{code: exitError, err: err}
	}
	if sig.Err() != nil {
		return interruptedWriting([]string{opts.Out}, nil)
	}
	if b.rep.Plot.Skipped != "" {
		fmt.Fprintf(s.Err, "%s plot not drawn: %s\n", b.rep.Plot.Name, b.rep.Plot.Skipped)
	}
	fmt.Fprintf(s.Out, "%s: %s (%d files)\n", ctlchar.Line(strings.Join(paths, ", ")), ctlchar.Line(filepath.Join(opts.Out, report.RanksHTMLFile)), len(written))
	return nil
}
