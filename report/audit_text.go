package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
)

// WriteAudit renders an audit (and, with a capture after the fix, that
// audit and the check) in the named format: text laid out for the width
// and verbosity opts.Text gives, JSON in the versioned envelope
// (AuditEnvelope, with opts.Version), or Markdown.
func WriteAudit(w io.Writer, format string, out *audit.Output, opts WriteOptions) error {
	switch format {
	case FormatJSON:
		return WriteJSON(w, AuditEnvelope(out, opts.Version))
	case FormatMarkdown:
		return AuditMarkdown(w, out)
	case FormatText:
		return capped(w, func(w io.Writer) error { return AuditText(w, out, opts.Text) })
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
func ns(v int64) string { return formatNs(float64(v)) }

// AuditText writes an audit (and, with a capture after the fix, its check)
// for a terminal, the answer first: the verdict, the region table and what
// explains it, the regions' copies, what to change; then each capture's
// copies, classes, findings, prediction and NVIDIA's rule. Laid out for
// opts' width: tables that fit, a class's key on its own line when the
// class table would not, everything else wrapped, nothing cut. With
// opts.Verbose it lists every class and every finding's evidence copies.
func AuditText(w io.Writer, out *audit.Output, opts TextOptions) error {
	width := opts.width()
	v := buildAuditView(out, opts.Verbose)
	var b strings.Builder
	head := strings.ToUpper(v.Verdict)
	if out.Check != nil {
		writePath(&b, "Check of "+out.Check.Before, "(before) against "+ctlchar.Line(out.Check.After)+" (after): "+head, width)
	} else {
		writePath(&b, "Audit of "+out.Before.Capture+":", head, width)
	}
	writeWrapped(&b, v.Answer, width, "  ", "    ")
	for _, a := range v.About {
		writeWrapped(&b, a, width, "  ", "    ")
	}
	b.WriteByte('\n')
	writeTextTable(&b, v.Regions, width)
	for _, n := range v.Notes {
		writeWrapped(&b, n, width, "  ", "    ")
	}
	for _, l := range v.Limits {
		writeWrapped(&b, fmt.Sprintf("%s %s: %s", l.Level, l.Code, l.Said()), width, "  ", "    ")
	}
	b.WriteByte('\n')
	writeTextTable(&b, v.Shares, width)
	writeAdviceText(&b, v.Advice, width)
	for _, d := range v.Audits {
		b.WriteByte('\n')
		writeAuditDetailText(&b, d, width)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTextTable writes a titled table, split as writeTable splits one
// that is too wide.
func writeTextTable(b *strings.Builder, t tableView, width int) {
	writeWrapped(b, t.Title, width, "", "  ")
	if len(t.Rows) == 0 && t.Missing != "" {
		writeWrapped(b, t.Missing, width, "  ", "    ")
		return
	}
	writeKeyedRows(b, t, width)
	if t.Note != "" {
		writeWrapped(b, t.Note, width, "  ", "    ")
	}
}

// writeAdviceText writes what to change.
func writeAdviceText(b *strings.Builder, a adviceView, width int) {
	b.WriteString("\nWhat to change (" + a.Framework + ")\n")
	if a.None != "" {
		writeWrapped(b, a.None, width, "  ", "    ")
		return
	}
	for _, c := range a.Classes {
		for _, cl := range c.Classes {
			writeWrapped(b, cl, width, "  ", "    ")
		}
		for _, f := range c.Fix {
			writeWrapped(b, f, width, "    - ", "      ")
		}
	}
	if a.Sites != nil {
		b.WriteByte('\n')
		writeTextTable(b, *a.Sites, width)
	}
	writeWrapped(b, a.Line, width, "  ", "    ")
}

// writeAuditDetailText writes one capture's details.
func writeAuditDetailText(b *strings.Builder, d auditDetail, width int) {
	writePath(b, d.Title, "", width)
	for _, a := range d.About {
		writeWrapped(b, a, width, "  ", "    ")
	}
	b.WriteByte('\n')
	writeTextTable(b, d.Totals, width)
	writeAuditClasses(b, d.Classes, width)
	if len(d.Offenders) > 0 {
		b.WriteString("\nTop offenders (pageable or unknown host memory)\n")
		for i, o := range d.Offenders {
			writeWrapped(b, o, width, fmt.Sprintf("  %d. ", i+1), "     ")
		}
	}
	b.WriteString("\nFindings\n")
	for _, f := range d.Findings {
		writeWrapped(b, f.Head, width, "  ", "    ")
		writeWrapped(b, "rule: "+f.Rule, width, "    ", "      ")
		if f.Lead != "" {
			writeWrapped(b, f.Lead, width, "    ", "      ")
		}
		for _, e := range f.Evidence {
			writeWrapped(b, e, width, "      ", "        ")
		}
		if f.More > 0 {
			writeWrapped(b, fmt.Sprintf("... %d more not shown: -v shows them; --format json holds them too", f.More), width, "      ", "        ")
		}
	}
	for _, sec := range []struct {
		title string
		lines []string
	}{{"Prediction of the copy calls' host time", d.Prediction}, {"Replay", d.Replay}, {"", d.Rule}} {
		if len(sec.lines) == 0 {
			continue
		}
		b.WriteByte('\n')
		if sec.title != "" {
			b.WriteString(sec.title + "\n")
			for _, l := range sec.lines {
				writeWrapped(b, l, width, "  ", "    ")
			}
			continue
		}
		writeWrapped(b, sec.lines[0], width, "", "    ")
		for _, l := range sec.lines[1:] {
			writeWrapped(b, l, width, "  ", "    ")
		}
	}
	if len(d.Notes) > 0 {
		b.WriteByte('\n')
	}
	for _, n := range d.Notes {
		if n.Code == "note" {
			writeWrapped(b, "note: "+n.Message, width, "", "    ")
			continue
		}
		writeWrapped(b, fmt.Sprintf("%s %s: %s", n.Level, n.Code, n.Message), width, "", "    ")
	}
}

// writeAuditClasses writes the class table as writeKeyedRows lays it out.
func writeAuditClasses(b *strings.Builder, t tableView, width int) {
	b.WriteByte('\n')
	writeTextTable(b, t, width)
}

// writeKeyedRows writes a table whose first column is each row's key: one
// row per line when the table fits the width; else each key on its own line
// (wrapped if longer than a line) with its numbers in columns beneath it,
// or, narrower still, in words.
func writeKeyedRows(b *strings.Builder, t tableView, width int) {
	t.Rows = lineCells(t.Rows)
	oneLine := append([][]string{t.Head}, t.Rows...)
	if tableWidth(oneLine, len(t.Head)) <= width {
		writeTable(b, oneLine, 1, width)
		return
	}
	// Each class's key on its own line, its numbers beneath, right-aligned
	// in columns under one header.
	const indent = "    "
	head := t.Head[1:]
	widths := make([]int, len(head))
	for _, row := range oneLine {
		for k, cell := range row[1:] {
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
		b.WriteString(t.Head[0] + "\n" + row(head) + "\n")
	}
	for _, r := range t.Rows {
		writeWrapped(b, r[0], width, "", indent)
		if columns {
			b.WriteString(row(r[1:]) + "\n")
			continue
		}
		var parts []string
		for k, cell := range r[1:] {
			parts = append(parts, head[k]+" "+cell)
		}
		writeWrapped(b, strings.Join(parts, ", "), width, indent, indent+"  ")
	}
}

// auditEvidenceText is one copy of a finding's evidence in words; verbose
// adds the timestamps that find it in Nsight Systems.
func auditEvidenceText(e audit.Evidence, verbose bool) string {
	s := fmt.Sprintf("correlation id %d (pid %d, tid %d): %s %s %s, call %s for a %s copy (%.0f%%)",
		e.CorrelationID, e.PID, e.TID, e.API, e.Direction, formatMB(e.Bytes), ns(e.CallNs), ns(e.GPUNs), 100*e.Held)
	if e.Range != "" {
		s += " in NVTX range " + e.Range
	}
	if verbose {
		s += fmt.Sprintf("; call at %d ns, copy at %d ns", e.CallStart, e.GPUStart)
	}
	return s
}

// AuditMarkdown writes an audit (and its check) as Markdown, the answer
// first, as AuditText orders it.
func AuditMarkdown(w io.Writer, out *audit.Output) error {
	v := buildAuditView(out, false)
	ew := &errWriter{w: w}
	ew.printf("# %s: %s\n\n", mdText(v.Title), v.Verdict)
	ew.printf("%s.\n\n", mdText(capitalise(v.Answer)))
	for _, a := range v.About {
		ew.printf("- %s\n", mdText(a))
	}
	ew.printf("\n")
	writeMarkdownTable(ew, v.Regions)
	for _, n := range v.Notes {
		ew.printf("- %s\n", mdText(n))
	}
	for _, l := range v.Limits {
		ew.printf("- **%s %s**: %s\n", l.Level, l.Code, mdText(l.Said()))
	}
	ew.printf("\n")
	writeMarkdownTable(ew, v.Shares)
	ew.printf("## What to change (%s)\n\n", mdText(v.Advice.Framework))
	if v.Advice.None != "" {
		ew.printf("%s.\n\n", mdText(capitalise(v.Advice.None)))
	}
	for _, c := range v.Advice.Classes {
		for _, cl := range c.Classes {
			ew.printf("- %s\n", mdText(cl))
		}
		for _, f := range c.Fix {
			ew.printf("  - fix: %s\n", mdText(f))
		}
	}
	if v.Advice.Sites != nil {
		ew.printf("\n")
		writeMarkdownTable(ew, *v.Advice.Sites)
		ew.printf("%s.\n\n", mdText(capitalise(v.Advice.Line)))
	} else if v.Advice.Line != "" {
		ew.printf("\n%s.\n\n", mdText(capitalise(v.Advice.Line)))
	}
	for _, d := range v.Audits {
		ew.printf("## %s\n\n", mdText(d.Title))
		for i, a := range d.About {
			if i > 0 {
				// The first starts with the capture's path, which a
				// capital would change.
				a = capitalise(a)
			}
			ew.printf("%s.\n\n", mdText(a))
		}
		writeMarkdownTable(ew, d.Totals)
		writeMarkdownTable(ew, d.Classes)
		for _, f := range d.Findings {
			ew.printf("- **%s** (%s)", mdText(f.Head), mdText(f.Rule))
			if len(f.Evidence) > 0 {
				ew.printf(": %s", mdText(strings.Join(f.Evidence, "; ")))
			}
			ew.printf("\n")
		}
		for _, l := range append(append(append([]string(nil), d.Prediction...), d.Replay...), d.Rule...) {
			ew.printf("- %s\n", mdText(l))
		}
		for _, n := range d.Notes {
			ew.printf("- %s %s: %s\n", n.Level, n.Code, mdText(n.Message))
		}
		ew.printf("\n")
	}
	return ew.err
}

// writeMarkdownTable writes a titled table as Markdown.
func writeMarkdownTable(ew *errWriter, t tableView) {
	if len(t.Rows) == 0 && t.Missing != "" {
		ew.printf("**%s**: %s.\n\n", mdText(t.Title), mdText(t.Missing))
		return
	}
	ew.printf("**%s**\n\n|", mdText(t.Title))
	for _, h := range t.Head {
		ew.printf(" %s |", mdText(h))
	}
	ew.printf("\n|")
	for i := range t.Head {
		if i < len(t.Right) && t.Right[i] {
			ew.printf("---:|")
		} else {
			ew.printf("---|")
		}
	}
	ew.printf("\n")
	for _, r := range t.Rows {
		ew.printf("|")
		for _, c := range r {
			ew.printf(" %s |", mdText(ctlchar.Line(c)))
		}
		ew.printf("\n")
	}
	if t.Note != "" {
		ew.printf("\n%s.\n", mdText(capitalise(t.Note)))
	}
	ew.printf("\n")
}

// lineCells is rows with each cell escaped for its one line of a table
// (ctlchar.Line): a newline in a name would otherwise end the row there and
// start one of the name's own that reads as the table's.
func lineCells(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(r))
		for k, c := range r {
			out[i][k] = ctlchar.Line(c)
		}
	}
	return out
}

// mdText escapes what Markdown would read as markup in a table or a line
// (md's escapes: emphasis, code, links, HTML, a table cell's end, a
// heading), so that a name from a capture renders as the text it is. A
// newline in a name would end the line there and let the name's own text
// start a block of its own (a heading, a list item, a row), so each is a
// space, as text output's wrapping makes it.
func mdText(s string) string {
	return md(strings.ReplaceAll(s, "\r\n", " "))
}

// capitalise starts a sentence with a capital.
func capitalise(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return strings.ToUpper(string(r)) + s[n:]
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

// formatNs formats nanoseconds as ms (or µs below a millisecond).
func formatNs(v float64) string {
	switch {
	case v >= 1e6 || v <= -1e6:
		return fmt.Sprintf("%.1f ms", v/1e6)
	case v >= 1e3 || v <= -1e3:
		return fmt.Sprintf("%.1f µs", v/1e3)
	}
	return fmt.Sprintf("%.0f ns", v)
}

// formatMB formats bytes as MB (1e6 bytes).
func formatMB(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
