package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"image/color"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/nsyscheck/nsyscheck/audit"
)

// The files of an audit's report.
const (
	AuditMarkdownFile = "audit.md"
	AuditHTMLFile     = "audit.html"
	auditPlotName     = "regions"
)

// AuditFiles are the names of the files an audit's report writes
// (AuditReport.Files): the plot's only where it is drawn.
func AuditFiles() []string {
	return append([]string{AuditMarkdownFile, AuditHTMLFile}, plotFiles(auditPlotName)...)
}

// AuditNames lists the files the report of out holds (AuditReport.Files),
// without drawing anything: the plot's only where a region is judged.
func AuditNames(out *audit.Output) []string {
	if len(regionBarsOf(out).names) == 0 {
		return []string{AuditMarkdownFile, AuditHTMLFile}
	}
	return AuditFiles()
}

// The series of the region plot, by name in Plot.Series: each judged
// region's time predicted with its copies pinned, and (with a check) its
// time after, as shares of its time before; x is the region's index.
const (
	SeriesPredicted = "predicted"
	SeriesAfter     = "after"
)

// AuditReport is an audit (and, given a capture after the fix, its check)
// rendered for a person: Markdown, one HTML page with the same tables,
// and a plot of each judged region's time pinned (and after) against its
// time before.
type AuditReport struct {
	Out  *audit.Output
	Plot Plot
}

// BuildAudit renders an audit and its check, if any.
func BuildAudit(out *audit.Output) (*AuditReport, error) {
	r := &AuditReport{Out: out, Plot: Plot{Name: auditPlotName, Series: map[string]plotter.XYs{}}}
	bars := regionBarsOf(out)
	if len(bars.names) == 0 {
		r.Plot.Title = "Region time"
		r.Plot.Skipped = "no region to judge: the capture holds no host-device copy call"
		return r, nil
	}
	r.Plot.Title = "Region time with the copies pinned, as a share of now"
	if out.Check != nil {
		r.Plot.Title = fmt.Sprintf("Region time predicted and after, as a share of before: %s", out.Check.Verdict)
	}
	p, err := bars.draw(r.Plot.Title, out.Check != nil, r.Plot.Series)
	if err != nil {
		return nil, err
	}
	png, svg, err := render(p)
	if err != nil {
		return nil, err
	}
	r.Plot.PNG, r.Plot.SVG = png, svg
	r.Plot.Caption = "Each bar is a region's time (its median instance, or its span where most instances ran behind the host) over its time before, so 1 is no change; the whisker is the prediction's bound."
	if out.Check != nil {
		r.Plot.Caption += " A region holds when its bar after lies within the whisker."
	}
	if len(bars.unpredX) > 0 {
		r.Plot.Caption += " A region the what-if did not predict has no bar predicted."
	}
	return r, nil
}

// regionBars are the judged regions' bars, as shares of each region's
// time before: predicted with the copies pinned, with the bound as a
// whisker, where the region has a prediction (at predX, the region's
// index; a region not predicted has no bar, a note in its place), and
// after (with a check).
type regionBars struct {
	names               []string
	predX               []float64
	pred, after         plotter.Values
	whisk               errorBars
	predText, afterText []string
	// unpredX are the places of the regions not predicted.
	unpredX []float64
}

func regionBarsOf(out *audit.Output) regionBars {
	checks := map[string]*audit.RegionCheck{}
	if out.Check != nil {
		for i := range out.Check.Regions {
			checks[out.Check.Regions[i].Name] = &out.Check.Regions[i]
		}
	}
	var b regionBars
	for i, g := range out.Before.Judged() {
		b.names = append(b.names, g.Name)
		mid, lo, hi := g.Predicted()
		before := g.Time()
		if before <= 0 {
			before = 1
		}
		if c := checks[g.Name]; c != nil {
			lo, hi = c.BoundLowMs, c.BoundHighMs
			b.after = append(b.after, c.AfterMs()/before)
			b.afterText = append(b.afterText, auditMs(c.AfterMs())+" ms\n"+string(c.Verdict))
		}
		if g.NotPredicted != nil {
			b.unpredX = append(b.unpredX, float64(i))
			continue
		}
		b.predX = append(b.predX, float64(i))
		b.pred = append(b.pred, mid/before)
		b.predText = append(b.predText, auditMs(mid)+" ms")
		b.whisk = append(b.whisk, errorBar{x: float64(i), y: mid / before, lo: (mid - lo) / before, hi: (hi - mid) / before})
	}
	return b
}

// draw plots the bars, the after ones beside the predicted when after,
// and records each series as drawn (x the bar's place, the region's index
// less or more a bar's offset; y its height) in series.
func (b regionBars) draw(title string, after bool, series map[string]plotter.XYs) (*plot.Plot, error) {
	p := newPlot(title, "", "time / time before")
	w := vg.Points(26)
	// add draws one bar at each place (a region's index) less or more off.
	add := func(name string, xs []float64, vs plotter.Values, off float64, col color.Color, legend string) error {
		xys := make(plotter.XYs, len(vs))
		for i, v := range vs {
			bc, err := plotter.NewBarChart(plotter.Values{v}, w)
			if err != nil {
				return err
			}
			bc.Color, bc.LineStyle.Width, bc.XMin = col, 0, xs[i]+off
			p.Add(bc)
			if i == 0 {
				p.Legend.Add(legend, bc)
			}
			xys[i] = plotter.XY{X: xs[i] + off, Y: v}
		}
		series[name] = xys
		return nil
	}
	off := 0.0
	if after {
		off = barOffset
	}
	if err := add(SeriesPredicted, b.predX, b.pred, -off, colPinned, "predicted with the copies pinned (whisker: its bound)"); err != nil {
		return nil, err
	}
	// Each value stands above its bar, a predicted one above its whisker;
	// a region not predicted has the words in its bar's place.
	var texts [][]*plotter.Labels
	if after {
		every := make([]float64, len(b.after))
		for i := range every {
			every[i] = float64(i)
		}
		if err := add(SeriesAfter, every, b.after, off, colResident, "after the fix"); err != nil {
			return nil, err
		}
		ls, err := labels(series[SeriesAfter], b.afterText, 0, vg.Points(8))
		if err != nil {
			return nil, err
		}
		texts = append(texts, ls)
	}
	whisk := append(errorBars(nil), b.whisk...)
	at := make(plotter.XYs, len(whisk))
	for i := range whisk {
		whisk[i].x -= off
		at[i] = plotter.XY{X: whisk[i].x, Y: whisk[i].y + whisk[i].hi}
	}
	words := append([]string(nil), b.predText...)
	for _, x := range b.unpredX {
		at = append(at, plotter.XY{X: x - off, Y: 0})
		words = append(words, "not\npredicted")
	}
	if len(whisk) > 0 {
		eb, err := plotter.NewYErrorBars(whisk)
		if err != nil {
			return nil, err
		}
		eb.LineStyle.Width = vg.Points(1.2)
		p.Add(eb)
	}
	if len(at) > 0 {
		ls, err := labels(at, words, 0, vg.Points(8))
		if err != nil {
			return nil, err
		}
		texts = append(texts, ls)
	}
	for _, l := range texts {
		for _, x := range l {
			p.Add(x)
		}
	}
	// 1: the region's time before, no change.
	same, err := plotter.NewLine(plotter.XYs{{X: -0.6, Y: 1}, {X: float64(len(b.names)) - 0.4, Y: 1}})
	if err != nil {
		return nil, err
	}
	same.Color, same.Width, same.Dashes = colRated, vg.Points(1), []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(same)
	p.Legend.Add("the time before (1: no change)", same)
	p.Legend.Left = false
	p.NominalX(b.names...)
	p.X.Min, p.X.Max = -0.6, float64(len(b.names))-0.4
	p.Y.Min = 0
	top := 1.0
	for _, e := range whisk {
		top = max(top, e.y+e.hi)
	}
	for _, a := range b.after {
		top = max(top, a)
	}
	p.Y.Max = top * 1.2
	return p, nil
}

// barOffset is how far from its region's place each of two bars stands.
const barOffset = 0.2

// errorBar is one whisker: at (x, y), lo below and hi above.
type errorBar struct{ x, y, lo, hi float64 }

// errorBars are whiskers as gonum's YErrorBars reads them.
type errorBars []errorBar

// Len, XY and YError implement plotter.XYer and plotter.YErrorer.
func (e errorBars) Len() int                        { return len(e) }
func (e errorBars) XY(i int) (float64, float64)     { return e[i].x, e[i].y }
func (e errorBars) YError(i int) (float64, float64) { return e[i].lo, e[i].hi }

// Markdown is the audit as Markdown, with the plot linked beside it.
func (r *AuditReport) Markdown() ([]byte, error) {
	var b bytes.Buffer
	if err := AuditMarkdown(&b, r.Out); err != nil {
		return nil, err
	}
	fmt.Fprintf(&b, "\n## %s\n\n", r.Plot.Title)
	if r.Plot.PNG == nil {
		fmt.Fprintf(&b, "*Not drawn: %s.*\n", r.Plot.Skipped)
	} else {
		fmt.Fprintf(&b, "![%s](%s)\n\n%s\n", r.Plot.Title, r.Plot.PNGFile(), r.Plot.Caption)
	}
	return b.Bytes(), nil
}

var auditHTML = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("audit").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.V.Title}}</title>
<style>` + pageCSS + `
.v-pass { background: #dcf5e3; color: #17622f; }
.v-fail { background: #fbe0e0; color: #8b1a1a; }
ul.notes li { margin: 3px 0; }
</style>
</head>
<body>
<main>
<h1>{{.V.Title}} <span class="v v-{{.V.Verdict}}">{{.V.Verdict}}</span></h1>
<p class="about"><strong>{{.V.Answer}}</strong></p>
{{range .V.About}}<p class="about">{{.}}</p>
{{end}}
{{define "table"}}<h3>{{.Title}}</h3>
{{if and (not .Rows) .Missing}}<p class="missing">{{.Missing}}</p>
{{else}}<table>
<tr>{{range $i, $h := .Head}}<th{{if index $.Right $i}} class="r"{{end}}>{{$h}}</th>{{end}}</tr>
{{range $r, $row := .Rows}}<tr>{{range $i, $c := $row}}<td{{if index $.Right $i}} class="r"{{end}}>{{with $.Verdict $r $i}}<span class="v v-{{.}}">{{$c}}</span>{{else}}{{$c}}{{end}}</td>{{end}}</tr>
{{end}}</table>
{{end}}{{with .Note}}<p class="note">{{.}}</p>{{end}}
{{end}}
<h2>Regions</h2>
{{template "table" .V.Regions}}
<ul class="notes">{{range .V.Notes}}<li>{{.}}</li>
{{end}}</ul>
{{with .V.Limits}}<ul class="diags">{{range .}}<li><span class="level-{{.Level}}">{{.Level}} {{.Code}}</span>: {{.Said}}</li>{{end}}</ul>{{end}}
{{if .Src}}<figure><img alt="{{.Plot.Title}}" src="{{.Src}}"><p class="caption">{{.Plot.Caption}}</p></figure>{{else}}<p class="missing">Plot not drawn: {{.Plot.Skipped}}.</p>{{end}}
{{template "table" .V.Shares}}
<h2>What to change ({{.V.Advice.Framework}})</h2>
{{with .V.Advice.None}}<p>{{.}}</p>{{end}}
{{range .V.Advice.Classes}}<ul>{{range .Classes}}<li><code>{{.}}</code></li>{{end}}</ul>
<ul class="fix">{{range .Fix}}<li>{{.}}</li>{{end}}</ul>
{{end}}
{{with .V.Advice.Sites}}{{template "table" .}}{{end}}
{{with .V.Advice.Line}}<p class="note">{{.}}</p>{{end}}
{{range .V.Audits}}<h2>{{.Title}}</h2>
{{range .About}}<p class="about">{{.}}</p>
{{end}}
{{template "table" .Totals}}
{{template "table" .Classes}}
{{with .Offenders}}<h3>Top offenders (pageable or unknown host memory)</h3><ol>{{range .}}<li>{{.}}</li>{{end}}</ol>{{end}}
<h3>Findings</h3>
<ul>{{range .Findings}}<li><strong>{{.Head}}</strong><br><span class="note">rule: {{.Rule}}</span>{{with .Evidence}}<ul class="evidence">{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}</li>
{{end}}</ul>
{{with .Prediction}}<h3>Prediction of the copy calls' host time</h3><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{with .Replay}}<h3>Replay</h3><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{with .Rule}}<h3>NVIDIA's rule</h3><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{with .Notes}}<ul class="diags">{{range .}}<li><span class="level-{{.Level}}">{{.Level}} {{.Code}}</span>: {{.Message}}</li>{{end}}</ul>{{end}}
{{end}}
</main>
</body>
</html>
`))
})

// HTML is the audit as one page: the same view as the text and Markdown,
// in tables, with the plot inline.
func (r *AuditReport) HTML() ([]byte, error) {
	page := struct {
		V    *auditView
		Plot Plot
		Src  template.URL
	}{V: buildAuditView(r.Out, false), Plot: r.Plot}
	if r.Plot.PNG != nil {
		page.Src = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(r.Plot.PNG))
	}
	var b bytes.Buffer
	if err := auditHTML().Execute(&b, page); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Files returns every file of the audit's report by name.
func (r *AuditReport) Files() (map[string][]byte, error) {
	md, err := r.Markdown()
	if err != nil {
		return nil, err
	}
	html, err := r.HTML()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{AuditMarkdownFile: md, AuditHTMLFile: html}
	if r.Plot.PNG != nil {
		files[r.Plot.PNGFile()] = r.Plot.PNG
		files[r.Plot.SVGFile()] = r.Plot.SVG
	}
	return files, nil
}

// WriteDir writes the files into dir as Report.WriteDir does.
func (r *AuditReport) WriteDir(dir string, overwrite bool) ([]string, error) {
	files, err := r.Files()
	if err != nil {
		return nil, err
	}
	return writeFiles(dir, files, overwrite)
}
