package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/diag"
)

// AuditEnvelope wraps an audit in the envelope every JSON output shares:
// kind "audit", the captures as inputs, one audit per capture as results
// (before, then after), and the check when there is one.
func AuditEnvelope(out *audit.Output, version string) Envelope {
	results := []*audit.Audit{out.Before}
	if out.After != nil {
		results = append(results, out.After)
	}
	inputs := make([]string, len(results))
	js := make([]jsonAudit, len(results))
	for i, a := range results {
		inputs[i] = a.Capture
		js[i] = auditJSON(a)
	}
	return Envelope{SchemaVersion: SchemaVersion, Kind: KindAudit, Tool: Tool{Name: "nsyscheck", Version: version},
		Inputs: inputs, Results: js, Check: out.Check}
}

// jsonAudit is an audit's JSON: its numbers as the audit holds them, its
// diagnostics and exposures in words (audit.ReadOutput reads them back).
type jsonAudit struct {
	*audit.Audit
	Diagnostics []jsonDiagnostic `json:"diagnostics,omitempty"`
	Exposures   []string         `json:"exposures"`
}

func auditJSON(au *audit.Audit) jsonAudit {
	j := jsonAudit{Audit: au, Exposures: []string{}}
	if len(au.Diagnostics) > 0 {
		j.Diagnostics = diagnosticsJSON(au.Diagnostics)
	}
	for _, d := range diagViews(au.Exposures) {
		j.Exposures = append(j.Exposures, d.Message)
	}
	return j
}

// WriteAudit renders an audit (and, with a capture after the fix, that
// audit and the check) in the named format: text laid out for the width
// and verbosity opts.Text gives, JSON in the versioned envelope
// (AuditEnvelope, with opts.Version), or Markdown.
func WriteAudit(w io.Writer, format string, out *audit.Output, opts WriteOptions) error {
	switch format {
	case FormatJSON:
		return WriteJSON(w, AuditEnvelope(out, opts.Version))
	case FormatMarkdown:
		return AuditMarkdown(w, out.Before, out.After, out.Check)
	case FormatText:
		if err := AuditText(w, out.Before, opts.Text); err != nil {
			return err
		}
		if out.After != nil {
			fmt.Fprintln(w)
			if err := AuditText(w, out.After, opts.Text); err != nil {
				return err
			}
		}
		if out.Check != nil {
			return AuditCheckText(w, out.Check, opts.Text)
		}
		return nil
	}
	return fmt.Errorf("unknown format %q: use text, json or markdown", format)
}

// auditPct formats a share as the audit's tables do: one decimal.
func auditPct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

// AuditMaxClassRows bounds the classes the text (without Verbose) and
// Markdown forms list; the JSON form has them all.
const AuditMaxClassRows = 15

// auditShownEvidence is how many evidence copies of a finding the text
// shows without Verbose.
const auditShownEvidence = 3

// ns formats nanoseconds as the audit does.
func ns(v int64) string { return audit.FormatNs(float64(v)) }

// AuditText writes an audit for a terminal, laid out for opts' width:
// tables that fit, a class's key on its own line when the class table would
// not, everything else wrapped, nothing cut. With opts.Verbose it lists
// every class and every finding's evidence copies.
func AuditText(w io.Writer, au *audit.Audit, opts TextOptions) error {
	width := opts.width()
	var b strings.Builder
	head := "(" + au.Format + ")"
	if f := formatWords[au.Format]; f != "" {
		head = "(" + f + ")"
	}
	if au.GPU != "" {
		head += ", " + au.GPU
	}
	writePath(&b, "audit of "+au.Capture, head, width)
	writeWrapped(&b, fmt.Sprintf("%d CUDA API calls in %s of host time (%s); %d copies (%d without an API call in the trace), %d memsets kept apart",
		au.APICalls, ns(au.SpanNs), au.SpanFrom, au.Copies, au.Unmatched, au.Memsets), width, "", "    ")

	b.WriteByte('\n')
	writeWrapped(&b, "Copies by direction, host memory and API kind", width, "", "  ")
	rows := [][]string{{"direction", "host memory", "API", "copies", "MB", "host time", "GPU time"}}
	for _, t := range au.Totals {
		rows = append(rows, []string{string(t.Direction), string(t.HostMemory), string(t.APIKind), fmt.Sprint(t.Count),
			fmt.Sprintf("%.1f", float64(t.Bytes)/1e6), ns(t.HostNs), ns(t.GPUNs)})
	}
	writeTable(&b, rows, 3, width)

	writeAuditClasses(&b, au, opts)

	if len(au.TopOffenders) > 0 {
		b.WriteByte('\n')
		writeWrapped(&b, "Top offenders (pageable or unknown host memory)", width, "", "  ")
		for i, c := range au.TopOffenders {
			writeWrapped(&b, fmt.Sprintf("%s: %d copies, %s, held the host %s (%s of the capture's host time)",
				c.Label(), c.Count, audit.FormatMB(c.Bytes), ns(c.HostNs), auditPct(c.HostShare)), width, fmt.Sprintf("  %d. ", i+1), "     ")
		}
	}
	writeAuditFindingsText(&b, au, opts)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeAuditClasses writes the class table: one row per class when the
// table fits the width; else each class's key on its own line (wrapped if
// longer than a line) with its numbers in columns beneath it, or, narrower
// still, in words.
func writeAuditClasses(b *strings.Builder, au *audit.Audit, opts TextOptions) {
	width := opts.width()
	classes := au.Classes
	title := fmt.Sprintf("Classes by host time held (%d in all)", len(classes))
	if !opts.Verbose && len(classes) > AuditMaxClassRows {
		title = fmt.Sprintf("Classes by host time held (%d in all; the first %d, -v lists every one)", len(classes), AuditMaxClassRows)
		classes = classes[:AuditMaxClassRows]
	}
	b.WriteByte('\n')
	writeWrapped(b, title, width, "", "  ")
	head := []string{"copies", "MB", "host time", "share", "GPU time", "GPU GB/s"}
	nums := make([][]string, len(classes))
	for i, c := range classes {
		nums[i] = []string{fmt.Sprint(c.Count), fmt.Sprintf("%.1f", float64(c.Bytes)/1e6), ns(c.HostNs),
			auditPct(c.HostShare), ns(c.GPUNs), fmt.Sprintf("%.1f", c.GPUGBps)}
	}
	oneLine := [][]string{append([]string{"class"}, head...)}
	for i, c := range classes {
		oneLine = append(oneLine, append([]string{c.Label()}, nums[i]...))
	}
	if tableWidth(oneLine, len(oneLine[0])) <= width {
		writeTable(b, oneLine, 1, width)
		return
	}
	// Each class's key on its own line, its numbers beneath, right-aligned
	// in columns under one header.
	const indent = "    "
	widths := make([]int, len(head))
	for _, row := range append([][]string{head}, nums...) {
		for k, cell := range row {
			widths[k] = max(widths[k], utf8.RuneCountInString(cell))
		}
	}
	row := func(cells []string) string {
		var l strings.Builder
		l.WriteString(indent)
		for k, cell := range cells {
			if k > 0 {
				l.WriteString("  ")
			}
			l.WriteString(strings.Repeat(" ", widths[k]-utf8.RuneCountInString(cell)) + cell)
		}
		return l.String()
	}
	columns := utf8.RuneCountInString(row(head)) <= width
	if columns {
		b.WriteString("class\n" + row(head) + "\n")
	}
	for i, c := range classes {
		writeWrapped(b, c.Label(), width, "", indent)
		if columns {
			b.WriteString(row(nums[i]) + "\n")
			continue
		}
		n := nums[i]
		writeWrapped(b, fmt.Sprintf("%s copies, %s MB, host time %s (%s), GPU time %s, %s GB/s on the GPU", n[0], n[1], n[2], n[3], n[4], n[5]),
			width, indent, indent+"  ")
	}
}

// auditEvidenceText is one copy of a finding's evidence in words; verbose
// adds the timestamps that find it in Nsight Systems.
func auditEvidenceText(e audit.Evidence, verbose bool) string {
	s := fmt.Sprintf("correlation id %d (pid %d, tid %d): %s %s %s, call %s for a %s copy (%.0f%%)",
		e.CorrelationID, e.PID, e.TID, e.API, e.Direction, audit.FormatMB(e.Bytes), ns(e.CallNs), ns(e.GPUNs), 100*e.Held)
	if e.Range != "" {
		s += " in NVTX range " + e.Range
	}
	if verbose {
		s += fmt.Sprintf("; call at %d ns, copy at %d ns", e.CallStart, e.GPUStart)
	}
	return s
}

// writeAuditFindingsText writes an audit's findings, prediction, NVIDIA's
// rule beside it, and what the capture could not tell or exposes.
func writeAuditFindingsText(b *strings.Builder, au *audit.Audit, opts TextOptions) {
	width := opts.width()
	b.WriteString("\nFindings\n")
	for _, f := range au.Findings {
		writeWrapped(b, fmt.Sprintf("%s: %d copies, %s, %s of host time", f.ID, f.Count, audit.FormatMB(f.Bytes), ns(f.HostNs)), width, "  ", "    ")
		writeWrapped(b, "rule: "+f.Rule, width, "    ", "      ")
		shown := f.Evidence
		if !opts.Verbose && len(shown) > auditShownEvidence {
			shown = shown[:auditShownEvidence]
		}
		if len(f.Evidence) > 0 {
			what := fmt.Sprintf("the %d copies that held the host longest:", len(f.Evidence))
			if int64(len(f.Evidence)) == f.Count {
				what = "the copies, longest call first:"
			}
			writeWrapped(b, what, width, "    ", "      ")
		}
		for _, e := range shown {
			writeWrapped(b, auditEvidenceText(e, opts.Verbose), width, "      ", "        ")
		}
		if n := len(f.Evidence) - len(shown); n > 0 {
			writeWrapped(b, fmt.Sprintf("... %d more not shown: -v shows them; --format json holds them too", n), width, "      ", "        ")
		}
	}

	if p := au.Prediction; p != nil {
		b.WriteString("\nPrediction\n")
		writeWrapped(b, p.Statement, width, "  ", "    ")
		for _, g := range p.Groups {
			writeWrapped(b, fmt.Sprintf("%s %s %s: %d copies, %s now -> %s (%s-%s) from %s: %s", g.Direction, g.APIKind, g.SizeBucket,
				g.Count, ns(g.BeforeNs), ns(g.AfterNs), ns(g.AfterLowNs), ns(g.AfterHighNs), g.Source, g.Basis), width, "  ", "    ")
		}
		if p.HtoD.BeforeNs > 0 {
			writeWrapped(b, fmt.Sprintf("host-to-device copy calls: %s now, %s predicted after pinning (bound %s-%s)",
				ns(p.HtoD.BeforeNs), ns(p.HtoD.AfterNs), ns(p.HtoD.AfterLowNs), ns(p.HtoD.AfterHighNs)), width, "  ", "    ")
		}
	}
	if au.NVIDIA != nil {
		b.WriteByte('\n')
		writeWrapped(b, au.NVIDIA.Summary(), width, "", "    ")
		for _, f := range au.NVIDIA.OnlyRule {
			writeWrapped(b, fmt.Sprintf("only the rule: pid %d, copy at %d ns, %s", f.PID, f.Start, ns(f.Duration)), width, "  ", "    ")
		}
		for _, e := range au.NVIDIA.OnlyAudit {
			writeWrapped(b, fmt.Sprintf("only the audit: correlation id %d, pid %d, copy at %d ns, %s", e.CorrelationID, e.PID, e.GPUStart, ns(e.GPUNs)), width, "  ", "    ")
		}
	}
	if len(au.Missing)+len(au.Diagnostics)+len(au.Exposures) > 0 {
		b.WriteByte('\n')
	}
	for _, g := range au.Missing {
		writeWrapped(b, fmt.Sprintf("note: %s: %s", g.Fact, g.Reason), width, "", "    ")
	}
	for _, d := range diagViews(append(append([]diag.Diagnostic(nil), au.Diagnostics...), au.Exposures...)) {
		writeWrapped(b, fmt.Sprintf("%s %s: %s", d.Level, d.Code, d.Message), width, "", "    ")
	}
}

// AuditCheckText writes the check of an audit before and after a fix for
// a terminal, wrapped to opts' width.
func AuditCheckText(w io.Writer, c *audit.Check, opts TextOptions) error {
	width := opts.width()
	var b strings.Builder
	b.WriteByte('\n')
	writeWrapped(&b, fmt.Sprintf("Check: %s (before) against %s (after): %s", c.Before, c.After, strings.ToUpper(string(c.Verdict))), width, "", "    ")
	line := func(s string) { writeWrapped(&b, s, width, "  ", "    ") }
	line(fmt.Sprintf("host-to-device copy calls held the host %s before, %s after (saved %s; predicted %s, after between %s and %s)",
		ns(c.HtoDBeforeNs), ns(c.HtoDAfterNs), ns(c.SavedNs), ns(c.PredictedSavedNs), ns(c.PredictedAfterLowNs), ns(c.PredictedAfterHighNs)))
	line(fmt.Sprintf("bytes moved host-to-device: %s before, %s after (%+.2f%%)", audit.FormatMB(c.HtoDBytesBefore), audit.FormatMB(c.HtoDBytesAfter), 100*c.BytesChange))
	for _, cl := range c.Classes {
		line(fmt.Sprintf("pageable class %s: %d copies, %s before; after: %s (%d pageable, %d pinned, %s)", cl.Class, cl.Before.Count,
			ns(cl.Before.HostNs), cl.Status, cl.AfterPageable.Count, cl.AfterPinned.Count, ns(cl.AfterPageable.HostNs+cl.AfterPinned.HostNs)))
	}
	for _, r := range c.Reasons {
		line("- " + r)
	}
	for _, wn := range c.Warnings {
		line("warning: " + wn)
	}
	_, err := io.WriteString(w, b.String())
	return err
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
