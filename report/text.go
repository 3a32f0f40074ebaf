package report

import (
	"fmt"
	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/nsyscheck/nsyscheck/internal/textwrap"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// DefaultWidth is the text width when the output is not a terminal and
// COLUMNS does not say otherwise.
const DefaultWidth = 100

// minWidth is the narrowest width text is laid out for.
const minWidth = 40

// TextOptions shape the text output.
type TextOptions struct {
	// Width is the line width to wrap at; 0 means DefaultWidth.
	Width int
	// Verbose shows every evidence line of every source, not only the line
	// that decided each claim.
	Verbose bool
}

func (o TextOptions) width() int {
	switch {
	case o.Width <= 0:
		return DefaultWidth
	case o.Width < minWidth:
		return minWidth
	}
	return o.Width
}

// formatWords names an input format in words.
var formatWords = map[string]string{
	"nsys-rep":     "Nsight Systems report",
	"sqlite":       "SQLite export",
	"csv":          "nsys stats CSV reports",
	"transcript":   "program transcript",
	"measurements": "measurements file",
}

// threadWords explains the program's thread in words.
func threadWords(t vocab.Thread) string {
	which := fmt.Sprintf("thread %d of process %d", t.TID, t.PID)
	if t.PID == t.TID {
		which += ", the process's main thread"
	}
	return fmt.Sprintf("program thread %s (%s): the thread with the most cudaMemcpyAsync calls; "+
		"the trace's numbers come from its calls only, other threads' calls are left out", threadID(t), which)
}

// wrap breaks text into lines of at most width runes: the first line starts
// with first, the others with indent. Nothing is cut and no word broken: a
// word longer than a line (a path) stands whole on its own; a number keeps
// the unit after it.
func wrap(text string, width int, first, indent string) []string {
	return textwrap.Wrap(text, width, textwrap.Options{First: first, Indent: indent})
}

// writePath writes an input's path and what follows it. The path is never
// broken, so that it can be copied whole: a path wider than the line stands
// alone on its line, and the rest follows wrapped beneath it.
func writePath(b *strings.Builder, path, rest string, width int) {
	path = ctlchar.Line(path)
	if rest == "" {
		b.WriteString(path + "\n")
		return
	}
	// rest starting with ", " joins the path without a space.
	sep := " "
	if strings.HasPrefix(rest, ", ") {
		sep, rest = ", ", rest[2:]
	}
	if utf8.RuneCountInString(path)+len(sep)+utf8.RuneCountInString(strings.Fields(rest)[0]) <= width {
		writeWrapped(b, path+sep+rest, width, "", "    ")
		return
	}
	b.WriteString(path + "\n")
	writeWrapped(b, rest, width, "    ", "    ")
}

// writeWrapped writes text wrapped as wrap does.
func writeWrapped(b *strings.Builder, text string, width int, first, indent string) {
	for _, l := range wrap(text, width, first, indent) {
		b.WriteString(l)
		b.WriteByte('\n')
	}
}

// valueText is a claim's measured value against its bound, with the unit.
func valueText(c *predictions.Claim) string {
	if c.Measured == nil {
		return "no value"
	}
	m, cmp := *c.Measured, c.Compare
	var s string
	switch {
	case c.Verdict == predictions.Died:
		// A failed claim reads as one, never as the inequality it broke.
		s = failedText(c)
		if cmp.Relation == predictions.Within {
			s += fmt.Sprintf(" (predicted %s)", num(cmp.Bound))
		}
	case cmp.Relation == predictions.Within:
		lo, hi := span(cmp)
		s = fmt.Sprintf("%s within [%s, %s] (predicted %s)", num(m), num(lo), num(hi), num(cmp.Bound))
	default:
		s = fmt.Sprintf("%s %s %s", num(m), relationWord(cmp), num(cmp.Bound))
	}
	if u := wordsText(c.Unit); u != "" {
		s += " " + u
	}
	return s
}

// decidingEvidence splits a claim's evidence into the lines of the source
// that decided it and the rest, each as "source: text".
func decidingEvidence(c *predictions.Claim) (deciding, others []string) {
	for _, e := range c.Evidence {
		if c.From != "" && e.Source == c.From {
			deciding = append(deciding, evidenceLine(e))
		} else {
			others = append(others, evidenceLine(e))
		}
	}
	return deciding, others
}

// evidenceLines is every evidence line of a claim, "source: text".
func evidenceLines(c *predictions.Claim) []string {
	out := make([]string, len(c.Evidence))
	for i, e := range c.Evidence {
		out[i] = evidenceLine(e)
	}
	return out
}

// Text renders one result for a terminal, the answer first: the input,
// then each prediction's verdict with the claims that decided it (a died
// claim with its number and what it needed), the exercise and the check
// against a reference, and what broke the lesson's premise; then the
// evidence: per claim its verdict, measured value with unit against the
// bound and statement, with the evidence wrapped beneath; and the other
// diagnostics. Nothing is cut: what is left out without Verbose is counted
// and named. An application's capture, where none of the lesson's parts is
// found, says so and points at the audit; -v lists why each claim is
// unavailable.
func Text(w io.Writer, r *predictions.Result, opts TextOptions) error {
	width := opts.width()
	var b strings.Builder
	var head []string
	if f := formatWords[string(r.Input.Format)]; f != "" {
		head = append(head, "("+f+")")
	}
	if r.Input.GPU != "" {
		head[len(head)-1] += ","
		head = append(head, r.Input.GPU)
	}
	writePath(&b, r.Input.Path, strings.Join(head, " "), width)
	b.WriteByte('\n')
	said := map[string]bool{}
	causes, rest := splitCauses(diagViews(r.Diagnostics))
	if why := r.NotTheLesson(); why != nil {
		// An application's capture: that, and where to go instead.
		line, pointer, command := notLessonWords(r, why)
		writeWrapped(&b, line, width, "", "    ")
		writeWrapped(&b, pointer, width, "", "    ")
		b.WriteString("    " + command + "\n")
		if !opts.Verbose {
			if ds := append(causes, rest...); len(ds) > 0 {
				b.WriteByte('\n')
				writeDiagnostics(&b, ds, width, said)
			}
			b.WriteByte('\n')
			writeWrapped(&b, "Every prediction is unavailable; -v shows why, claim by claim.", width, "", "    ")
			_, err := io.WriteString(w, b.String())
			return err
		}
		b.WriteByte('\n')
	}
	writeSummary(&b, summaryRows(r), width)
	if len(causes) > 0 {
		b.WriteByte('\n')
		writeDiagnostics(&b, causes, width, said)
	}
	b.WriteByte('\n')
	if r.Input.Thread != nil {
		writeWrapped(&b, threadWords(*r.Input.Thread), width, "", "    ")
	}

	idW, vW := 0, 0
	for _, c := range r.Claims {
		idW = max(idW, len(c.ID))
		vW = max(vW, len(c.Verdict))
	}
	cw := claimWriter{b: &b, width: width, verbose: opts.Verbose, idW: idW, vW: vW, indent: strings.Repeat(" ", idW+2+vW+2)}
	if width < 72 {
		cw.indent = "    "
	}
	hidden := 0
	for i := range r.Claims {
		hidden += cw.claim(&r.Claims[i])
	}
	if r.DeviceCopyGBps > 0 {
		b.WriteByte('\n')
		writeWrapped(&b, fmt.Sprintf("device-to-device copy: %s GB/s (%s)", gbpsText(r.DeviceCopyGBps), deviceCopyFrom(r.DeviceCopyFrom)), width, "", "    ")
	}
	if len(rest) > 0 {
		b.WriteByte('\n')
		writeDiagnostics(&b, rest, width, said)
	}
	if hidden > 0 {
		b.WriteByte('\n')
		writeWrapped(&b, fmt.Sprintf("%s not shown: -v shows every line; --format json or markdown holds them too.", plural(hidden, "more evidence line")), width, "", "    ")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSummary writes the answer's rows as a table: label, verdict and
// what decided it, wrapped beneath its own column (beneath the label on a
// narrow terminal), and each row's notes beneath it.
func writeSummary(b *strings.Builder, rows []summaryRow, width int) {
	lW, vW := 0, 0
	for _, row := range rows {
		lW = max(lW, len(row.Label))
		vW = max(vW, len(row.Verdict))
	}
	indent := strings.Repeat(" ", lW+2+vW+2)
	if width < 60 {
		indent = "    "
	}
	for _, row := range rows {
		writeWrapped(b, row.Text, width, fmt.Sprintf("%-*s  %-*s  ", lW, row.Label, vW, row.Verdict), indent)
		for _, n := range row.Notes {
			writeWrapped(b, n, width, indent, indent+"  ")
		}
	}
}

// writeDiagnostics writes diagnostics, one a line, each advice once after
// the last that carries it unless said before.
func writeDiagnostics(b *strings.Builder, ds []diagView, width int, said map[string]bool) {
	after := adviceAfter(ds, said)
	for i, d := range ds {
		writeWrapped(b, fmt.Sprintf("%s %s: %s", d.Level, d.Code, d.Message), width, "", "    ")
		if after[i] != "" {
			writeWrapped(b, sentence(after[i]), width, "    ", "    ")
		}
	}
}

// claimWriter writes Text's claims, aligned on the widest id and verdict.
type claimWriter struct {
	b       *strings.Builder
	width   int
	verbose bool
	idW, vW int
	indent  string
}

// claim writes one claim: its verdict, value and statement, why it is
// unavailable or the evidence that decided it, and in verbose mode the
// other sources. It returns how many evidence lines it left out.
func (cw claimWriter) claim(c *predictions.Claim) (hidden int) {
	b, width, indent := cw.b, cw.width, cw.indent
	first := fmt.Sprintf("%-*s  %-*s  ", cw.idW, c.ID, cw.vW, c.Verdict)
	writeWrapped(b, valueText(c)+": "+wordsText(c.Statement), width, first, indent)
	if c.Verdict == predictions.Unavailable {
		writeWrapped(b, "why unavailable: "+sourceWhys(c.Why), width, indent, indent+"  ")
		if cw.verbose {
			for _, e := range evidenceLines(c) {
				writeWrapped(b, e, width, indent, indent+"  ")
			}
		}
		return 0
	}
	deciding, others := decidingEvidence(c)
	show := deciding
	if !cw.verbose && len(deciding) > 1 {
		// The last line of the deciding source states the outcome.
		show = deciding[len(deciding)-1:]
	}
	label := "evidence"
	if c.Verdict == predictions.Died {
		label = "why it died"
	}
	for j, e := range show {
		if j == 0 {
			e = label + ": " + e
		}
		writeWrapped(b, e, width, indent, indent+"  ")
	}
	if !cw.verbose {
		return len(c.Evidence) - len(show)
	}
	for _, e := range others {
		writeWrapped(b, e, width, indent, indent+"  ")
	}
	for _, sv := range c.Sources {
		if sv.Source == c.From {
			continue
		}
		if sv.Measured != nil {
			writeWrapped(b, fmt.Sprintf("%s gives %s (%s)", sv.Source, num(*sv.Measured), sv.Verdict), width, indent, indent+"  ")
		} else if sv.Why != nil {
			writeWrapped(b, fmt.Sprintf("%s cannot answer: %s", sv.Source, whyWords(sv.Why)), width, indent, indent+"  ")
		}
	}
	return 0
}

// TextMulti renders several results side by side: one column per input
// with each claim's verdict and measured value, then, per input, why each
// claim died or was unavailable, and the diagnostics.
func TextMulti(w io.Writer, results []*predictions.Result, opts TextOptions) error {
	width := opts.width()
	var b strings.Builder
	for i, r := range results {
		var rest []string
		if r.Input.GPU != "" {
			rest = append(rest, r.Input.GPU)
		}
		if r.Input.Thread != nil {
			rest = append(rest, "program thread "+threadID(*r.Input.Thread))
		}
		if len(rest) > 0 {
			rest[0] = ", " + rest[0]
		}
		writePath(&b, fmt.Sprintf("[%d] %s", i+1, r.Input.Path), strings.Join(rest, ", "), width)
	}
	for _, r := range results {
		if r.Input.Thread != nil {
			writeWrapped(&b, "(program thread PID/TID: the thread with the most cudaMemcpyAsync calls, whose calls the trace's numbers come from; other threads' calls are left out)", width, "", " ")
			break
		}
	}
	b.WriteByte('\n')
	if len(results) == 0 {
		_, err := io.WriteString(w, b.String())
		return err
	}
	writeMultiTable(&b, multiRows(results), len(results), width)
	if notes := multiNotes(results, width); notes != "" {
		b.WriteByte('\n')
		b.WriteString(notes)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// multiRows is TextMulti's table: a head, then a row per claim, per
// prediction and the exercise, with a cell per result.
func multiRows(results []*predictions.Result) [][]string {
	head := []string{"CLAIM", "BOUND"}
	for i := range results {
		head = append(head, fmt.Sprintf("[%d]", i+1))
	}
	rows := [][]string{head}
	for i, c := range results[0].Claims {
		row := []string{c.ID, boundText(&c)}
		for _, r := range results {
			row = append(row, claimCellText(r, i))
		}
		rows = append(rows, row)
	}
	for i, p := range results[0].Predictions {
		row := []string{fmt.Sprintf("prediction %d", p.ID), ""}
		for _, r := range results {
			v := "-"
			if i < len(r.Predictions) {
				v = string(r.Predictions[i].Verdict)
				if n := len(r.Predictions[i].Unchecked); n > 0 {
					v += fmt.Sprintf(" (%d unchecked)", n)
				}
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	row := []string{"exercise", "h2d/d2h 64 MiB"}
	for _, r := range results {
		ex := r.Exercise
		if ex.Verdict != vocab.Answered || ex.H2DRatio == nil || ex.D2HRatio == nil {
			row = append(row, "unavailable")
			continue
		}
		row = append(row, fmt.Sprintf("%.2f/%.2f %s", *ex.H2DRatio, *ex.D2HRatio, ex.Answer))
	}
	rows = append(rows, row)
	checked := false
	row = []string{"reference", "h2d within " + pctPlain(predictions.ReferenceTolerance)}
	for _, r := range results {
		rc := r.Reference
		switch {
		case rc == nil:
			row = append(row, "-")
		case rc.Deviation == nil:
			checked = true
			row = append(row, string(rc.Verdict))
		default:
			checked = true
			row = append(row, fmt.Sprintf("%s %+.1f%%", rc.Verdict, 100**rc.Deviation))
		}
	}
	if checked {
		rows = append(rows, row)
	}
	return rows
}

// writeMultiTable writes the rows as a table where every input's column
// fits beside the claims, else as a list per input.
func writeMultiTable(b *strings.Builder, rows [][]string, n, width int) {
	fits := true
	for i := 0; i < n; i++ {
		cols := make([][]string, len(rows))
		for k, row := range rows {
			cols[k] = []string{row[0], row[1], row[i+2]}
		}
		fits = fits && tableWidth(cols, 3) <= width
	}
	if fits {
		writeTable(b, rows, 2, width)
		return
	}
	// Too narrow for even one input beside the claims: a list per input.
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, row := range rows[1:] {
			text := row[i+2]
			if row[1] != "" {
				text += " (" + row[1] + ")"
			}
			writeWrapped(b, text, width, fmt.Sprintf("[%d] %s: ", i+1, row[0]), "      ")
		}
	}
}

// multiNotes says, per input, why each claim died or was unavailable, the
// unchecked controls and the diagnostics.
func multiNotes(results []*predictions.Result, width int) string {
	var notes strings.Builder
	for i, r := range results {
		tag := fmt.Sprintf("[%d] ", i+1)
		pad := strings.Repeat(" ", len(tag)+2)
		notLesson := r.NotTheLesson()
		if notLesson != nil {
			// An application's capture: that, and where to go instead
			// of the reasons of every claim.
			line, pointer, command := notLessonWords(r, notLesson)
			writeWrapped(&notes, line+"; "+pointer+" "+command, width, tag, pad)
		}
		causes, rest := splitCauses(diagViews(r.Diagnostics))
		said := map[string]bool{}
		writeTagged(&notes, causes, width, tag, pad, said)
		for j := range r.Claims {
			c := &r.Claims[j]
			if notLesson != nil {
				break
			}
			switch c.Verdict {
			case predictions.Died:
				deciding, _ := decidingEvidence(c)
				why := valueText(c)
				if len(deciding) > 0 {
					why = deciding[len(deciding)-1]
				}
				writeWrapped(&notes, fmt.Sprintf("%s died: %s", c.ID, why), width, tag, pad)
			case predictions.Unavailable:
				writeWrapped(&notes, fmt.Sprintf("%s unavailable: %s", c.ID, sourceWhys(c.Why)), width, tag, pad)
			}
		}
		for _, p := range r.Predictions {
			for _, u := range p.Unchecked {
				writeWrapped(&notes, fmt.Sprintf("prediction %d: %s", p.ID, uncheckedWords(u)), width, tag, pad)
			}
		}
		if rc := r.Reference; rc != nil && rc.Verdict != predictions.Held {
			writeWrapped(&notes, fmt.Sprintf("reference %s: %s", rc.Verdict, referenceWords(rc)), width, tag, pad)
		}
		writeTagged(&notes, rest, width, tag, pad, said)
	}
	return notes.String()
}

// writeTagged writes one input's diagnostics after its tag, each advice
// once as writeDiagnostics does.
func writeTagged(b *strings.Builder, ds []diagView, width int, tag, pad string, said map[string]bool) {
	after := adviceAfter(ds, said)
	for i, d := range ds {
		writeWrapped(b, fmt.Sprintf("%s %s: %s", d.Level, d.Code, d.Message), width, tag, pad)
		if after[i] != "" {
			writeWrapped(b, sentence(after[i]), width, pad, pad)
		}
	}
}

// tableWidth is the width of the first n columns of rows laid out as
// writeTable does.
func tableWidth(rows [][]string, n int) int {
	total := 0
	for i := 0; i < n; i++ {
		w := 0
		for _, row := range rows {
			if i < len(row) {
				w = max(w, utf8.RuneCountInString(row[i]))
			}
		}
		total += w
		if i < n-1 {
			total += 2
		}
	}
	return total
}

// writeTable writes rows as left-aligned columns two spaces apart. When the
// table is wider than width, the columns after the first fixed ones are
// split into several tables, each repeating the fixed columns. Each cell
// is one line (lineCells).
func writeTable(b *strings.Builder, rows [][]string, fixed, width int) {
	rows = lineCells(rows)
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	fixedW := 0
	for i := 0; i < fixed && i < len(widths); i++ {
		fixedW += widths[i] + 2
	}
	// Groups of the other columns that fit beside the fixed ones (at least
	// one column per group).
	var groups [][]int
	var cur []int
	used := fixedW
	for i := fixed; i < len(widths); i++ {
		if len(cur) > 0 && used+widths[i] > width {
			groups = append(groups, cur)
			cur, used = nil, fixedW
		}
		cur = append(cur, i)
		used += widths[i] + 2
	}
	if len(cur) > 0 || len(groups) == 0 {
		groups = append(groups, cur)
	}
	for g, cols := range groups {
		if g > 0 {
			b.WriteByte('\n')
		}
		all := make([]int, 0, fixed+len(cols))
		for i := 0; i < fixed && i < len(widths); i++ {
			all = append(all, i)
		}
		all = append(all, cols...)
		for _, row := range rows {
			var line strings.Builder
			for k, i := range all {
				cell := ""
				if i < len(row) {
					cell = row[i]
				}
				line.WriteString(cell)
				if k < len(all)-1 {
					line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
				}
			}
			b.WriteString(strings.TrimRight(line.String(), " "))
			b.WriteByte('\n')
		}
	}
}

func boundText(c *predictions.Claim) string {
	if c.Compare.Relation == predictions.Within {
		return fmt.Sprintf("%gx of predicted", c.Compare.Factor)
	}
	return relationWord(c.Compare) + " " + num(c.Compare.Bound)
}

func claimCellText(r *predictions.Result, i int) string {
	if i >= len(r.Claims) {
		return "-"
	}
	c := r.Claims[i]
	if c.Measured == nil {
		return string(c.Verdict)
	}
	s := fmt.Sprintf("%s %s", c.Verdict, num(*c.Measured))
	if c.Compare.Relation == predictions.Within {
		s += " vs " + num(c.Compare.Bound)
	}
	return s
}
