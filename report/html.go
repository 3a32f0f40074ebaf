package report

import (
	"encoding/base64"
	"html/template"
	"io"
	"sync"

	"github.com/nsyscheck/nsyscheck/internal/textwrap"
)

// htmlPlot is a plot as the HTML page shows it: its PNG inline.
type htmlPlot struct {
	Plot
	Src template.URL
}

type htmlPage struct {
	*view
	Plots []htmlPlot
}

func writeHTML(w io.Writer, v *view, plots []Plot) error {
	page := htmlPage{view: v}
	for _, p := range plots {
		hp := htmlPlot{Plot: p}
		if p.PNG != nil {
			// The PNG is our own rendering; a data: URI keeps the page
			// whole without a network or the files beside it.
			hp.Src = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(p.PNG))
		}
		page.Plots = append(page.Plots, hp)
	}
	return htmlTmpl().Execute(w, page)
}

// pageCSS styles every page: a report and the index comparing several.
const pageCSS = `
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "Liberation Sans", sans-serif; color: #222; background: #fff; margin: 0; }
main { max-width: 1040px; margin: 0 auto; padding: 24px 28px 60px; }
h1 { font-size: 26px; margin: 0 0 8px; }
h2 { font-size: 20px; margin: 36px 0 10px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 16px; margin: 22px 0 8px; }
p.about { margin: 2px 0; color: #444; }
table { border-collapse: collapse; margin: 6px 0 4px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d6d6d6; padding: 4px 10px; }
th { background: #f3f4f6; text-align: left; }
td.r, th.r { text-align: right; }
p.note, p.caption, p.missing { color: #555; font-size: 13.5px; margin: 4px 0 10px; }
p.missing { font-style: italic; }
.v { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 13px; font-weight: 600; }
.v-held, .v-answered { background: #dcf5e3; color: #17622f; }
.v-died, .v-error { background: #fbe0e0; color: #8b1a1a; }
.v-unavailable, .v-none { background: #eceff2; color: #4a5058; }
table.answer { margin: 14px 0 8px; }
table.answer th { white-space: nowrap; }
table.answer td { vertical-align: top; }
table.answer .note { color: #555; font-size: 13.5px; }
p.notlesson { margin: 12px 0; padding: 8px 12px; background: #f7f8fa; border-left: 4px solid #9a9fa6; }
p.advice { margin: 4px 0 0; font-weight: 600; }
ol.said > li { margin: 0 0 16px; }
ol.said p { margin: 4px 0; }
code { font: 13px ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; background: #f3f4f6; padding: 0 3px; border-radius: 3px; }
ul.evidence { margin: 4px 0; padding-left: 20px; font-size: 13px; color: #444; }
ul.diags li { margin: 4px 0; }
.level-warning { color: #8a5a00; font-weight: 600; }
.level-error { color: #8b1a1a; font-weight: 600; }
.level-info { color: #555; font-weight: 600; }
figure { margin: 14px 0 26px; }
figure img { max-width: 100%; height: auto; border: 1px solid #e4e4e4; }
`

// pageFuncs are the templates' functions: glue keeps a number with its
// unit and a bound with its comparison on one line.
var pageFuncs = template.FuncMap{"glue": textwrap.Glue}

var htmlTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(pageFuncs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>` + pageCSS + `</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<p class="about">{{.Input}}</p>
{{with .NotLesson}}<p class="notlesson"><strong>{{.Said}}</strong> {{.Pointer}} <code>{{.Command}}</code></p>
{{end}}
<table class="answer">
<tr><th></th><th>verdict</th><th>what decided it</th></tr>
{{range .Summary}}<tr><th>{{.Label}}</th><td><span class="v v-{{.Verdict}}">{{.Verdict}}</span></td><td>{{glue .Text}}{{range .Notes}}<br><span class="note">{{glue .}}</span>{{end}}</td></tr>
{{end}}</table>
{{with .Causes}}{{template "diags" .}}{{end}}

<h2 id="results">Results</h2>
{{range .About}}<p class="about">{{.}}</p>
{{end}}
{{range .Tables}}{{template "table" .}}{{end}}

<h2 id="said">What the run said</h2>
<ol class="said">
{{range .Said}}<li value="{{.ID}}"><p><strong>{{.Topic}}</strong> <span class="v v-{{.Verdict}}">{{.Verdict}}</span></p>
{{range .Claims}}<p><code>{{.ID}}</code> <span class="v v-{{.Verdict}}">{{.Verdict}}</span> {{.Statement}}{{if eq .Verdict "unavailable"}}; unavailable because {{.Reason}}{{else if .Outcome}}; {{.Outcome}}{{end}}.{{range .Others}} Beside it, {{.}}.{{end}}</p>
{{end}}{{range .Unchecked}}<p>Control {{.}}.</p>
{{end}}{{with .Evidence}}<ul class="evidence">{{range .}}<li>{{range $i, $id := .IDs}}{{if $i}}, {{end}}<code>{{$id}}</code>{{end}}: {{.Text}}</li>{{end}}</ul>{{end}}{{with .Records}}<p class="note">The records they came from:</p>
<ul class="evidence">{{range .}}<li>{{.Group}}: <code>{{.Table}}</code> {{.Where}} ({{.Count}})</li>{{end}}</ul>{{end}}</li>
{{end}}</ol>

<h2 id="exercise">Exercise: both directions</h2>
{{template "table" .Exercise.Table}}
{{if .Exercise.Answered}}<p><span class="v v-answered">answered</span> {{.Exercise.Sentence}}</p>
<p class="note">Rule: {{.Exercise.Rule}}.</p>{{end}}
{{with .Exercise.Check}}<p>Check against a reference: <span class="v v-{{$.Exercise.CheckVerdict}}">{{$.Exercise.CheckVerdict}}</span> {{.}}.</p>{{end}}

<h2 id="diagnostics">Diagnostics</h2>
{{if .Diags}}{{template "diags" .Diags}}{{else if .Causes}}<p>None besides those beside the verdicts.</p>{{else}}<p>None: the evaluation noticed nothing odd about this input.</p>{{end}}

<h2 id="plots">Plots</h2>
{{range .Plots}}<h3>{{.Title}}</h3>
{{if .Skipped}}<p class="missing">Not drawn: {{.Skipped}}.</p>
{{else}}<figure><img src="{{.Src}}" alt="{{.Title}}"><figcaption><p class="caption">{{.Caption}}</p></figcaption></figure>
{{end}}{{end}}
</main>
</body>
</html>
{{define "diags"}}<ul class="diags">{{range .}}<li><span class="level-{{.Level}}">{{.Level}}</span> <code>{{.Code}}</code> {{.Message}}{{if .After}}<p class="advice">{{.After}}</p>{{end}}</li>
{{end}}</ul>
{{end}}{{define "table"}}<h3>{{.Title}}</h3>
{{if .Rows}}<table>
<tr>{{range $i, $h := .Head}}<th{{if index $.Right $i}} class="r"{{end}}>{{$h}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if index $.Right $i}} class="r"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>
{{with .Note}}<p class="note">{{.}}</p>{{end}}
{{else}}<p class="missing">{{.Missing}}</p>
{{end}}{{end}}`))
})
