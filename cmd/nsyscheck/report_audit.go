package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/report"
)

// runAuditReport writes the report of an audit read from JSON.
// A signal while it is written stops the command with exit status 130
// once the folder is in place whole.
func runAuditReport(sig context.Context, opts *reportOptions, path string, out *audit.Output, s Streams) error {
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
	fmt.Fprintf(s.Out, "%s: %s (%d files)\n", path, filepath.Join(opts.Out, report.AuditHTMLFile), len(written))
	return nil
}
