package report

import (
	"fmt"
	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/predictions"

	"github.com/nsyscheck/nsyscheck/vocab"
)

// view is what both renderers print: plain strings, escaped by each
// renderer for its own format.
type view struct {
	Title string
	Input string   // the input, its format, GPU and program thread
	About []string // what else describes the input: files read, where the numbers come from
	// NotLesson says that the input is not of the lesson's program and
	// what to run instead; nil where it may be.
	NotLesson *notLessonView
	Verdicts  []verdictView
	// Summary is the answer: each prediction, the exercise and the check
	// against a reference, with what decided each.
	Summary []summaryRow
	// Causes are the diagnostics that broke the lesson's premise, shown
	// beside the verdicts; Diags the others.
	Causes   []diagItem
	Tables   []tableView
	Said     []saidView
	Exercise exerciseView
	Diags    []diagItem
	NoPlots  bool
	Plots    []Plot
}

// notLessonView says that an input is not of the lesson's program, and
// the audit command to run on it instead.
type notLessonView struct {
	Said, Pointer, Command string
}

// diagItem is a diagnostic as a report lists it, with the advice to give
// after it (said once for the diagnostics that share it).
type diagItem struct {
	diagView
	After string
}

// diagItems lists diagnostics with each advice once (adviceAfter).
func diagItems(ds []diagView, said map[string]bool) []diagItem {
	after := adviceAfter(ds, said)
	out := make([]diagItem, len(ds))
	for i, d := range ds {
		out[i] = diagItem{diagView: d, After: sentence(after[i])}
	}
	return out
}

type verdictView struct {
	ID      int
	Verdict string
}

type tableView struct {
	Title   string
	Note    string
	Head    []string
	Right   []bool // right-aligned columns
	Rows    [][]string
	Missing string // why the table is empty
	// Verdicts are the verdicts of the cells that show one, by row and
	// column: a renderer that draws a verdict as a badge draws these,
	// never a cell by its text.
	Verdicts map[cellAt]vocab.Verdict
}

// cellAt is a table cell's row and column.
type cellAt struct{ Row, Col int }

// Verdict is the verdict the cell at row, col shows, "" where it shows none.
func (t tableView) Verdict(row, col int) vocab.Verdict { return t.Verdicts[cellAt{row, col}] }

// setVerdict marks the last row's cell at col as showing v.
func (t *tableView) setVerdict(col int, v vocab.Verdict) {
	if t.Verdicts == nil {
		t.Verdicts = map[cellAt]vocab.Verdict{}
	}
	t.Verdicts[cellAt{len(t.Rows) - 1, col}] = v
}

type saidView struct {
	ID      int
	Topic   string
	Verdict string
	Claims  []claimView
	// Unchecked names the controls the input could not check.
	Unchecked []string
}

// evidenceItem is one line of evidence and the claims it backs.
type evidenceItem struct {
	IDs  []string
	Text string
}

// Evidence lists the prediction's evidence once per distinct line.
func (s saidView) Evidence() []evidenceItem {
	var out []evidenceItem
	at := map[string]int{}
	for _, c := range s.Claims {
		for _, e := range c.Evidence {
			text := evidenceWords(e)
			if i, ok := at[text]; ok {
				out[i].IDs = append(out[i].IDs, c.ID)
				continue
			}
			at[text] = len(out)
			out = append(out, evidenceItem{IDs: []string{c.ID}, Text: text})
		}
	}
	return out
}

// recordLine is one group of records behind the prediction's evidence,
// from the evidence's typed fields.
type recordLine struct {
	Group string // "h2d 1 MiB pageable"
	Table string // the export table or CSV report file
	Where string // "data rows 20..29" or "correlation ids 139..148"
	Count string // "10 calls"
}

// Records lists the groups of records behind the prediction's evidence,
// once each, in the order the evidence names them.
func (s saidView) Records() []recordLine {
	var out []recordLine
	seen := map[recordLine]bool{}
	for _, c := range s.Claims {
		for _, e := range c.Evidence {
			for _, r := range e.Records {
				l := recordLine{Group: groupName(r.Group), Table: r.Table, Count: plural(r.Count, "record")}
				switch {
				case r.Rows != nil:
					l.Where = fmt.Sprintf("data rows %d to %d", r.Rows.First, r.Rows.Last)
				case r.Corr != nil && r.Corr.First == r.Corr.Last:
					l.Where = fmt.Sprintf("correlation id %d", r.Corr.First)
				case r.Corr != nil:
					l.Where = fmt.Sprintf("correlation ids %d to %d", r.Corr.First, r.Corr.Last)
				default:
					continue
				}
				if !seen[l] {
					seen[l] = true
					out = append(out, l)
				}
			}
		}
	}
	return out
}

// plural is n and noun, with an s unless n is 1.
func plural(n int, noun string) string { return counted(n, noun, noun+"s") }

// counted is n and the noun's form for it: one for 1, many otherwise
// ("1 copy", "3 copies").
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

type claimView struct {
	ID        string
	Verdict   string
	Statement string
	Outcome   string                 // the deciding numbers
	Others    []string               // the other sources' answers
	Evidence  []predictions.Evidence // the deciding source's evidence
	Reason    string                 // why unavailable
}

type exerciseView struct {
	Answered bool
	Table    tableView
	Sentence string
	Rule     string
	// Check is the check against a reference and its verdict; "" where no
	// reference was given.
	Check, CheckVerdict string
}

// num formats a number with four significant digits.
func num(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Sprint(x)
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// msText formats milliseconds: three decimals, four below 0.1 ms.
func msText(ms float64) string {
	if ms != 0 && math.Abs(ms) < 0.1 {
		return strconv.FormatFloat(ms, 'f', 4, 64)
	}
	return strconv.FormatFloat(ms, 'f', 3, 64)
}

func gbpsText(g float64) string { return strconv.FormatFloat(g, 'f', 1, 64) }

func pct(share float64) string {
	if share < 0.01 {
		return strconv.FormatFloat(100*share, 'f', 2, 64) + "%"
	}
	return strconv.FormatFloat(100*share, 'f', 1, 64) + "%"
}

func ratioText(r float64) string {
	if r <= 0 {
		return "–"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "x"
}

func verdictWord(v predictions.Verdict) string { return string(v) }

func (rep *Report) view() *view {
	r := rep.Result
	v := &view{Title: rep.Options.Title, NoPlots: rep.Options.NoPlots, Plots: rep.Plots, Summary: summaryRows(r)}
	if v.Title == "" {
		v.Title = "Pinned memory report: " + ctlchar.Line(r.Name())
	}
	said := map[string]bool{}
	causes, rest := splitCauses(diagViews(r.Diagnostics))
	v.Causes, v.Diags = diagItems(causes, said), diagItems(rest, said)
	if why := r.NotTheLesson(); why != nil {
		s, p, c := notLessonWords(r, why)
		v.NotLesson = &notLessonView{Said: sentence(s), Pointer: capital(p), Command: c}
	}
	v.Input = fmt.Sprintf("Input: %s (%s)", ctlchar.Line(r.Input.Path), r.Input.Format)
	if r.Input.GPU != "" {
		v.Input += ", " + r.Input.GPU
	}
	if r.Input.Thread != nil {
		v.Input += ", program thread " + threadID(*r.Input.Thread)
	}
	v.Input += "."
	if len(r.Input.Files) > 1 {
		var fs []string
		for _, f := range r.Input.Files {
			fs = append(fs, filepath.Base(f))
		}
		v.About = append(v.About, "Files read: "+strings.Join(fs, ", ")+".")
	}
	if r.Input.Thread != nil {
		v.About = append(v.About, sentence(threadWords(*r.Input.Thread)))
	}
	if r.Input.ProgramSource != "" {
		v.About = append(v.About, "The program's numbers: "+r.Input.ProgramSource+".")
	}
	v.About = append(v.About, "Where the capture's trace records hold a number, the tables show it and it decides the verdict; the program's own numbers fill in where the trace has none.")
	for _, p := range r.Predictions {
		v.Verdicts = append(v.Verdicts, verdictView{ID: p.ID, Verdict: verdictWord(p.Verdict)})
	}
	for _, p := range predictions.Lesson.Parts() {
		if p.Tables == nil {
			continue
		}
		for _, t := range p.Tables(r) {
			v.Tables = append(v.Tables, tableViewOf(t))
		}
	}
	for _, p := range r.Predictions {
		s := saidView{ID: p.ID, Topic: topicOf(p.ID), Verdict: verdictWord(p.Verdict)}
		for _, u := range p.Unchecked {
			s.Unchecked = append(s.Unchecked, uncheckedWords(u))
		}
		for _, id := range p.Claims {
			if c := r.Claim(id); c != nil {
				s.Claims = append(s.Claims, claimOf(c))
			}
		}
		v.Said = append(v.Said, s)
	}
	v.Exercise = exerciseOf(r)
	return v
}

// tableNote names the source a table's numbers come from.
func tableNote(from predictions.Source) string {
	return "Numbers from " + sourceWords(from) + "."
}

func claimOf(c *predictions.Claim) claimView {
	cv := claimView{ID: c.ID, Verdict: verdictWord(c.Verdict), Statement: wordsText(c.Statement), Reason: sourceWhys(c.Why)}
	if c.Measured != nil {
		m, cmp := *c.Measured, c.Compare
		switch {
		case c.Verdict == predictions.Died && cmp.Relation == predictions.Within:
			cv.Outcome = fmt.Sprintf("measured %s against a predicted %s, and it %s", num(m), num(cmp.Bound), needsText(cmp))
		case c.Verdict == predictions.Died:
			// A failed claim reads as one, never as the inequality it broke.
			cv.Outcome = "measured " + failedText(c)
		case cmp.Relation == predictions.Within:
			lo, hi := span(cmp)
			cv.Outcome = fmt.Sprintf("measured %s against a predicted %s, and it holds from %s to %s",
				num(m), num(cmp.Bound), num(lo), num(hi))
		default:
			cv.Outcome = fmt.Sprintf("measured %s %s %s", num(m), relationWord(cmp), num(cmp.Bound))
		}
		if u := wordsText(c.Unit); u != "" {
			cv.Outcome += "; unit: " + u
		}
		if c.From != "" {
			cv.Outcome += "; from " + sourceWords(c.From)
		}
	}
	for _, sv := range c.Sources {
		if sv.Source == c.From {
			continue
		}
		switch {
		case sv.Measured != nil:
			cv.Others = append(cv.Others, fmt.Sprintf("%s give %s (%s)", sourceWords(sv.Source), num(*sv.Measured), sv.Verdict))
		case sv.Why != nil:
			cv.Others = append(cv.Others, fmt.Sprintf("%s cannot answer: %s", sourceWords(sv.Source), whyWords(sv.Why)))
		}
	}
	if c.Verdict != predictions.Unavailable {
		for _, e := range c.Evidence {
			if e.Source == c.From {
				cv.Evidence = append(cv.Evidence, e)
			}
		}
	}
	return cv
}

func exerciseOf(r *predictions.Result) exerciseView {
	ex := r.Exercise
	e := exerciseView{Rule: exerciseRule()}
	if rc := r.Reference; rc != nil {
		e.Check, e.CheckVerdict = referenceWords(rc), string(rc.Verdict)
	}
	e.Table = tableView{
		Title: "Pageable/pinned at 64 MiB, both directions",
		Head:  []string{"direction", "pageable ms", "pinned ms", "pageable/pinned"},
		Right: []bool{false, true, true, true},
	}
	if ex.Verdict != vocab.Answered || ex.H2DRatio == nil || ex.D2HRatio == nil {
		e.Sentence = "Unanswered: " + sourceWhys(ex.Why)
		e.Table.Missing = "No two-direction ratios: " + sourceWhys(ex.Why)
		return e
	}
	e.Answered = true
	e.Table.Note = tableNote(ex.From)
	for _, d := range []struct {
		dir   vocab.Direction
		name  string
		ratio float64
	}{{vocab.H2D, "host to device", *ex.H2DRatio}, {vocab.D2H, "device to host", *ex.D2HRatio}} {
		pg, pn := "–", "–"
		for _, c := range predictions.CopyRows.Of(r) {
			if c.From == ex.From && c.Direction == d.dir && c.Bytes == predictions.ExerciseBytes {
				if c.Source == vocab.MemPinned {
					pn = msText(c.Ms)
				} else {
					pg = msText(c.Ms)
				}
			}
		}
		e.Table.Rows = append(e.Table.Rows, []string{d.name, pg, pn, ratioText(d.ratio)})
	}
	h, d := ratioText(*ex.H2DRatio), ratioText(*ex.D2HRatio)
	switch ex.Answer {
	case predictions.GainH2D:
		e.Sentence = fmt.Sprintf("Pinning buys more on the way to the device: pageable costs %s pinned host to device against %s device to host.", h, d)
	case predictions.GainD2H:
		e.Sentence = fmt.Sprintf("Pinning buys more on the way back: pageable costs %s pinned device to host against %s host to device.", d, h)
	default:
		e.Sentence = fmt.Sprintf("Pinning buys about the same both ways: pageable costs %s pinned host to device and %s device to host.", h, d)
	}
	return e
}
