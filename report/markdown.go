package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
	"github.com/nsyscheck/nsyscheck/predictions"
)

// md escapes text for Markdown: characters that would start emphasis,
// code, links, HTML or break a table cell, and newlines. An underscore inside a word
// (CUPTI_ACTIVITY_KIND_RUNTIME) is left alone.
func md(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i, c := range r {
		switch c {
		case '\\', '*', '`', '|', '<', '[', ']':
			b.WriteRune('\\')
		case '_':
			inWord := i > 0 && i < len(r)-1 && isWordRune(r[i-1]) && isWordRune(r[i+1])
			if !inWord {
				b.WriteRune('\\')
			}
		case '#':
			if i == 0 {
				b.WriteRune('\\')
			}
		case '\n', '\r':
			// A newline would let the text after it start a block of
			// its own (a heading, a list item): a space, as text wraps.
			c = ' '
		}
		b.WriteRune(c)
	}
	return b.String()
}

func isWordRune(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }

func mdTable(w io.Writer, t tableView, level string) {
	fmt.Fprintf(w, "%s %s\n\n", level, md(t.Title))
	if len(t.Rows) == 0 {
		fmt.Fprintf(w, "%s\n\n", md(t.Missing))
		return
	}
	cells := make([]string, len(t.Head))
	for i, h := range t.Head {
		cells[i] = md(h)
	}
	fmt.Fprintf(w, "| %s |\n|", strings.Join(cells, " | "))
	for i := range t.Head {
		if i < len(t.Right) && t.Right[i] {
			io.WriteString(w, "---:|")
		} else {
			io.WriteString(w, "---|")
		}
	}
	io.WriteString(w, "\n")
	for _, row := range t.Rows {
		for i, c := range row {
			cells[i] = md(ctlchar.Line(c))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells[:len(row)], " | "))
	}
	io.WriteString(w, "\n")
	if t.Note != "" {
		fmt.Fprintf(w, "%s\n\n", md(t.Note))
	}
}

func writeMarkdown(w io.Writer, v *view) {
	fmt.Fprintf(w, "# %s\n\n", md(v.Title))
	fmt.Fprintf(w, "%s\n\n", md(v.Input))
	if nl := v.NotLesson; nl != nil {
		fmt.Fprintf(w, "**%s** %s `%s`\n\n", md(nl.Said), md(nl.Pointer), nl.Command)
	}
	mdSummary(w, v)

	io.WriteString(w, "## Results\n\n")
	for _, a := range v.About {
		fmt.Fprintf(w, "%s\n", md(a))
	}
	io.WriteString(w, "\n")
	for _, t := range v.Tables {
		mdTable(w, t, "###")
	}

	mdSaid(w, v.Said)

	io.WriteString(w, "## Exercise: both directions\n\n")
	mdTable(w, v.Exercise.Table, "###")
	if v.Exercise.Answered {
		fmt.Fprintf(w, "%s\n\n", md(v.Exercise.Sentence))
		fmt.Fprintf(w, "Rule: %s.\n\n", md(v.Exercise.Rule))
	}
	if v.Exercise.Check != "" {
		fmt.Fprintf(w, "Check against a reference: **%s**, %s.\n\n", v.Exercise.CheckVerdict, md(v.Exercise.Check))
	}

	mdDiagnostics(w, v)
	mdPlots(w, v)
}

// mdSummary writes the answer: a table of each prediction's verdict, the
// exercise and the check against a reference, with what decided each, and
// the diagnostics that broke the lesson's premise beneath it.
func mdSummary(w io.Writer, v *view) {
	io.WriteString(w, "| | verdict | what decided it |\n|---|---|---|\n")
	for _, row := range v.Summary {
		text := md(row.Text)
		for _, n := range row.Notes {
			text += "; " + md(n)
		}
		fmt.Fprintf(w, "| %s | **%s** | %s |\n", md(row.Label), row.Verdict, text)
	}
	io.WriteString(w, "\n")
	if len(v.Causes) > 0 {
		mdDiagList(w, v.Causes)
	}
}

// mdDiagList lists diagnostics, each advice after the last that carries
// it.
func mdDiagList(w io.Writer, ds []diagItem) {
	for i, d := range ds {
		fmt.Fprintf(w, "- %s `%s`: %s\n", d.Level, d.Code, md(d.Message))
		if d.After != "" {
			fmt.Fprintf(w, "\n  %s\n", md(d.After))
			if i < len(ds)-1 {
				io.WriteString(w, "\n")
			}
		}
	}
	io.WriteString(w, "\n")
}

// Markdown renders results as Markdown reports without plots, one after the
// other, for printing.
func Markdown(w io.Writer, results []*predictions.Result) error {
	var b bytes.Buffer
	for i, r := range results {
		if i > 0 {
			b.WriteString("\n---\n\n")
		}
		rep := &Report{Result: r, Options: Options{NoPlots: true}}
		writeMarkdown(&b, rep.view())
	}
	_, err := w.Write(b.Bytes())
	return err
}

// mdSaid writes what the run said of each prediction, with the numbers
// behind it.
func mdSaid(w io.Writer, said []saidView) {
	io.WriteString(w, "## What the run said\n\n")
	for _, s := range said {
		fmt.Fprintf(w, "%d. **%s: %s.**", s.ID, md(s.Topic), s.Verdict)
		for _, c := range s.Claims {
			fmt.Fprintf(w, " `%s` %s: %s", c.ID, c.Verdict, md(c.Statement))
			switch {
			case c.Verdict == string(predictions.Unavailable):
				fmt.Fprintf(w, "; unavailable because %s.", md(strings.TrimSuffix(c.Reason, ".")))
			case c.Outcome != "":
				fmt.Fprintf(w, "; %s.", md(c.Outcome))
			default:
				io.WriteString(w, ".")
			}
			for _, o := range c.Others {
				fmt.Fprintf(w, " Beside it, %s.", md(o))
			}
		}
		for _, u := range s.Unchecked {
			fmt.Fprintf(w, " Control %s.", md(u))
		}
		io.WriteString(w, "\n")
		if ev := s.Evidence(); len(ev) > 0 {
			io.WriteString(w, "\n   The numbers behind it:\n\n")
			for _, e := range ev {
				var ids []string
				for _, id := range e.IDs {
					ids = append(ids, "`"+id+"`")
				}
				fmt.Fprintf(w, "   - %s: %s\n", strings.Join(ids, ", "), md(e.Text))
			}
		}
		if recs := s.Records(); len(recs) > 0 {
			io.WriteString(w, "\n   The records they came from:\n\n")
			for _, r := range recs {
				fmt.Fprintf(w, "   - %s: `%s` %s (%s)\n", md(r.Group), r.Table, r.Where, r.Count)
			}
		}
		io.WriteString(w, "\n")
	}
}

// mdDiagnostics writes the diagnostics other than those beside the
// verdicts, or that there are none.
func mdDiagnostics(w io.Writer, v *view) {
	io.WriteString(w, "## Diagnostics\n\n")
	switch {
	case len(v.Diags) > 0:
		mdDiagList(w, v.Diags)
	case len(v.Causes) > 0:
		io.WriteString(w, "None besides those beside the verdicts.\n\n")
	default:
		io.WriteString(w, "None: the evaluation noticed nothing odd about this input.\n\n")
	}
}

// mdPlots links the plots, or says why one was not drawn.
func mdPlots(w io.Writer, v *view) {
	io.WriteString(w, "## Plots\n\n")
	if v.NoPlots {
		io.WriteString(w, "Plots are not part of this output. `nsyscheck report INPUT -o DIR` draws them beside a copy of this report.\n")
		return
	}
	for _, p := range v.Plots {
		fmt.Fprintf(w, "### %s\n\n", md(p.Title))
		if p.Skipped != "" {
			fmt.Fprintf(w, "Not drawn: %s.\n\n", md(p.Skipped))
			continue
		}
		fmt.Fprintf(w, "![%s](%s)\n\n", md(p.Title), p.PNGFile())
		fmt.Fprintf(w, "%s ([SVG](%s))\n\n", md(p.Caption), p.SVGFile())
	}
}
