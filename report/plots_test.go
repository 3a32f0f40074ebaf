package report

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/nsyscheck/nsyscheck/predictions"
)

// plotInputs are every shipped input whose plots a reader sees.
var plotInputs = []string{
	"../testdata/captures/h200-pinned",
	"../testdata/captures/h200-pinned-nonvtx",
	"../testdata/captures/h200-run",
	"../testdata/reference/h200-ref",
	"../testdata/measurements/lesson-t4.json",
}

// TestPlotsReadable checks what a reader relies on in every plot of every
// shipped input: the GPU and the prediction's verdict in the title, at
// least four labelled ticks on each numeric axis, a legend entry per claim
// in its verdict's colour, and value labels that neither overlap each other
// nor run off the top of the plot.
func TestPlotsReadable(t *testing.T) {
	for _, path := range plotInputs {
		r := evaluate(t, path)
		for _, mk := range chartMakers(r, Link{RatedGBps: 63.015, Gen: 5, Width: 16}) {
			ch, err := mk()
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if ch.plot == nil {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s", path, ch.name), func(t *testing.T) {
				checkChart(t, r, ch)
			})
		}
	}
}

func checkChart(t *testing.T, r *predictions.Result, ch chart) {
	p := ch.plot
	id := map[string]int{"bandwidth": 1, "async": 2, "kernels": 3, "calls": 4}[ch.name]
	var verdict predictions.Verdict
	for _, pr := range r.Predictions {
		if pr.ID == id {
			verdict = pr.Verdict
		}
	}
	want := fmt.Sprintf("%s · prediction %d %s", r.Input.GPU, id, verdict)
	if r.Input.GPU == "" || !strings.Contains(p.Title.Text, want) {
		t.Errorf("title %q lacks %q", p.Title.Text, want)
	}
	axes := map[string]*plot.Axis{"y": &p.Y}
	if ch.name == "bandwidth" || ch.name == "calls" {
		axes["x"] = &p.X
	}
	for name, ax := range axes {
		n := 0
		for _, tk := range ax.Tick.Marker.Ticks(ax.Min, ax.Max) {
			if tk.Label != "" && tk.Value >= ax.Min && tk.Value <= ax.Max {
				n++
			}
		}
		if n < 4 {
			t.Errorf("%s axis has %d labelled ticks, want at least 4", name, n)
		}
	}
	// The data canvas as render draws it.
	img := vgimg.New(plotWidth, plotHeight+legendHeight(p))
	c := draw.Crop(draw.New(img), 0, 0, legendHeight(p), 0)
	leg := p.Legend
	p.Legend = plot.NewLegend()
	dc := p.DataCanvas(c)
	p.Legend = leg
	var boxes []vg.Rectangle
	for _, l := range ch.labels {
		for _, b := range l.GlyphBoxes(p) {
			at := vg.Point{X: dc.X(b.X), Y: dc.Y(b.Y)}
			boxes = append(boxes, b.Rectangle.Add(at))
		}
	}
	if len(boxes) == 0 && (ch.name == "async" || ch.name == "kernels") {
		t.Errorf("no value labels on the bars")
	}
	for i, a := range boxes {
		if a.Max.Y > c.Max.Y {
			t.Errorf("label %d runs off the top: %v above %v", i, a.Max.Y, c.Max.Y)
		}
		for j := i + 1; j < len(boxes); j++ {
			b := boxes[j]
			if a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y {
				t.Errorf("labels %d %v and %d %v overlap", i, a, j, b)
			}
		}
	}
	checkLegendFits(t, p)
	checkTitleFits(t, p)
	// Every claim of the prediction is in the legend, in its verdict's colour.
	var pred predictions.Prediction
	for _, pr := range r.Predictions {
		if pr.ID == id {
			pred = pr
		}
	}
	for _, cid := range pred.Claims {
		c := r.Claim(cid)
		col, filled, ok := legendColour(p, claimSummary(c))
		if !ok {
			t.Errorf("legend lacks claim %s", cid)
			continue
		}
		if col != verdictColour(c.Verdict) {
			t.Errorf("claim %s (%s) drawn in %v, want %v", cid, c.Verdict, col, verdictColour(c.Verdict))
		}
		if filled {
			t.Errorf("claim %s's legend entry is a filled square, which reads as data", cid)
		}
	}
}

// legendColour finds the legend entry with the given text, by drawing the
// legend into a recorder, and returns the colour of the last fill or
// stroke before it, its thumbnail, and whether that was a fill (a filled
// square, which reads as a series of data).
func legendColour(p *plot.Plot, text string) (col color.Color, filled, ok bool) {
	rec := &recorder.Canvas{}
	p.Legend.Draw(draw.Canvas{Canvas: rec, Rectangle: vg.Rectangle{Max: vg.Point{X: 500, Y: 500}}})
	var current, drawn color.Color
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.SetColor:
			current = a.Color
		case *recorder.Fill:
			drawn, filled = current, true
		case *recorder.Stroke:
			drawn, filled = current, false
		case *recorder.FillString:
			if a.String == text {
				return drawn, filled, true
			}
		}
	}
	return nil, false, false
}

// checkLegendFits checks that the legend beneath the plot is no wider than
// the image, so that no entry is cut at the right edge.
func checkLegendFits(t *testing.T, p *plot.Plot) {
	t.Helper()
	c := draw.New(vgimg.New(plotWidth, plotHeight))
	w := p.Legend.Rectangle(c).Size().X + vg.Points(12)
	if w > plotWidth {
		t.Errorf("legend is %.0f pt wide, the plot %.0f pt: entries run off the edge", w.Points(), plotWidth.Points())
	}
}

// TestComparePlotReadable checks the index's comparison plot of every
// shipped input together: a title naming prediction 1's verdict per
// capture, at least four labelled ticks on each axis, and a legend that fits.
func TestComparePlotReadable(t *testing.T) {
	var entries []Entry
	for _, path := range plotInputs {
		// Folders named as the report command names them.
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		entries = append(entries, Entry{Result: evaluate(t, path), Dir: name})
	}
	ch, err := compareChart(entries)
	if err != nil || ch.plot == nil {
		t.Fatalf("no comparison plot: %v %s", err, ch.skipped)
	}
	p := ch.plot
	for _, e := range entries {
		v := predictions.Unavailable
		for _, q := range e.Result.Predictions {
			if q.ID == 1 {
				v = q.Verdict
			}
		}
		if want := fmt.Sprintf("%s %s", e.Dir, v); !strings.Contains(p.Title.Text, want) {
			t.Errorf("title %q lacks %q", p.Title.Text, want)
		}
	}
	for name, ax := range map[string]*plot.Axis{"x": &p.X, "y": &p.Y} {
		n := 0
		for _, tk := range ax.Tick.Marker.Ticks(ax.Min, ax.Max) {
			if tk.Label != "" {
				n++
			}
		}
		if n < 4 {
			t.Errorf("%s axis has %d labelled ticks", name, n)
		}
	}
	checkLegendFits(t, p)
	checkTitleFits(t, p)
}

// checkTitleFits checks that every line of the title fits the image.
func checkTitleFits(t *testing.T, p *plot.Plot) {
	t.Helper()
	for _, line := range strings.Split(p.Title.Text, "\n") {
		if w := p.Title.TextStyle.Width(line); w > plotWidth {
			t.Errorf("title line %q is %.0f pt wide, the plot %.0f pt", line, w.Points(), plotWidth.Points())
		}
	}
}
