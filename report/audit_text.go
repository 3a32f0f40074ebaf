package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nsyscheck/nsyscheck/audit"
)

// WriteAudit renders an audit (and, with a capture after the fix, that
// audit and the check) in the named format: text for a terminal, the JSON
// of audit.Output, or Markdown.
func WriteAudit(w io.Writer, format string, out *audit.Output) error {
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case FormatMarkdown:
		return AuditMarkdown(w, out.Before, out.After, out.Check)
	case FormatText:
		if err := AuditText(w, out.Before); err != nil {
			return err
		}
		if out.After != nil {
			fmt.Fprintln(w)
			if err := AuditText(w, out.After); err != nil {
				return err
			}
		}
		if out.Check != nil {
			return AuditCheckText(w, out.Check)
		}
		return nil
	}
	return fmt.Errorf("unknown format %q: use text, json or markdown", format)
}

// auditPct formats a share as the audit's tables do: one decimal.
func auditPct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

// AuditMaxClassRows bounds the classes the text and Markdown forms list; the
// JSON form has them all.
const AuditMaxClassRows = 15

// AuditText writes an audit for a terminal.
func AuditText(w io.Writer, au *audit.Audit) error {
	ew := &errWriter{w: w}
	ew.printf("audit of %s (%s)\n", au.Capture, au.Format)
	if au.GPU != "" {
		ew.printf("GPU %s\n", au.GPU)
	}
	ew.printf("%d CUDA API calls in %s of host time (%s); %d copies (%d without an API call in the trace), %d memsets kept apart\n\n",
		au.APICalls, audit.FormatNs(float64(au.SpanNs)), au.SpanFrom, au.Copies, au.Unmatched, au.Memsets)

	ew.printf("Copies by direction, host memory and API kind\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "direction\thost memory\tAPI\tcopies\tMB\thost time\tGPU time\t\n")
	for _, t := range au.Totals {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1f\t%s\t%s\t\n", t.Direction, t.HostMemory, t.APIKind, t.Count,
			float64(t.Bytes)/1e6, audit.FormatNs(float64(t.HostNs)), audit.FormatNs(float64(t.GPUNs)))
	}
	tw.Flush()

	ew.printf("\nClasses by host time held (%d in all", len(au.Classes))
	if len(au.Classes) > AuditMaxClassRows {
		ew.printf("; the first %d", AuditMaxClassRows)
	}
	ew.printf(")\n")
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "class\tcopies\tMB\thost time\tshare\tGPU time\tGPU GB/s\n")
	for i, c := range au.Classes {
		if i == AuditMaxClassRows {
			break
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%s\t%s\t%.1f\n", c.Label(), c.Count, float64(c.Bytes)/1e6,
			audit.FormatNs(float64(c.HostNs)), auditPct(c.HostShare), audit.FormatNs(float64(c.GPUNs)), c.GPUGBps)
	}
	tw.Flush()

	if len(au.TopOffenders) > 0 {
		ew.printf("\nTop offenders (pageable or unknown host memory)\n")
		for i, c := range au.TopOffenders {
			ew.printf("  %d. %s: %d copies, %s, held the host %s (%s of the capture's host time)\n",
				i+1, c.Label(), c.Count, audit.FormatMB(c.Bytes), audit.FormatNs(float64(c.HostNs)), auditPct(c.HostShare))
		}
	}

	writeAuditFindingsText(ew, au)
	return ew.err
}

// writeAuditFindingsText writes an audit's findings, prediction, NVIDIA's
// rule beside it, and what the capture could not tell or exposes.
func writeAuditFindingsText(ew *errWriter, au *audit.Audit) {
	ew.printf("\nFindings\n")
	for _, f := range au.Findings {
		ew.printf("  %s: %d copies, %s, %s of host time\n", f.ID, f.Count, audit.FormatMB(f.Bytes), audit.FormatNs(float64(f.HostNs)))
		ew.printf("    rule: %s\n", f.Rule)
		for i, e := range f.Evidence {
			if i == 3 {
				ew.printf("    ... %d more in --format json\n", len(f.Evidence)-3)
				break
			}
			ew.printf("    correlation id %d (pid %d, tid %d): %s %s %s, call %s for a %s copy (%.0f%%)\n",
				e.CorrelationID, e.PID, e.TID, e.API, e.Direction, audit.FormatMB(e.Bytes), audit.FormatNs(float64(e.CallNs)), audit.FormatNs(float64(e.GPUNs)), 100*e.Held)
		}
	}

	if p := au.Prediction; p != nil {
		ew.printf("\nPrediction\n  %s\n", p.Statement)
		for _, g := range p.Groups {
			ew.printf("  %s %s %s: %d copies, %s now -> %s (%s-%s) from %s: %s\n", g.Direction, g.APIKind, g.SizeBucket,
				g.Count, audit.FormatNs(float64(g.BeforeNs)), audit.FormatNs(float64(g.AfterNs)), audit.FormatNs(float64(g.AfterLowNs)), audit.FormatNs(float64(g.AfterHighNs)), g.Source, g.Basis)
		}
		if p.HtoD.BeforeNs > 0 {
			ew.printf("  host-to-device copy calls: %s now, %s predicted after pinning (bound %s-%s)\n",
				audit.FormatNs(float64(p.HtoD.BeforeNs)), audit.FormatNs(float64(p.HtoD.AfterNs)), audit.FormatNs(float64(p.HtoD.AfterLowNs)), audit.FormatNs(float64(p.HtoD.AfterHighNs)))
		}
	}
	if au.NVIDIA != nil {
		ew.printf("\n%s\n", au.NVIDIA.Summary())
		for _, f := range au.NVIDIA.OnlyRule {
			ew.printf("  only the rule: pid %d, copy at %d ns, %s\n", f.PID, f.Start, audit.FormatNs(float64(f.Duration)))
		}
		for _, e := range au.NVIDIA.OnlyAudit {
			ew.printf("  only the audit: correlation id %d, pid %d, copy at %d ns, %s\n", e.CorrelationID, e.PID, e.GPUStart, audit.FormatNs(float64(e.GPUNs)))
		}
	}
	for _, g := range au.Missing {
		ew.printf("note: %s: %s\n", g.Fact, g.Reason)
	}
	for _, e := range au.Exposures {
		ew.printf("warning: capture-exposes: %s\n", e)
	}
}

// AuditCheckText writes the check of an audit before and after a fix for
// a terminal.
func AuditCheckText(w io.Writer, c *audit.Check) error {
	ew := &errWriter{w: w}
	ew.printf("\nCheck: %s (before) against %s (after): %s\n", c.Before, c.After, strings.ToUpper(string(c.Verdict)))
	ew.printf("  host-to-device copy calls held the host %s before, %s after (saved %s; predicted %s, after between %s and %s)\n",
		audit.FormatNs(float64(c.HtoDBeforeNs)), audit.FormatNs(float64(c.HtoDAfterNs)), audit.FormatNs(float64(c.SavedNs)), audit.FormatNs(float64(c.PredictedSavedNs)),
		audit.FormatNs(float64(c.PredictedAfterLowNs)), audit.FormatNs(float64(c.PredictedAfterHighNs)))
	ew.printf("  bytes moved host-to-device: %s before, %s after (%+.2f%%)\n", audit.FormatMB(c.HtoDBytesBefore), audit.FormatMB(c.HtoDBytesAfter), 100*c.BytesChange)
	for _, cl := range c.Classes {
		ew.printf("  pageable class %s: %d copies, %s before; after: %s (%d pageable, %d pinned, %s)\n", cl.Class, cl.Before.Count,
			audit.FormatNs(float64(cl.Before.HostNs)), cl.Status, cl.AfterPageable.Count, cl.AfterPinned.Count,
			audit.FormatNs(float64(cl.AfterPageable.HostNs+cl.AfterPinned.HostNs)))
	}
	for _, r := range c.Reasons {
		ew.printf("  - %s\n", r)
	}
	for _, wn := range c.Warnings {
		ew.printf("  warning: %s\n", wn)
	}
	return ew.err
}

// AuditMarkdown writes an audit (and the audit after the fix and the check,
// when they are not nil) as Markdown.
func AuditMarkdown(w io.Writer, au *audit.Audit, after *audit.Audit, c *audit.Check) error {
	ew := &errWriter{w: w}
	ew.printf("# Audit of `%s`\n\n", au.Capture)
	writeAuditMarkdown(ew, au)
	if after != nil {
		ew.printf("\n# Audit of `%s`\n\n", after.Capture)
		writeAuditMarkdown(ew, after)
	}
	if c != nil {
		ew.printf("\n# Check: %s\n\n", c.Verdict)
		ew.printf("| | before | after |\n|---|---:|---:|\n")
		ew.printf("| host time in host-to-device copy calls | %s | %s |\n", audit.FormatNs(float64(c.HtoDBeforeNs)), audit.FormatNs(float64(c.HtoDAfterNs)))
		ew.printf("| bytes moved host-to-device | %s | %s |\n", audit.FormatMB(c.HtoDBytesBefore), audit.FormatMB(c.HtoDBytesAfter))
		ew.printf("| pageable host-to-device copies | %d | %d |\n", c.PageableBefore.Count, c.PageableAfter.Count)
		ew.printf("| predicted after (bound) | | %s (%s-%s) |\n\n", audit.FormatNs(float64(c.PredictedAfterNs)),
			audit.FormatNs(float64(c.PredictedAfterLowNs)), audit.FormatNs(float64(c.PredictedAfterHighNs)))
		if len(c.Classes) > 0 {
			ew.printf("| pageable host-to-device class before | copies | host time before | after | host time after |\n|---|---:|---:|---|---:|\n")
			for _, cl := range c.Classes {
				ew.printf("| %s | %d | %s | %s | %s |\n", strings.ReplaceAll(cl.Class, "|", `\|`), cl.Before.Count, audit.FormatNs(float64(cl.Before.HostNs)),
					cl.Status, audit.FormatNs(float64(cl.AfterPageable.HostNs+cl.AfterPinned.HostNs)))
			}
			ew.printf("\n")
		}
		for _, r := range c.Reasons {
			ew.printf("- %s\n", r)
		}
		for _, wn := range c.Warnings {
			ew.printf("- **warning**: %s\n", wn)
		}
	}
	return ew.err
}

func writeAuditMarkdown(ew *errWriter, au *audit.Audit) {
	ew.printf("%d CUDA API calls in %s of host time (%s); %d copies, %d memsets kept apart.\n\n", au.APICalls, audit.FormatNs(float64(au.SpanNs)), au.SpanFrom, au.Copies, au.Memsets)
	ew.printf("| class | copies | MB | host time | share | GPU time | GPU GB/s |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for i, c := range au.Classes {
		if i == AuditMaxClassRows {
			break
		}
		ew.printf("| %s | %d | %.1f | %s | %s | %s | %.1f |\n", strings.ReplaceAll(c.Label(), "|", `\|`), c.Count,
			float64(c.Bytes)/1e6, audit.FormatNs(float64(c.HostNs)), auditPct(c.HostShare), audit.FormatNs(float64(c.GPUNs)), c.GPUGBps)
	}
	ew.printf("\n")
	for _, f := range au.Findings {
		ew.printf("- **%s**: %d copies, %s, %s of host time", f.ID, f.Count, audit.FormatMB(f.Bytes), audit.FormatNs(float64(f.HostNs)))
		if len(f.Evidence) > 0 {
			var ids []string
			for _, e := range f.Evidence {
				ids = append(ids, fmt.Sprint(e.CorrelationID))
			}
			ew.printf(" (correlation ids %s)", strings.Join(ids, ", "))
		}
		ew.printf("\n")
	}
	if au.Prediction != nil {
		ew.printf("- **prediction**: %s\n", au.Prediction.Statement)
	}
	if au.NVIDIA != nil {
		ew.printf("- %s\n", au.NVIDIA.Summary())
	}
}

// errWriter keeps the first write error, so a renderer checks once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }
