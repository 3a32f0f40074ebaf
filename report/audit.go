package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"path/filepath"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/nsyscheck/nsyscheck/audit"
)

// The files of an audit's report.
const (
	AuditMarkdownFile = "audit.md"
	AuditHTMLFile     = "audit.html"
	auditPlotName     = "hosttime"
)

// AuditReport is an audit (and, given a capture after the fix, its check)
// rendered for a person: Markdown, one HTML page, and a plot of the host
// time each kind of copy held before and after.
type AuditReport struct {
	Before, After *audit.Audit
	Check         *audit.Check
	Plot          Plot
}

// BuildAudit renders an audit; after and check may be nil.
func BuildAudit(before, after *audit.Audit, check *audit.Check) (*AuditReport, error) {
	r := &AuditReport{Before: before, After: after, Check: check}
	pairs := auditPairs(before, after, check)
	r.Plot = Plot{Name: auditPlotName, Title: "Host time held by copy calls"}
	if len(pairs) == 0 {
		r.Plot.Skipped = "the capture has no copies whose calls held the host"
		return r, nil
	}
	title := "Host time held by copy calls, by kind of copy"
	if after != nil {
		title = "Host time held by copy calls, before and after"
	}
	r.Plot.Title = title
	p := newPlot(title, "", "host time (ms)")
	labels := make([]string, len(pairs))
	var bv, av plotter.Values
	for i, pr := range pairs {
		labels[i] = pr.Label
		bv = append(bv, float64(pr.BeforeNs)/1e6)
		av = append(av, float64(pr.AfterNs)/1e6)
	}
	w := vg.Points(28)
	bb, err := plotter.NewBarChart(bv, w)
	if err != nil {
		return nil, err
	}
	bb.Color, bb.LineStyle.Width = colPageable, 0
	p.Add(bb)
	p.Legend.Add("before: "+baseName(before.Capture), bb)
	if after != nil {
		ab, err := plotter.NewBarChart(av, w)
		if err != nil {
			return nil, err
		}
		ab.Color, ab.LineStyle.Width = colPinned, 0
		bb.Offset, ab.Offset = -w/2, w/2
		p.Add(ab)
		p.Legend.Add("after: "+baseName(after.Capture), ab)
	}
	p.Legend.Left = false
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.6, float64(len(pairs))-0.4
	p.X.Tick.Label.Font.Size = vg.Points(8)
	png, svg, err := render(p)
	if err != nil {
		return nil, err
	}
	r.Plot.PNG, r.Plot.SVG = png, svg
	r.Plot.Caption = "Bars are the summed duration of the copy calls of each kind (direction, host memory, API kind): the time they held the calling thread."
	if check != nil {
		r.Plot.Caption += fmt.Sprintf(" The check %s: host-to-device copy calls held the host %.1f ms before and %.1f ms after (predicted %.1f ms, bound %.1f ms).",
			check.Verdict, float64(check.HtoDBeforeNs)/1e6, float64(check.HtoDAfterNs)/1e6,
			float64(check.PredictedAfterNs)/1e6, float64(check.PredictedAfterHighNs)/1e6)
	}
	return r, nil
}

// auditPairs are the bars: the check's pairs, or one capture's totals.
func auditPairs(before, after *audit.Audit, check *audit.Check) []audit.Pair {
	if check != nil {
		return check.Pairs
	}
	var out []audit.Pair
	for _, t := range before.Totals {
		if t.HostNs > 0 {
			out = append(out, audit.Pair{Label: fmt.Sprintf("%s %s %s", t.Direction, t.HostMemory, t.APIKind), BeforeNs: t.HostNs})
		}
	}
	return out
}

// shortName is a capture's file name, e.g. train-pinned.sqlite.
func baseName(path string) string { return filepath.Base(path) }

// Markdown is the audit as Markdown, with the plot linked beside it.
func (r *AuditReport) Markdown() ([]byte, error) {
	var b bytes.Buffer
	if err := AuditMarkdown(&b, r.Before, r.After, r.Check); err != nil {
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

var auditHTML = template.Must(template.New("audit").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>nsyscheck audit</title>
<style>
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "Liberation Sans", sans-serif; color: #222; margin: 0; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 28px 60px; }
pre { font: 12.5px ui-monospace, "DejaVu Sans Mono", monospace; background: #f6f7f9; padding: 12px; overflow-x: auto; }
img { max-width: 100%; }
p.caption { color: #555; font-size: 13.5px; }
</style>
</head>
<body><main>
<h1>nsyscheck audit</h1>
{{if .Src}}<img alt="{{.Title}}" src="{{.Src}}">
<p class="caption">{{.Caption}}</p>{{else}}<p class="caption">Plot not drawn: {{.Skipped}}.</p>{{end}}
<pre>{{.Text}}</pre>
</main></body>
</html>
`))

// HTML is the audit as one page: the plot inline and the Markdown text.
func (r *AuditReport) HTML() ([]byte, error) {
	md, err := r.Markdown()
	if err != nil {
		return nil, err
	}
	page := struct {
		Plot
		Src  template.URL
		Text string
	}{Plot: r.Plot, Text: string(md)}
	if r.Plot.PNG != nil {
		page.Src = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(r.Plot.PNG))
	}
	var b bytes.Buffer
	if err := auditHTML.Execute(&b, page); err != nil {
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
