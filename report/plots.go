package report

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/nsyscheck/nsyscheck/predictions"
)

// Plot size and PNG resolution.
const (
	plotWidth  = 7 * vg.Inch
	plotHeight = 4.6 * vg.Inch
	pngDPI     = 144
)

// Colours: one per host memory kind, kept the same in every plot.
var (
	colPageable = color.NRGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}
	colPinned   = color.NRGBA{R: 0x1f, G: 0x6f, B: 0xb4, A: 0xff}
	colResident = color.NRGBA{R: 0x5b, G: 0x6b, B: 0x7b, A: 0xff}
	colZeroCopy = color.NRGBA{R: 0x7b, G: 0x4f, B: 0xa8, A: 0xff}
	colBand     = color.NRGBA{R: 0x7b, G: 0x4f, B: 0xa8, A: 0x38}
	colRated    = color.NRGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
	colLight    = color.NRGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff}
)

// Verdict colours, the same in every plot and in the HTML pages: green
// held, red died, grey unavailable.
var (
	colHeld        = color.NRGBA{R: 0x1b, G: 0x8a, B: 0x3c, A: 0xff}
	colDied        = color.NRGBA{R: 0xc6, G: 0x1f, B: 0x1f, A: 0xff}
	colUnavailable = color.NRGBA{R: 0x9a, G: 0x9f, B: 0xa6, A: 0xff}
)

// verdictColour is the colour a verdict is drawn in.
func verdictColour(v predictions.Verdict) color.Color {
	switch v {
	case predictions.Held:
		return colHeld
	case predictions.Died:
		return colDied
	}
	return colUnavailable
}

// chart is one plot before rendering, or the reason there is none.
type chart struct {
	name    string
	title   string
	caption string
	skipped string
	plot    *plot.Plot
	// labels are the value labels drawn over the data, kept so that tests
	// can check that no two overlap.
	labels []*plotter.Labels
	series map[string]plotter.XYs // what was drawn, by series name
}

// drew records a drawn series' values.
func (ch *chart) drew(name string, xys plotter.XYs) {
	if ch.series == nil {
		ch.series = map[string]plotter.XYs{}
	}
	ch.series[name] = append(plotter.XYs(nil), xys...)
}

// addLabels adds value labels to the chart's plot.
func (ch *chart) addLabels(p *plot.Plot, ls []*plotter.Labels) {
	for _, l := range ls {
		p.Add(l)
	}
	ch.labels = append(ch.labels, ls...)
}

// gpuName is the input's GPU as a plot title names it.
func gpuName(r *predictions.Result) string {
	if r.Input.GPU != "" {
		return r.Input.GPU
	}
	return "GPU not named by the input"
}

// plotTitle is a plot's two-line title: what it shows, then the GPU and the
// verdict of the prediction it backs.
func plotTitle(r *predictions.Result, what string, prediction int) string {
	v := predictions.Unavailable
	for _, p := range r.Predictions {
		if p.ID == prediction {
			v = p.Verdict
		}
	}
	return fmt.Sprintf("%s\n%s · prediction %d %s", what, gpuName(r), prediction, v)
}

// claimLegend adds one legend entry per claim of a prediction, its swatch in
// the verdict's colour, saying the verdict and the numbers that decided it.
func claimLegend(p *plot.Plot, r *predictions.Result, prediction int) {
	for _, pr := range r.Predictions {
		if pr.ID != prediction {
			continue
		}
		for _, id := range pr.Claims {
			c := r.Claim(id)
			if c == nil {
				continue
			}
			p.Legend.Add(claimSummary(c), verdictMark{c.Verdict})
		}
	}
}

// claimSummary is a claim's verdict and deciding numbers in a few words.
func claimSummary(c *predictions.Claim) string {
	s := fmt.Sprintf("%s %s", c.ID, c.Verdict)
	if c.Measured == nil {
		if why := sourceWhys(c.Why); why != "" {
			return s + ": " + shorten(why, 70)
		}
		return s
	}
	m, cmp := *c.Measured, c.Compare
	if cmp.Relation == predictions.Within {
		lo, hi := span(cmp)
		return fmt.Sprintf("%s: measured %s, predicted %s, needs %s to %s", s, num(m), num(cmp.Bound), num(lo), num(hi))
	}
	s += fmt.Sprintf(": measured %s, needs %s %s", num(m), relationWord(cmp), num(cmp.Bound))
	if u := wordsText(c.Unit); u != "" {
		s += " (" + u + ")"
	}
	return s
}

// shorten cuts s to at most n runes at a word boundary, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n])
	if i := strings.LastIndex(cut, " "); i > n/2 {
		cut = cut[:i]
	}
	return cut + " …"
}

// verdictMark is a claim's legend thumbnail: its verdict as a sign in the
// verdict's colour, a tick for held, a cross for died, a dash for
// unavailable, inside a ring, so that it never reads as a series of data
// (which a filled square would).
type verdictMark struct{ v predictions.Verdict }

// Thumbnail draws the mark.
func (m verdictMark) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	size := min(r.Max.X-r.Min.X, r.Max.Y-r.Min.Y)
	mid := vg.Point{X: (r.Min.X + r.Max.X) / 2, Y: (r.Min.Y + r.Max.Y) / 2}
	rad := size / 2 * 0.9
	sty := draw.LineStyle{Color: verdictColour(m.v), Width: vg.Points(1.6)}
	var ring vg.Path
	ring.Move(vg.Point{X: mid.X + rad, Y: mid.Y})
	ring.Arc(mid, rad, 0, 2*math.Pi)
	ring.Close()
	c.SetLineStyle(sty)
	c.Stroke(ring)
	at := func(dx, dy float64) vg.Point {
		return vg.Point{X: mid.X + vg.Length(dx)*rad, Y: mid.Y + vg.Length(dy)*rad}
	}
	switch m.v {
	case predictions.Held:
		c.StrokeLines(sty, []vg.Point{at(-0.5, 0), at(-0.12, -0.42), at(0.52, 0.4)})
	case predictions.Died:
		c.StrokeLines(sty, []vg.Point{at(-0.42, -0.42), at(0.42, 0.42)})
		c.StrokeLines(sty, []vg.Point{at(-0.42, 0.42), at(0.42, -0.42)})
	default:
		c.StrokeLines(sty, []vg.Point{at(-0.45, 0), at(0.45, 0)})
	}
}

// swatch is a legend thumbnail: a filled square in one colour.
type swatch struct{ col color.Color }

// Thumbnail draws the swatch.
func (s swatch) Thumbnail(c *draw.Canvas) {
	c.SetColor(s.col)
	c.Fill(c.Rectangle.Path())
}

// niceTicks labels a linear axis at 1, 2, 2.5 or 5 times a power of ten,
// with at least five labelled ticks over the range.
type niceTicks struct{}

// Ticks returns the ticks between min and max.
func (niceTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) {
		return []plot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'g', 4, 64)}}
	}
	span := max - min
	step, prec := span, 0
search:
	for e := int(math.Floor(math.Log10(span))); e > -12; e-- {
		for _, m := range []float64{5, 2.5, 2, 1} {
			st := m * math.Pow10(e)
			if math.Floor(max/st+1e-9)-math.Ceil(min/st-1e-9)+1 >= 5 {
				step, prec = st, 0
				if e < 0 {
					prec = -e
				}
				if m == 2.5 && e < 1 {
					prec++
				}
				break search
			}
		}
	}
	var ticks []plot.Tick
	for i := math.Ceil(min/step - 1e-9); i*step <= max+step*1e-9; i++ {
		v := i * step
		if v == 0 {
			v = 0 // not -0
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
		if half := v + step/2; half < max {
			ticks = append(ticks, plot.Tick{Value: half})
		}
	}
	return ticks
}

// logTicks labels a log axis from 10^loExp to 10^hiExp: every decade, and
// 2 and 5 times it as well when fewer than four decades would be labelled.
func logTicks(loExp, hiExp int) []plot.Tick {
	dense := hiExp-loExp+1 < 4
	var ticks []plot.Tick
	for e := loExp; e <= hiExp; e++ {
		v := math.Pow10(e)
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		if e == hiExp {
			break
		}
		for m := 2; m < 10; m++ {
			t := plot.Tick{Value: float64(m) * v}
			if dense && (m == 2 || m == 5) {
				t.Label = strconv.FormatFloat(t.Value, 'f', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// setLogY puts the Y axis on a log scale spanning whole decades around lo
// and hi (both above 0), with room above hi. The tick labels carry the unit:
// gonum centres an axis label by data value, which on a log scale pushes it
// off the axis, so the axis has none.
func setLogY(p *plot.Plot, lo, hi float64, unit string) {
	loExp := int(math.Floor(math.Log10(lo)))
	hiExp := int(math.Ceil(math.Log10(hi)))
	if math.Pow10(hiExp) < hi*1.8 {
		hiExp++
	}
	if hiExp == loExp {
		hiExp++
	}
	p.Y.Scale = floorLog{}
	p.Y.Min, p.Y.Max = math.Pow10(loExp), math.Pow10(hiExp)
	ticks := logTicks(loExp, hiExp)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label += " " + unit
		}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Label.Text = ""
}

// floorLog is a log scale on which values at or below the axis minimum sit
// at its bottom, so that bars, which start at 0, stand on the axis.
type floorLog struct{}

// Normalize maps x to [0, 1] on a log scale from min to max.
func (floorLog) Normalize(min, max, x float64) float64 {
	x = math.Max(x, min)
	return (math.Log(x) - math.Log(min)) / (math.Log(max) - math.Log(min))
}

func sourceWords(from predictions.Source) string {
	switch from {
	case predictions.SourceTrace:
		return "the capture's trace records"
	case predictions.SourceProgram:
		return "the program's own numbers"
	}
	return string(from)
}

// newPlot returns a plot with the report's fonts and grid.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	sans := func(s *font.Font) { s.Variant = "Sans" }
	sans(&p.Title.TextStyle.Font)
	sans(&p.X.Label.TextStyle.Font)
	sans(&p.Y.Label.TextStyle.Font)
	sans(&p.X.Tick.Label.Font)
	sans(&p.Y.Tick.Label.Font)
	sans(&p.Legend.TextStyle.Font)
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(6)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(8)
	p.Legend.YOffs = -vg.Points(4)
	grid := plotter.NewGrid()
	grid.Vertical.Color = colLight
	grid.Horizontal.Color = colLight
	grid.Vertical.Width = vg.Points(0.5)
	grid.Horizontal.Width = vg.Points(0.5)
	p.Add(grid)
	return p
}

// labels puts text above each point, dx to its right; a text of several
// lines becomes one label per line, stacked, so that each label's box (and
// with it the plot's padding and the overlap test) is exact.
func labels(xys plotter.XYs, text []string, dx vg.Length, size vg.Length) ([]*plotter.Labels, error) {
	lines := 0
	split := make([][]string, len(text))
	for i, t := range text {
		split[i] = strings.Split(t, "\n")
		lines = max(lines, len(split[i]))
	}
	var out []*plotter.Labels
	for k := 0; k < lines; k++ {
		var at plotter.XYs
		var words []string
		for i, ls := range split {
			// Line k from the bottom.
			if j := len(ls) - 1 - k; j >= 0 {
				at = append(at, xys[i])
				words = append(words, ls[j])
			}
		}
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: at, Labels: words})
		if err != nil {
			return nil, err
		}
		for i := range l.TextStyle {
			l.TextStyle[i].Font.Variant = "Sans"
			l.TextStyle[i].Font.Size = size
			l.TextStyle[i].XAlign = draw.XCenter
			l.TextStyle[i].YAlign = draw.YBottom
		}
		l.Offset = vg.Point{X: dx, Y: vg.Points(3) + vg.Length(k)*size*1.25}
		out = append(out, l)
	}
	return out, nil
}

// sizeLabel names a byte count in MiB (or KiB below 1 MiB).
func sizeLabel(b int64) string {
	if b >= 1<<20 && b%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", b>>20)
	}
	if b >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", b>>10)
}

// sizeAxis makes the x axis a log scale of MiB ticked at the sizes
// measured, with a margin either side.
func sizeAxis(p *plot.Plot, sizes map[int64]bool) {
	p.X.Scale = plot.LogScale{}
	var sorted []int64
	for b := range sizes {
		sorted = append(sorted, b)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	p.X.Tick.Marker = sizeTicks(sorted)
	lo, hi := float64(sorted[0])/(1<<20), float64(sorted[len(sorted)-1])/(1<<20)
	if lo == hi {
		lo, hi = lo/2, hi*2
	}
	p.X.Min, p.X.Max = lo/1.25, hi*1.25
}

// addRatedLine draws the link's rated bandwidth across the plot, dotted,
// and says so in the caption.
func addRatedLine(p *plot.Plot, ch *chart, link Link) error {
	xys := plotter.XYs{{X: p.X.Min, Y: link.RatedGBps}, {X: p.X.Max, Y: link.RatedGBps}}
	rated, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	ch.drew("rated", xys)
	rated.Color = colRated
	rated.Width = vg.Points(1.5)
	rated.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
	p.Add(rated)
	p.Legend.Add(link.label(), rated)
	return nil
}

// ratedCaption says what the rated line is.
func ratedCaption(link Link) string {
	return fmt.Sprintf(" The dotted line is the link's rated bandwidth per direction: %s, %.1f GB/s.", link.name(), link.RatedGBps)
}

// sizeTicks labels a log axis of MiB at the sizes measured, every other
// one when there are more than eight.
func sizeTicks(sizes []int64) plot.ConstantTicks {
	step := 1
	if len(sizes) > 8 {
		step = 2
	}
	var ticks []plot.Tick
	for i, b := range sizes {
		t := plot.Tick{Value: float64(b) / (1 << 20)}
		if i%step == 0 {
			t.Label = sizeLabel(b)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// scaleYAxis scales a y axis to maxY: linear, with headroom; but a bar
// many times shorter than the tallest would be a sliver on a linear axis,
// so past 20x the axis turns logarithmic and the x label says so.
func scaleYAxis(p *plot.Plot, xys plotter.XYs, maxY, headroom float64, unit string) {
	minY := math.Inf(1)
	for _, xy := range xys {
		if xy.Y > 0 {
			minY = math.Min(minY, xy.Y)
		}
	}
	if maxY > 0 && maxY/minY > 20 {
		yLabel := p.Y.Label.Text
		setLogY(p, minY, maxY, unit)
		p.X.Label.Text += " (" + yLabel + ", log scale)"
	} else {
		p.Y.Min = 0
		p.Y.Max = maxY * headroom
		p.Y.Tick.Marker = niceTicks{}
	}
}

// drawChart draws a part's chart: its series, the band its prediction
// puts a value in, the link's rated bandwidth where it asks for it and the
// link is known, value labels, its prediction's claims in the legend, and
// its axes; its caption in words.
func drawChart(r *predictions.Result, c predictions.Chart, link Link) (chart, error) {
	ch := chart{name: c.Name, title: c.Title}
	if c.Skipped != "" {
		ch.skipped = c.Skipped
		return ch, nil
	}
	p := newPlot(plotTitle(r, c.Title, c.Prediction), wordsText(c.XLabel), wordsText(c.YLabel))
	if c.X == predictions.XSizes {
		sizes := map[int64]bool{}
		for _, b := range c.Sizes {
			sizes[b] = true
		}
		sizeAxis(p, sizes)
	}
	minY, maxY := math.Inf(1), 0.0
	var lineXYs plotter.XYs // the last series' points, for YLinearOrLog
	var labelSets []struct {
		xys  plotter.XYs
		text []string
		dx   vg.Length
	}
	for _, s := range c.Series {
		var xys plotter.XYs
		var text []string
		for _, pt := range s.Points {
			xys = append(xys, plotter.XY{X: pt.X, Y: pt.Y})
			if pt.Y > 0 {
				minY, maxY = math.Min(minY, pt.Y), math.Max(maxY, pt.Y)
			}
			lines := make([]string, len(pt.Label))
			for i, l := range pt.Label {
				lines[i] = wordsText(l)
			}
			text = append(text, strings.Join(lines, "\n"))
		}
		if err := addSeries(p, r, s, xys); err != nil {
			return ch, err
		}
		ch.drew(s.Name, xys)
		lineXYs = xys
		if len(s.Points) > 0 && len(s.Points[0].Label) > 0 {
			labelSets = append(labelSets, struct {
				xys  plotter.XYs
				text []string
				dx   vg.Length
			}{xys, text, vg.Points(s.Offset)})
		}
	}
	caption := wordsText(c.Caption)
	if b := c.Band; b != nil {
		if err := addBand(p, &ch, b); err != nil {
			return ch, err
		}
		maxY = math.Max(maxY, b.High)
	}
	if c.Rated {
		if link.RatedGBps > 0 {
			if err := addRatedLine(p, &ch, link); err != nil {
				return ch, err
			}
			maxY = math.Max(maxY, link.RatedGBps)
			caption += ratedCaption(link)
		} else {
			caption += " The PCIe link's rated bandwidth is not known for this input, so no line marks it (a run folder's run.json supplies it; so does --pcie-gbps)."
		}
	}
	for _, l := range labelSets {
		lbl, err := labels(l.xys, l.text, l.dx, vg.Points(9))
		if err != nil {
			return ch, err
		}
		ch.addLabels(p, lbl)
	}
	for _, sw := range c.Swatches {
		p.Legend.Add(wordsText(sw.Legend), swatch{colourOf(r, sw.Color, sw.Claim)})
	}
	claimLegend(p, r, c.Prediction)
	switch c.X {
	case predictions.XCategories:
		p.NominalX(c.Categories...)
		p.X.Min, p.X.Max = -0.6, float64(len(c.Categories))-0.4
	case predictions.XIndex:
		var ticks []plot.Tick
		for i := 1; i <= c.Count; i++ {
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: fmt.Sprint(i)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Min, p.X.Max = 0.5, float64(c.Count)+0.5
	}
	if hasBars(c) {
		// Bars stand on a log axis's floor: at least a factor of two below
		// the shortest, so that no bar shrinks to a sliver that reads as
		// almost nothing.
		minY /= 2
	}
	switch c.Y {
	case predictions.YLinear:
		p.Y.Min = 0
		p.Y.Max = maxY * c.Headroom
		p.Y.Tick.Marker = niceTicks{}
	case predictions.YLog:
		setLogY(p, minY, maxY, c.YUnit)
	case predictions.YLinearOrLog:
		scaleYAxis(p, lineXYs, maxY, c.Headroom, c.YUnit)
	}
	ch.plot = p
	ch.caption = caption
	return ch, nil
}

// hasBars reports whether a chart draws any series as bars.
func hasBars(c predictions.Chart) bool {
	for _, s := range c.Series {
		if s.Kind == predictions.Bars {
			return true
		}
	}
	return false
}

// colourOf is the colour a role plays; a verdict's is its claim's.
func colourOf(r *predictions.Result, c predictions.Color, claim string) color.Color {
	switch c {
	case predictions.ColorPageable:
		return colPageable
	case predictions.ColorPinned:
		return colPinned
	case predictions.ColorResident:
		return colResident
	case predictions.ColorVerdict:
		if cl := r.Claim(claim); cl != nil {
			return verdictColour(cl.Verdict)
		}
	}
	return colUnavailable
}

// addSeries draws one series: lines with their glyphs, or bars (one bar
// each where the points have colours of their own).
func addSeries(p *plot.Plot, r *predictions.Result, s predictions.Series, xys plotter.XYs) error {
	col := colourOf(r, s.Color, s.Claim)
	if s.Kind == predictions.Lines {
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		if s.Thin {
			line.Color, points.Color = col, col
			line.Width = vg.Points(1)
			points.Radius = vg.Points(4)
			points.Shape = draw.CircleGlyph{}
		} else {
			styleSeries(line, points, col, s.Alt)
		}
		p.Add(line, points)
		if s.Legend != nil {
			p.Legend.Add(wordsText(s.Legend), line, points)
		}
		return nil
	}
	w := vg.Points(s.Width)
	if len(s.Points) > 0 && s.Points[0].Color != 0 {
		for _, pt := range s.Points {
			bars, err := plotter.NewBarChart(plotter.Values{pt.Y}, w)
			if err != nil {
				return err
			}
			bars.XMin = pt.X
			bars.LineStyle.Width = 0
			bars.Color = colourOf(r, pt.Color, pt.Claim)
			p.Add(bars)
		}
		return nil
	}
	var vals plotter.Values
	for _, xy := range xys {
		vals = append(vals, xy.Y)
	}
	bars, err := plotter.NewBarChart(vals, w)
	if err != nil {
		return err
	}
	bars.Color, bars.LineStyle.Width = col, 0
	bars.Offset = vg.Points(s.Offset)
	p.Add(bars)
	if s.Legend != nil {
		p.Legend.Add(wordsText(s.Legend), bars)
	}
	return nil
}

// addBand shades where a prediction puts a value and marks the predicted
// one, dashed.
func addBand(p *plot.Plot, ch *chart, b *predictions.Band) error {
	x0, x1 := b.X-b.Width/2, b.X+b.Width/2
	band, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: b.Low}, {X: x1, Y: b.Low}, {X: x1, Y: b.High}, {X: x0, Y: b.High}})
	if err != nil {
		return err
	}
	band.Color = colBand
	band.LineStyle.Width = 0
	line, err := plotter.NewLine(plotter.XYs{{X: x0, Y: b.Mid}, {X: x1, Y: b.Mid}})
	if err != nil {
		return err
	}
	line.Color = colZeroCopy
	line.Width = vg.Points(1.5)
	line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(band, line)
	ch.drew(b.Name, plotter.XYs{{X: b.X, Y: b.Low}, {X: b.X, Y: b.Mid}, {X: b.X, Y: b.High}})
	p.Legend.Add(wordsText(b.Legend), band)
	p.Legend.Add(wordsText(b.MidLegend), line)
	return nil
}

// pngFast encodes the plots' PNGs at the fastest compression: about half
// the time of the default for files about 5% larger (encoding was half of
// drawing a report).
var pngFast = png.Encoder{CompressionLevel: png.BestSpeed}

// legendGap is the space between a plot's axes and its legend beneath.
const legendGap = 6

// render draws a chart as PNG and SVG, its legend beneath the axes so that
// it never covers the data; the image grows by the legend's height.
func render(p *plot.Plot) (png, svg []byte, err error) {
	defer func() {
		if e := recover(); e != nil {
			err = fmt.Errorf("drawing plot %q: %v", p.Title.Text, e)
		}
	}()
	height := plotHeight + legendHeight(p)
	img := vgimg.NewWith(vgimg.UseWH(plotWidth, height), vgimg.UseDPI(pngDPI))
	drawWithLegend(p, draw.New(img))
	var pb bytes.Buffer
	if err := pngFast.Encode(&pb, img.Image()); err != nil {
		return nil, nil, err
	}
	sc := vgsvg.New(plotWidth, height)
	drawWithLegend(p, draw.New(sc))
	var sb bytes.Buffer
	if _, err := sc.WriteTo(&sb); err != nil {
		return nil, nil, err
	}
	return pb.Bytes(), sb.Bytes(), nil
}

// legendHeight is the height of p's legend drawn beneath it, gap included.
func legendHeight(p *plot.Plot) vg.Length {
	r := p.Legend.Rectangle(draw.Canvas{})
	if h := r.Size().Y; h > 0 {
		return h + 2*legendGap
	}
	return 0
}

// drawWithLegend draws p's axes and data in the top of c and its legend in
// a strip beneath them.
func drawWithLegend(p *plot.Plot, c draw.Canvas) {
	leg := p.Legend
	h := legendHeight(p)
	p.Legend = plot.NewLegend()
	defer func() { p.Legend = leg }()
	p.Draw(draw.Crop(c, 0, 0, h, 0))
	if h == 0 {
		return
	}
	strip := draw.Crop(c, 0, 0, 0, -(c.Size().Y - h))
	leg.Top, leg.Left = true, true
	leg.XOffs, leg.YOffs = vg.Points(12), -legendGap
	leg.Draw(strip)
}

// styleSeries draws one bandwidth series in col: a solid line with circles,
// or, for the second kind a chart tells apart (alt), dashed with triangles.
func styleSeries(line *plotter.Line, points *plotter.Scatter, col color.Color, alt bool) {
	line.Color, points.Color = col, col
	line.Width = vg.Points(2)
	points.Radius = vg.Points(3.5)
	points.Shape = draw.CircleGlyph{}
	if alt {
		line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		points.Shape = draw.TriangleGlyph{}
	}
}
