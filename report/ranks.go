package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/auditjson"
	"github.com/nsyscheck/nsyscheck/fleet"
	"github.com/nsyscheck/nsyscheck/ranks"
)

// KindAuditRanks is the envelope's kind for the audits of a job's ranks.
const KindAuditRanks = audit.EnvelopeKindRanks

// RanksEnvelope is the JSON of audit --ranks: an audit per rank audited, in
// rank order, and the ranks' table (its rows hold those that could not be
// audited too, with why).
func RanksEnvelope(s *ranks.Summary, audited []ranks.Audited, version string) Envelope {
	by := map[string]*audit.Audit{}
	for _, a := range audited {
		if a.Audit != nil {
			by[a.Capture] = a.Audit
		}
	}
	inputs := []string{}
	results := []auditjson.Audit{}
	for _, r := range s.Rows {
		if au := by[r.Capture]; au != nil && r.Err == "" {
			inputs = append(inputs, au.Capture)
			results = append(results, auditJSON(au))
		}
	}
	return Envelope{SchemaVersion: SchemaVersion, Kind: KindAuditRanks, Tool: Tool{Name: "nsyscheck", Version: version},
		Inputs: inputs, Results: results, Ranks: s}
}

// WriteRanks writes the audit of a job's ranks in format: text and
// Markdown the table and the ranks that stand out, JSON the envelope with
// every rank's audit.
func WriteRanks(w io.Writer, format string, s *ranks.Summary, audited []ranks.Audited, opts WriteOptions) error {
	switch format {
	case FormatJSON:
		return WriteJSON(w, RanksEnvelope(s, audited, opts.Version))
	case FormatMarkdown:
		return RanksMarkdown(w, s)
	case FormatText:
		return capped(w, func(w io.Writer) error { return RanksText(w, s, opts.Text) })
	}
	return fmt.Errorf("unknown format %q: use text, json or markdown", format)
}

var ranksHeader = []string{"RANK", "COPIES", "PAGEABLE", "NOW ms", "PINNED ms", "CHANGE", "VS PEERS", "HOST SAVED", "NOTE"}

// ranksCells are one row's cells.
func ranksCells(r ranks.Row) []string {
	if r.Err != "" {
		return []string{r.Rank, "-", "-", "-", "-", "-", "-", "-", "not audited"}
	}
	note := "-"
	if r.Outlier {
		note = "stands out"
	}
	vs := "-"
	if r.NowMs > 0 && r.PeerNowMs > 0 {
		vs = fmt.Sprintf("%.2fx", r.NowMs/r.PeerNowMs)
	}
	now, pinned, saving := "-", "-", "-"
	if r.Region != "" {
		now, pinned, saving = fmt.Sprintf("%.4g", r.NowMs), fmt.Sprintf("%.4g", r.PinnedMs), fmt.Sprintf("%+.1f%%", -100*r.Saving)
	}
	return []string{r.Rank, fmt.Sprint(r.Copies), fmt.Sprintf("%.0f%%", 100*r.Pageable), now, pinned, saving, vs, ns(r.SavedNs), note}
}

// ranksLead says what the table holds.
func ranksLead(s *ranks.Summary) []string {
	audited, failed := 0, 0
	for _, r := range s.Rows {
		if r.Err != "" {
			failed++
		} else {
			audited++
		}
	}
	lead := fmt.Sprintf("Ranks of the job: %s audited", counted(audited, "capture", "captures"))
	if failed > 0 {
		lead += fmt.Sprintf(", %s not", counted(failed, "capture", "captures"))
	}
	if n := len(s.Unlike); n > 0 {
		lead += fmt.Sprintf("; %s not of the job's program, compared only with ranks of their own", counted(n, "rank", "ranks"))
	}
	if n := len(s.OtherRun); n > 0 {
		lead += fmt.Sprintf("; %s from another run of the job, compared only with ranks of their own run", counted(n, "rank", "ranks"))
	}
	if n := len(s.BadStart); n > 0 {
		lead += fmt.Sprintf("; %s whose capture's session start cannot be a real one, not checked for another run", counted(n, "rank", "ranks"))
	}
	out := map[string]bool{}
	for _, f := range s.Findings {
		out[f.Rank] = true
	}
	switch len(out) {
	case 0:
		lead += "; no rank stands out against its peers"
	case 1:
		lead += "; 1 rank stands out against its peers"
	default:
		lead += fmt.Sprintf("; %d ranks stand out against their peers", len(out))
	}
	region := "times of region " + s.Region + " (its median instance, else its span; the judged region that holds the most time over the ranks)"
	if s.Region == "" {
		region = "no rank has a region with copy calls to time"
	}
	return []string{lead, region + "; pageable: the share of host-device copies from pageable memory; change: pinned against now; vs peers: now over the median of the other ranks of its program"}
}

// peersValue names the value v a rank is set beside: its one peer's, or
// the median of its n peers'.
func peersValue(n int, v string) string {
	if n == 1 {
		return "its one peer's " + v
	}
	return "the median of its " + counted(n, "peer", "peers") + ", " + v
}

// ranksFindings says which ranks stand out, and why, a line each; and
// which could not be audited.
func ranksFindings(s *ranks.Summary) []string {
	var out []string
	if from := ranksFrom(s); from != "" {
		out = append(out, from)
	}
	if gpus := ranksGPUs(s); gpus != "" {
		out = append(out, gpus)
	}
	for _, f := range s.Findings {
		r := s.Rows[f.Row]
		switch f.Kind {
		case ranks.KindSlower:
			line := fmt.Sprintf("rank %s: %s takes %.4g ms, %.2fx %s (the limit is %.2fx)",
				f.Rank, s.Region, f.Got, f.Got/f.PeerMedian, peersValue(r.Peers, fmt.Sprintf("%.4g ms", f.PeerMedian)), f.Threshold)
			if f.GPU != "" {
				line += fmt.Sprintf("; it ran on %s, where its peers ran on %s: another GPU, which may be why", f.GPU, f.PeerGPU)
			}
			out = append(out, line)
		case ranks.KindPageable:
			out = append(out, fmt.Sprintf("rank %s: %.0f%% of its host-device copies are from pageable memory, against %s (the limit is %.0f points more)",
				f.Rank, 100*f.Got, peersValue(r.Peers, fmt.Sprintf("%.0f%%", 100*f.PeerMedian)), 100*f.Threshold))
		}
	}
	for _, r := range s.Rows {
		if r.Err != "" {
			out = append(out, fmt.Sprintf("rank %s: %s could not be audited: %s", r.Rank, r.Capture, r.Err))
		}
	}
	for _, u := range s.Unlike {
		out = append(out, fmt.Sprintf("rank %s: %s is not a capture of rank %s's program (%s), so its row compares other work: %s",
			u.Rank, u.Capture, u.Peer, u.PeerCapture, audit.DifferenceWords(u.Differences, "in rank "+u.Peer, "in rank "+u.Rank)))
	}
	for _, o := range s.OtherRun {
		if o.Job != "" {
			out = append(out, fmt.Sprintf("rank %s: %s was captured in another run of the job than rank %s's (%s): its job is %s, rank %s's %s (the variable its scheduler set and a digest of its value), so its row is compared only with ranks of its own run; give the captures of one run",
				o.Rank, o.Capture, o.Peer, o.PeerCapture, o.Job, o.Peer, o.PeerJob))
			continue
		}
		out = append(out, fmt.Sprintf("rank %s: %s was captured in another run of the job than rank %s's (%s): its session started %s UTC, rank %s's %s UTC, %s from the one's end to the other's start (a run's ranks start together, within %s), so its row is compared only with ranks of its own run; give the captures of one run",
			o.Rank, o.Capture, o.Peer, o.PeerCapture, utc(o.StartNs), o.Peer, utc(o.PeerStartNs), apart(o.GapNs), apart(ranks.MaxRunGapNs)))
	}
	for _, b := range s.BadStart {
		out = append(out, fmt.Sprintf("rank %s: %s records a session start no capture can have: %s; so whether it is of this run of the job or of another cannot be told, and its row is compared with its program's ranks as if of this run (the export is damaged or was edited: export it again from its report)",
			b.Rank, b.Capture, b.Fault))
	}
	var saved int64
	for _, r := range s.Rows {
		saved += r.SavedNs
	}
	if saved > 0 {
		out = append(out, fmt.Sprintf("pinning should save the copy calls %s of host time over the ranks", ns(saved)))
	}
	return out
}

// ranksGPUs names the GPUs the ranks ran on where they ran on more than
// one kind, each with its ranks, since a row's times are set beside its
// peers' whatever they ran on; "" where every rank audited names one GPU
// (or none).
func ranksGPUs(s *ranks.Summary) string {
	var gpus []string
	of := map[string][]string{}
	for _, r := range s.Rows {
		if r.Err != "" || r.GPU == "" {
			continue
		}
		if of[r.GPU] == nil {
			gpus = append(gpus, r.GPU)
		}
		of[r.GPU] = append(of[r.GPU], r.Rank)
	}
	if len(gpus) < 2 {
		return ""
	}
	parts := make([]string, len(gpus))
	for i, g := range gpus {
		word := "rank"
		if len(of[g]) > 1 {
			word = "ranks"
		}
		parts[i] = fmt.Sprintf("%s (%s %s)", g, word, strings.Join(of[g], ", "))
	}
	return fmt.Sprintf("the ranks ran on %d kinds of GPU: %s; each row's times are set beside its peers' whichever GPU they ran on", len(gpus), strings.Join(parts, ", "))
}

// ranksFrom says which capture gave which rank, where a capture's name
// holds several numbers or none (ranks.RankPlain), so that the rank read
// from it is a choice; "" where every name holds its rank alone.
func ranksFrom(s *ranks.Summary) string {
	plain := true
	for _, r := range s.Rows {
		plain = plain && ranks.RankPlain(r.Capture)
	}
	if plain {
		return ""
	}
	var each []string
	for _, r := range s.Rows {
		each = append(each, fmt.Sprintf("rank %s from %s", r.Rank, r.Capture))
	}
	return "ranks from the captures' names (" + ranks.RankRule + "): " + strings.Join(each, ", ")
}

// RanksText writes the ranks' table as text, wrapped at the width.
func RanksText(w io.Writer, s *ranks.Summary, opts TextOptions) error {
	width := opts.width()
	var b strings.Builder
	for _, l := range ranksLead(s) {
		writeWrapped(&b, l, width, "", "    ")
	}
	b.WriteByte('\n')
	rows := [][]string{ranksHeader}
	for _, r := range s.Rows {
		rows = append(rows, ranksCells(r))
	}
	writeTable(&b, rows, 1, width)
	if f := ranksFindings(s); len(f) > 0 {
		b.WriteByte('\n')
		for _, l := range f {
			writeWrapped(&b, l, width, "", "    ")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// RanksMarkdown writes the ranks' table as Markdown.
func RanksMarkdown(w io.Writer, s *ranks.Summary) error {
	var b strings.Builder
	b.WriteString("# Ranks\n\n")
	for _, l := range ranksLead(s) {
		b.WriteString(mdText(l) + "\n\n")
	}
	rows := make([][]string, len(s.Rows))
	for i, r := range s.Rows {
		rows[i] = ranksCells(r)
	}
	mdGrid(&b, ranksHeader, rows)
	if f := ranksFindings(s); len(f) > 0 {
		b.WriteString("\n")
		for _, l := range f {
			b.WriteString("- " + mdText(l) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// RanksFile is the page report writes for the audits of a job's ranks.
func RanksFile(s *ranks.Summary) ([]byte, error) {
	var b bytes.Buffer
	err := RanksMarkdown(&b, s)
	return b.Bytes(), err
}

// The files of the report of a job's ranks.
const (
	RanksMarkdownFile = "ranks.md"
	RanksHTMLFile     = "ranks.html"
	ranksPlotName     = "ranks"
)

// RanksReport is the report of a job's ranks: the table, its plot.
type RanksReport struct {
	Summary *ranks.Summary
	Plot    Plot
}

// RanksNames lists the files the ranks' report of s holds
// (RanksReport.Files), without drawing anything: the plot's only where a
// rank has a region with copy calls to time.
func RanksNames(s *ranks.Summary) []string {
	names := []string{RanksMarkdownFile, RanksHTMLFile}
	for _, row := range s.Rows {
		if rankDrawn(row) {
			return append(names, plotFiles(ranksPlotName)...)
		}
	}
	return names
}

// rankDrawn reports whether the ranks' plot draws a row: a rank read
// without error, with a region to time.
func rankDrawn(row ranks.Row) bool { return row.Err == "" && row.Region != "" }

// BuildRanks draws the ranks' plot: each rank's region time now and
// predicted with the copies pinned, beside its peers' median.
func BuildRanks(s *ranks.Summary) (*RanksReport, error) {
	r := &RanksReport{Summary: s, Plot: Plot{Name: ranksPlotName, Series: map[string]plotter.XYs{}}}
	r.Plot.Title = "Region " + s.Region + " per rank, now and with the copies pinned"
	var drawn []ranks.Row
	var now, pinned plotter.Values
	for _, row := range s.Rows {
		if !rankDrawn(row) {
			continue
		}
		drawn = append(drawn, row)
		now = append(now, row.NowMs)
		pinned = append(pinned, row.PinnedMs)
	}
	names := rankLabels(drawn)
	if len(names) == 0 {
		r.Plot.Skipped = "no rank has a region with copy calls to time"
		return r, nil
	}
	p := newPlot(r.Plot.Title, "rank", "ms")
	// Two bars a rank, 0.4 of its slot apart, each at most 0.35 of a slot
	// (the axis is about 440 points wide) so that they never overlap.
	w := vg.Points(max(1, min(18, 150/float64(len(names)))))
	for _, b := range []struct {
		name, legend string
		vs           plotter.Values
		off          float64
		col          color.Color
	}{{SeriesNow, "now", now, -0.2, colPageable}, {SeriesPredicted, "predicted with the copies pinned", pinned, 0.2, colPinned}} {
		bc, err := plotter.NewBarChart(b.vs, w)
		if err != nil {
			return nil, err
		}
		bc.Color, bc.LineStyle.Width, bc.XMin = b.col, 0, b.off
		p.Add(bc)
		p.Legend.Add(b.legend, bc)
		xys := make(plotter.XYs, len(b.vs))
		for i, v := range b.vs {
			xys[i] = plotter.XY{X: float64(i) + b.off, Y: v}
		}
		r.Plot.Series[b.name] = xys
	}
	peers := make([]float64, 0, len(now))
	for _, v := range now {
		peers = append(peers, v)
	}
	med, err := plotter.NewLine(plotter.XYs{{X: -0.6, Y: fleet.Median(peers)}, {X: float64(len(names)) - 0.4, Y: fleet.Median(peers)}})
	if err != nil {
		return nil, err
	}
	med.Color, med.Width, med.Dashes = colRated, vg.Points(1), []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(med)
	p.Legend.Add("the ranks' median now", med)
	p.Legend.Left = false
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	p.Y.Min = 0
	top := 0.0
	for _, v := range append(append(plotter.Values{}, now...), pinned...) {
		top = max(top, v)
	}
	p.Y.Max = top * 1.1
	png, svg, err := render(p)
	if err != nil {
		return nil, err
	}
	r.Plot.PNG, r.Plot.SVG = png, svg
	r.Plot.Caption = "Each pair of bars is one rank's time of the region, now and predicted with its pageable copies pinned; the dashed line is the ranks' median now. Below each rank, the share of its host-device copies from pageable memory; a rank that stands out is marked (with a star past 16 ranks) and named below the table."
	return r, nil
}

// maxLabelled is the most ranks whose axis labels say their pageable share
// and whether they stand out; past it a label is the rank, with a star for
// one that stands out.
const maxLabelled = 16

// rankLabels labels the plot's ranks, so that the plot shows why a rank
// stands out where its time does not (its pageable share).
func rankLabels(rows []ranks.Row) []string {
	names := make([]string, len(rows))
	for i, row := range rows {
		switch {
		case len(rows) > maxLabelled && row.Outlier:
			names[i] = row.Rank + "*"
		case len(rows) > maxLabelled:
			names[i] = row.Rank
		default:
			names[i] = fmt.Sprintf("%s\n%.0f%% pageable", row.Rank, 100*row.Pageable)
			if row.Outlier {
				names[i] += "\nstands out"
			}
		}
	}
	return names
}

// SeriesNow is the plotted series of the ranks' times now.
const SeriesNow = "now"

var ranksHTML = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("ranks").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>nsyscheck: the ranks of a job</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; }
td.r, th.r { text-align: right; }
tr.out td { background: #fdecea; }
figure { margin: 1.5em 0; } img { max-width: 100%; }
.caption, .note { color: #555; font-size: 0.9em; }
</style>
</head>
<body>
<main>
<h1>The ranks of a job</h1>
{{range .Lead}}<p>{{.}}</p>
{{end}}
<table>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr{{if .Out}} class="out"{{end}}>{{range $i, $c := .Cells}}<td{{if and (gt $i 0) (lt $i 8)}} class="r"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>
{{with .Findings}}<ul>{{range .}}<li>{{.}}</li>
{{end}}</ul>{{end}}
{{if .Src}}<figure><img alt="{{.Plot.Title}}" src="{{.Src}}"><p class="caption">{{.Plot.Caption}}</p></figure>{{else}}<p class="note">Plot not drawn: {{.Plot.Skipped}}.</p>{{end}}
</main>
</body>
</html>
`))
})

// HTML is the ranks' report as one page: the table, the ranks that stand
// out, the plot inline.
func (r *RanksReport) HTML() ([]byte, error) {
	type row struct {
		Cells []string
		Out   bool
	}
	page := struct {
		Lead, Head, Findings []string
		Rows                 []row
		Plot                 Plot
		Src                  template.URL
	}{Lead: ranksLead(r.Summary), Head: ranksHeader, Findings: ranksFindings(r.Summary), Plot: r.Plot}
	for _, x := range r.Summary.Rows {
		page.Rows = append(page.Rows, row{Cells: ranksCells(x), Out: x.Outlier})
	}
	if r.Plot.PNG != nil {
		page.Src = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(r.Plot.PNG))
	}
	var b bytes.Buffer
	if err := ranksHTML().Execute(&b, page); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Files returns every file of the ranks' report by name.
func (r *RanksReport) Files() (map[string][]byte, error) {
	md, err := RanksFile(r.Summary)
	if err != nil {
		return nil, err
	}
	if r.Plot.PNG != nil {
		md = append(md, []byte("\n!["+r.Plot.Title+"]("+r.Plot.PNGFile()+")\n\n"+r.Plot.Caption+"\n")...)
	}
	html, err := r.HTML()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{RanksMarkdownFile: md, RanksHTMLFile: html}
	if r.Plot.PNG != nil {
		files[r.Plot.PNGFile()] = r.Plot.PNG
		files[r.Plot.SVGFile()] = r.Plot.SVG
	}
	return files, nil
}

// WriteDir writes the files into dir as Report.WriteDir does.
func (r *RanksReport) WriteDir(dir string, overwrite bool) ([]string, error) {
	files, err := r.Files()
	if err != nil {
		return nil, err
	}
	return writeFiles(dir, files, overwrite)
}

// utc writes a wall-clock time (ns since 1970) to the second, in UTC.
func utc(epochNs int64) string {
	return time.Unix(0, epochNs).UTC().Format("2006-01-02 15:04:05")
}

// apart writes a wall-clock span to the second (23h59m46s).
func apart(n int64) string { return time.Duration(n).Round(time.Second).String() }
