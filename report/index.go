package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"github.com/nsyscheck/nsyscheck/internal/ctlchar"
	"html/template"
	"image/color"
	"io"
	"math"
	"path"
	"sort"
	"strings"
	"sync"

	"gonum.org/v1/plot/plotter"

	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Index file names: the page comparing several captures side by side, and
// its comparison plot.
const (
	IndexHTMLFile     = "index.html"
	IndexMarkdownFile = "index.md"
	comparePlotName   = "compare"
)

// TopFiles are the names of the files report writes into its output folder
// beside the captures' folders (the index, its comparison plot, the fleet
// page): no capture's folder may take one of them.
func TopFiles() []string {
	return []string{IndexHTMLFile, IndexMarkdownFile, comparePlotName + ".png", comparePlotName + ".svg", FleetMarkdownFile}
}

// Entry is one capture on an index page: its result and the folder, relative
// to the index, that holds its own report.
type Entry struct {
	Result *predictions.Result
	Dir    string
}

// Index compares several captures side by side: every claim's verdict and
// measured value per capture, links to each capture's report, and a plot of
// their host-to-device bandwidth on one scale.
type Index struct {
	Entries []Entry
	Plot    Plot
}

// BuildIndex draws the comparison plot for the entries.
func BuildIndex(entries []Entry) (*Index, error) {
	ix := &Index{Entries: entries}
	ch, err := compareChart(entries)
	if err != nil {
		return nil, fmt.Errorf("comparison plot: %w", err)
	}
	ix.Plot = Plot{Name: ch.name, Title: ch.title, Caption: ch.caption, Skipped: ch.skipped}
	if ch.plot != nil {
		if ix.Plot.PNG, ix.Plot.SVG, err = render(ch.plot); err != nil {
			return nil, fmt.Errorf("comparison plot: %w", err)
		}
	}
	return ix, nil
}

// Files returns the index's files by name: index.html, index.md and the
// comparison plot's PNG and SVG when it was drawn.
func (ix *Index) Files() (map[string][]byte, error) {
	v := ix.view()
	var h bytes.Buffer
	if err := indexTmpl().Execute(&h, v); err != nil {
		return nil, err
	}
	var m bytes.Buffer
	writeIndexMarkdown(&m, v)
	files := map[string][]byte{IndexHTMLFile: h.Bytes(), IndexMarkdownFile: m.Bytes()}
	if ix.Plot.PNG != nil {
		files[ix.Plot.PNGFile()] = ix.Plot.PNG
		files[ix.Plot.SVGFile()] = ix.Plot.SVG
	}
	return files, nil
}

// indexView is what both index renderers print.
type indexView struct {
	Title   string
	Columns []indexColumn
	Rows    []indexRow
	Plot    htmlPlot
}

type indexColumn struct {
	Name, GPU, Input, Report, MarkdownReport string
}

// indexRow is one claim, prediction or the exercise across the captures.
type indexRow struct {
	ID, What string
	Strong   bool // a prediction's row
	Cells    []indexCell
}

type indexCell struct {
	Verdict, Value string
	// Lines, where set, are Value's parts, each on a line of its own in
	// HTML; Advice is said after them.
	Lines  []string
	Advice string
}

func (ix *Index) view() *indexView {
	v := &indexView{Title: fmt.Sprintf("Pinned memory: %d captures side by side", len(ix.Entries))}
	for _, e := range ix.Entries {
		r := e.Result
		v.Columns = append(v.Columns, indexColumn{
			Name: ctlchar.Line(path.Base(e.Dir)), GPU: gpuName(r), Input: ctlchar.Line(r.Input.Path),
			Report: path.Join(e.Dir, HTMLFile), MarkdownReport: path.Join(e.Dir, MarkdownFile),
		})
	}
	// What broke a capture's premise, beside the verdicts it explains.
	if row, ok := causeRow(ix.Entries); ok {
		v.Rows = append(v.Rows, row)
	}
	// Rows in the order of the first result's predictions and claims.
	if len(ix.Entries) > 0 {
		first := ix.Entries[0].Result
		for _, p := range first.Predictions {
			row := indexRow{ID: fmt.Sprintf("prediction %d", p.ID), What: topicOf(p.ID), Strong: true}
			for _, e := range ix.Entries {
				cell := indexCell{Verdict: string(predictions.Unavailable)}
				for _, q := range e.Result.Predictions {
					if q.ID == p.ID {
						cell.Verdict = string(q.Verdict)
						// A control the input cannot check is named beside the verdict.
						var us []string
						for _, u := range q.Unchecked {
							us = append(us, uncheckedWords(u))
						}
						cell.Value = strings.Join(us, "; ")
					}
				}
				row.Cells = append(row.Cells, cell)
			}
			v.Rows = append(v.Rows, row)
			for _, id := range p.Claims {
				c := first.Claim(id)
				row := indexRow{ID: id, What: wordsText(c.Statement)}
				for _, e := range ix.Entries {
					cell := claimCell(e.Result.Claim(id))
					if e.Result.NotTheLesson() != nil {
						// Not the lesson's program: the row above says so.
						cell.Value = ""
					}
					row.Cells = append(row.Cells, cell)
				}
				v.Rows = append(v.Rows, row)
			}
		}
		row := indexRow{ID: "exercise", What: "Where pinning buys more, host-to-device or device-to-host (pageable/pinned at 64 MiB)", Strong: true}
		for _, e := range ix.Entries {
			ex := e.Result.Exercise
			cell := indexCell{Verdict: string(ex.Verdict)}
			if ex.Verdict == vocab.Answered && ex.H2DRatio != nil && ex.D2HRatio != nil {
				cell.Value = fmt.Sprintf("%s (H2D %s, D2H %s)", ex.Answer, ratioText(*ex.H2DRatio), ratioText(*ex.D2HRatio))
			} else {
				cell.Value = sourceWhys(ex.Why)
			}
			row.Cells = append(row.Cells, cell)
		}
		v.Rows = append(v.Rows, row)
		if row, ok := referenceRow(ix.Entries); ok {
			v.Rows = append(v.Rows, row)
		}
	}
	v.Plot = htmlPlot{Plot: ix.Plot}
	if ix.Plot.PNG != nil {
		v.Plot.Src = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(ix.Plot.PNG))
	}
	return v
}

// causeRow is, per capture, what broke the lesson's premise (its error
// diagnostics, the advice once) or that it is not of the lesson's program;
// ok is false where no capture has either.
func causeRow(entries []Entry) (indexRow, bool) {
	row := indexRow{ID: "what went wrong", What: "What broke the lesson's premise in this capture, behind the verdicts below", Strong: true}
	any := false
	for _, e := range entries {
		r := e.Result
		cell := indexCell{Verdict: "none"}
		if why := r.NotTheLesson(); why != nil {
			s, p, c := notLessonWords(r, why)
			cell = indexCell{Verdict: string(predictions.Unavailable), Lines: []string{sentence(s), capital(p) + " " + c}}
		}
		causes, _ := splitCauses(diagViews(r.Diagnostics))
		var advice []string
		for _, d := range diagItems(causes, map[string]bool{}) {
			cell.Verdict = "error"
			cell.Lines = append(cell.Lines, string(d.Code)+": "+d.Message)
			if d.After != "" {
				advice = append(advice, d.After)
			}
		}
		cell.Advice = strings.Join(advice, " ")
		cell.Value = strings.Join(append(append([]string(nil), cell.Lines...), advice...), "; ")
		any = any || len(cell.Lines) > 0
		row.Cells = append(row.Cells, cell)
	}
	return row, any
}

// referenceRow is each capture's check against a reference; ok is false
// where none was checked.
func referenceRow(entries []Entry) (indexRow, bool) {
	row := indexRow{ID: "reference", What: fmt.Sprintf("The exercise's check: h2d pageable/pinned at %s within %s of a reference's, no pinned row slower than its pageable one",
		sizeName(predictions.ExerciseBytes), pctPlain(predictions.ReferenceTolerance)), Strong: true}
	any := false
	for _, e := range entries {
		rc := e.Result.Reference
		if rc == nil {
			row.Cells = append(row.Cells, indexCell{Verdict: "none", Value: "no reference given"})
			continue
		}
		any = true
		row.Cells = append(row.Cells, indexCell{Verdict: string(rc.Verdict), Value: referenceWords(rc)})
	}
	return row, any
}

// claimCell is a claim's verdict and the number that decided it, or why it
// could not be decided.
func claimCell(c *predictions.Claim) indexCell {
	if c == nil {
		return indexCell{Verdict: string(predictions.Unavailable), Value: "the claim is not evaluated for this input"}
	}
	cell := indexCell{Verdict: string(c.Verdict)}
	switch {
	case c.Measured == nil:
		cell.Value = sourceWhys(c.Why)
	case c.Verdict == predictions.Died:
		// A failed claim reads as one, never as the inequality it broke.
		cell.Value = failedText(c)
		if c.Compare.Relation == predictions.Within {
			cell.Value += ", predicted " + num(c.Compare.Bound)
		}
	case c.Compare.Relation == predictions.Within:
		lo, hi := span(c.Compare)
		cell.Value = fmt.Sprintf("%s, predicted %s (%s to %s)", num(*c.Measured), num(c.Compare.Bound), num(lo), num(hi))
	default:
		cell.Value = fmt.Sprintf("%s %s %s", num(*c.Measured), relationWord(c.Compare), num(c.Compare.Bound))
	}
	return cell
}

func writeIndexMarkdown(w io.Writer, v *indexView) {
	fmt.Fprintf(w, "# %s\n\n", md(v.Title))
	for _, c := range v.Columns {
		fmt.Fprintf(w, "- **%s**: %s, from %s ([report](%s))\n", md(c.Name), md(c.GPU), md(c.Input), c.MarkdownReport)
	}
	io.WriteString(w, "\n| claim |")
	for _, c := range v.Columns {
		fmt.Fprintf(w, " %s |", md(c.Name))
	}
	io.WriteString(w, "\n|---|")
	for range v.Columns {
		io.WriteString(w, "---|")
	}
	io.WriteString(w, "\n")
	for _, r := range v.Rows {
		id := "`" + r.ID + "`"
		if r.Strong {
			id = "**" + md(r.ID) + "**"
		}
		fmt.Fprintf(w, "| %s |", id)
		for _, c := range r.Cells {
			if c.Value != "" {
				fmt.Fprintf(w, " **%s** %s |", c.Verdict, md(c.Value))
			} else {
				fmt.Fprintf(w, " **%s** |", c.Verdict)
			}
		}
		io.WriteString(w, "\n")
	}
	fmt.Fprintf(w, "\n## %s\n\n", md(v.Plot.Title))
	if v.Plot.Skipped != "" {
		fmt.Fprintf(w, "Not drawn: %s.\n", md(v.Plot.Skipped))
		return
	}
	fmt.Fprintf(w, "![%s](%s)\n\n%s ([SVG](%s))\n", md(v.Plot.Title), v.Plot.PNGFile(), md(v.Plot.Caption), v.Plot.SVGFile())
}

// Capture colours on the comparison plot, in input order.
var captureColours = []color.Color{
	color.NRGBA{R: 0x1f, G: 0x6f, B: 0xb4, A: 0xff},
	color.NRGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff},
	color.NRGBA{R: 0x6a, G: 0x3d, B: 0x9a, A: 0xff},
	color.NRGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff},
	color.NRGBA{R: 0xe7, G: 0x29, B: 0x8a, A: 0xff},
	color.NRGBA{R: 0x66, G: 0x66, B: 0x66, A: 0xff},
}

// compareChart draws every capture's host-to-device bandwidth by size,
// pinned solid and pageable dashed, one colour per capture, on a log scale
// so that a slow link and a fast one both read.
func compareChart(entries []Entry) (chart, error) {
	ch := chart{name: comparePlotName, title: "Host-to-device copy bandwidth by transfer size, per capture"}
	p := newPlot("", "transfer size (log scale)", "")
	sizes := map[int64]bool{}
	minY, maxY := math.Inf(1), 0.0
	var verdicts, drawn []string
	for i, e := range entries {
		r := e.Result
		col := captureColours[i%len(captureColours)]
		name := path.Base(e.Dir)
		for _, src := range []vocab.MemKind{vocab.MemPinned, vocab.MemPageable} {
			var xys plotter.XYs
			for _, c := range compareRows(r, src) {
				xys = append(xys, plotter.XY{X: float64(c.Bytes) / (1 << 20), Y: c.GBps})
				sizes[c.Bytes] = true
				minY, maxY = math.Min(minY, c.GBps), math.Max(maxY, c.GBps)
			}
			if len(xys) == 0 {
				continue
			}
			sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return ch, err
			}
			styleSeries(line, points, col, src == vocab.MemPageable)
			p.Add(line, points)
			p.Legend.Add(fmt.Sprintf("%s (%s) %s", name, gpuName(r), src), line, points)
			drawn = append(drawn, name)
		}
		v := predictions.Unavailable
		var claims []string
		for _, q := range r.Predictions {
			if q.ID == 1 {
				v = q.Verdict
				for _, id := range q.Claims {
					if c := r.Claim(id); c != nil {
						claims = append(claims, fmt.Sprintf("%s %s", id, c.Verdict))
					}
				}
			}
		}
		verdicts = append(verdicts, fmt.Sprintf("%s %s", name, v))
		p.Legend.Add(fmt.Sprintf("%s: prediction 1 %s (%s)", name, v, strings.Join(claims, ", ")), verdictMark{v})
	}
	if len(sizes) == 0 {
		ch.skipped = "none of the inputs has part 1 host-to-device copy rows (blocking cudaMemcpy by size)"
		return ch, nil
	}
	p.Title.Text = ch.title + "\n" + strings.Join(titleLines("prediction 1: ", verdicts, 70), "\n")
	sizeAxis(p, sizes)
	setLogY(p, minY, maxY, "GB/s")
	ch.plot = p
	ch.caption = "Mean bandwidth of the timed blocking host-to-device copies at each size, one colour per capture: pinned solid with circles, pageable dashed with triangles. " +
		"The scale is logarithmic so that captures on very different links read side by side; the gap between a capture's two lines is its pageable/pinned ratio, which prediction 1 is about."
	return ch, nil
}

// compareRows are the copy rows of r the comparison plot draws for host
// memory of kind src: timed host-to-device copies by size, from the source
// the rows prefer.
func compareRows(r *predictions.Result, src vocab.MemKind) []predictions.CopyRow {
	rows := predictions.CopyRows.Of(r)
	from := predictions.PreferredOf(rows, func(c predictions.CopyRow) predictions.Source { return c.From })
	var out []predictions.CopyRow
	for _, c := range rows {
		if c.From == from && c.Direction == vocab.H2D && c.Source == src && c.Bytes > 0 && c.GBps > 0 {
			out = append(out, c)
		}
	}
	return out
}

// IndexNames lists the files the index of entries holds (Index.Files),
// without drawing anything: the comparison plot's only where an entry has
// rows for it.
func IndexNames(entries []Entry) []string {
	names := []string{IndexHTMLFile, IndexMarkdownFile}
	for _, e := range entries {
		for _, src := range []vocab.MemKind{vocab.MemPinned, vocab.MemPageable} {
			if len(compareRows(e.Result, src)) > 0 {
				return append(names, plotFiles(comparePlotName)...)
			}
		}
	}
	return names
}

// titleLines joins items with ", " after prefix into lines of at most width
// characters (an item longer than that stands alone on its line).
func titleLines(prefix string, items []string, width int) []string {
	var lines []string
	line := prefix
	for i, it := range items {
		sep := ""
		if i < len(items)-1 {
			sep = ","
		}
		switch {
		case line == prefix:
			line += it + sep
		case len(line)+1+len(it)+len(sep) <= width:
			line += " " + it + sep
		default:
			lines = append(lines, line)
			line = it + sep
		}
	}
	return append(lines, line)
}

var indexTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("index").Funcs(pageFuncs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>` + pageCSS + `
main { max-width: none; }
div.wide { overflow-x: auto; }
td.cell { vertical-align: top; font-size: 13.5px; min-width: 8em; }
td.cell .v { margin-right: 4px; }
tr.pred th, tr.pred td { background: #f7f8fa; }
td.cell div { margin: 2px 0; }
td.cell div.advice { font-weight: 600; }
th.what { font-weight: normal; font-size: 13.5px; color: #444; min-width: 12em; max-width: 20em; }
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<ul>{{range .Columns}}<li><a href="{{.Report}}"><strong>{{.Name}}</strong></a>: {{.GPU}}, from <code>{{.Input}}</code></li>
{{end}}</ul>

<h2>Verdicts side by side</h2>
<div class="wide"><table>
<tr><th>claim</th><th class="what">what it says</th>{{range .Columns}}<th><a href="{{.Report}}">{{.Name}}</a><br><span class="gpu">{{.GPU}}</span></th>{{end}}</tr>
{{range .Rows}}<tr{{if .Strong}} class="pred"{{end}}><th>{{if .Strong}}{{.ID}}{{else}}<code>{{.ID}}</code>{{end}}</th><th class="what">{{.What}}</th>{{range .Cells}}<td class="cell"><span class="v v-{{.Verdict}}">{{.Verdict}}</span>{{if .Lines}}{{range .Lines}}<div>{{glue .}}</div>{{end}}{{with .Advice}}<div class="advice">{{.}}</div>{{end}}{{else}}{{glue .Value}}{{end}}</td>{{end}}</tr>
{{end}}</table></div>

<h2>{{.Plot.Title}}</h2>
{{if .Plot.Skipped}}<p class="missing">Not drawn: {{.Plot.Skipped}}.</p>
{{else}}<figure><img src="{{.Plot.Src}}" alt="{{.Plot.Title}}"><figcaption><p class="caption">{{.Plot.Caption}}</p></figcaption></figure>
{{end}}
</main>
</body>
</html>
`))
})
