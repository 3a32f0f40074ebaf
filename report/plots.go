package report

import (
	"bytes"
	"fmt"
	"image/color"
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
	"github.com/nsyscheck/nsyscheck/vocab"
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
			p.Legend.Add(claimSummary(c), swatch{verdictColour(c.Verdict)})
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

// bandwidthChart draws part 1 and 1b: GB/s against transfer size.
func bandwidthChart(r *predictions.Result, link Link) (chart, error) {
	ch := chart{name: "bandwidth", title: "Copy bandwidth by transfer size"}
	from := predictions.PreferredOf(predictions.CopyRows.Of(r), func(c predictions.CopyRow) predictions.Source { return c.From })
	if from == "" {
		ch.skipped = "the input has no part 1 copy rows (blocking cudaMemcpy by size), so there is no bandwidth to plot"
		return ch, nil
	}
	type key struct {
		dir vocab.Direction
		src vocab.MemKind
	}
	series := map[key]plotter.XYs{}
	sizes := map[int64]bool{}
	maxY := 0.0
	for _, c := range predictions.CopyRows.Of(r) {
		if c.From != from || c.Bytes <= 0 || c.GBps <= 0 {
			continue
		}
		k := key{c.Direction, c.Source}
		series[k] = append(series[k], plotter.XY{X: float64(c.Bytes) / (1 << 20), Y: c.GBps})
		sizes[c.Bytes] = true
		maxY = math.Max(maxY, c.GBps)
	}
	if len(sizes) == 0 {
		ch.skipped = "the input's part 1 rows carry no positive sizes and bandwidths"
		return ch, nil
	}
	p := newPlot(plotTitle(r, ch.title, 1), "transfer size (log scale)", "GB/s (1e9 bytes/s)")
	sizeAxis(p, sizes)
	var drawn []string
	for _, dir := range []vocab.Direction{vocab.H2D, vocab.D2H} {
		for _, src := range []vocab.MemKind{vocab.MemPageable, vocab.MemPinned} {
			xys := series[key{dir, src}]
			if len(xys) == 0 {
				continue
			}
			sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
			name, err := addBandwidthLine(p, xys, dir, src)
			if err != nil {
				return ch, err
			}
			ch.drew(name, xys)
			drawn = append(drawn, name)
		}
	}
	ch.caption = fmt.Sprintf("Mean bandwidth of the timed blocking copies at each size (%s): %s. Solid lines are host-to-device, dashed device-to-host.",
		sourceWords(from), strings.Join(drawn, ", "))
	if link.RatedGBps > 0 {
		if err := addRatedLine(p, &ch, link); err != nil {
			return ch, err
		}
		maxY = math.Max(maxY, link.RatedGBps)
	} else {
		ch.caption += " The PCIe link's rated bandwidth is not known for this input, so no line marks it (a run folder's run.json supplies it; so does --pcie-gbps)."
	}
	claimLegend(p, r, 1)
	p.Y.Min = 0
	p.Y.Max = maxY * 1.1
	p.Y.Tick.Marker = niceTicks{}
	ch.plot = p
	return ch, nil
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

// addBandwidthLine draws one direction and memory kind: its colour by the
// kind, solid with circles host to device, dashed with triangles device to
// host. It returns the legend's name for it.
func addBandwidthLine(p *plot.Plot, xys plotter.XYs, dir vocab.Direction, src vocab.MemKind) (string, error) {
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return "", err
	}
	col := colPageable
	if src == vocab.MemPinned {
		col = colPinned
	}
	styleSeries(line, points, col, dir == vocab.D2H)
	p.Add(line, points)
	name := strings.ToUpper(string(dir)) + " " + string(src)
	p.Legend.Add(name, line, points)
	return name, nil
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
	ch.caption += fmt.Sprintf(" The dotted line is the link's rated bandwidth per direction: %s, %.1f GB/s.", link.name(), link.RatedGBps)
	return nil
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

// asyncChart draws part 2: call and completion time per source, on a log
// scale so that a call that returns at once still shows.
func asyncChart(r *predictions.Result) (chart, error) {
	ch := chart{name: "async", title: "cudaMemcpyAsync: time in the call vs time to completion"}
	from := predictions.PreferredOf(predictions.AsyncRows.Of(r), func(a predictions.AsyncRow) predictions.Source { return a.From })
	var rows []predictions.AsyncRow
	for _, src := range []vocab.MemKind{vocab.MemPageable, vocab.MemPinned} {
		for _, a := range predictions.AsyncRows.Of(r) {
			if a.From == from && a.Source == src {
				rows = append(rows, a)
			}
		}
	}
	if len(rows) == 0 {
		ch.skipped = "the input has no part 2 rows (timed cudaMemcpyAsync calls per source)"
		return ch, nil
	}
	var names []string
	var call, done plotter.Values
	var callXY, doneXY plotter.XYs
	var callText, doneText []string
	minY, maxY := math.Inf(1), 0.0
	for i, a := range rows {
		names = append(names, string(a.Source))
		call = append(call, a.CallMs)
		done = append(done, a.CompletionMs)
		callXY = append(callXY, plotter.XY{X: float64(i), Y: a.CallMs})
		doneXY = append(doneXY, plotter.XY{X: float64(i), Y: a.CompletionMs})
		callText = append(callText, fmt.Sprintf("%s ms\n%s", msText(a.CallMs), pct(a.Share)))
		doneText = append(doneText, msText(a.CompletionMs)+" ms")
		for _, v := range []float64{a.CallMs, a.CompletionMs} {
			if v > 0 {
				minY, maxY = math.Min(minY, v), math.Max(maxY, v)
			}
		}
	}
	if maxY == 0 {
		ch.skipped = "the part 2 rows carry no positive times"
		return ch, nil
	}
	what := "64 MiB"
	if rows[0].Bytes > 0 {
		what = sizeLabel(rows[0].Bytes)
	}
	p := newPlot(plotTitle(r, ch.title, 2), "host memory the "+what+" copy reads", "ms per call, mean (log scale)")
	w := vg.Points(60)
	gap := vg.Points(4)
	callBars, err := plotter.NewBarChart(call, w)
	if err != nil {
		return ch, err
	}
	doneBars, err := plotter.NewBarChart(done, w)
	if err != nil {
		return ch, err
	}
	callBars.Color, callBars.LineStyle.Width = colPageable, 0
	doneBars.Color, doneBars.LineStyle.Width = colPinned, 0
	callBars.Offset, doneBars.Offset = -w/2-gap, w/2+gap
	callLabels, err := labels(callXY, callText, -w/2-gap, vg.Points(9))
	if err != nil {
		return ch, err
	}
	doneLabels, err := labels(doneXY, doneText, w/2+gap, vg.Points(9))
	if err != nil {
		return ch, err
	}
	p.Add(callBars, doneBars)
	ch.drew("call", callXY)
	ch.drew("completion", doneXY)
	ch.addLabels(p, callLabels)
	ch.addLabels(p, doneLabels)
	p.Legend.Add("call: the thread is held (label: its share of completion)", callBars)
	p.Legend.Add("completion: call start to stream synchronized", doneBars)
	claimLegend(p, r, 2)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	setLogY(p, minY, maxY, "ms")
	ch.plot = p
	ch.caption = fmt.Sprintf("Time in the call and time to completion per source (%s), on a log scale so that a call that returns at once still shows; the label under each call time is its share of completion.", sourceWords(from))
	return ch, nil
}

// kernelChart draws part 3 with prediction 3's band for the zero-copy time;
// the zero-copy bar takes the verdict's colour.
func kernelChart(r *predictions.Result) (chart, error) {
	ch := chart{name: "kernels", title: "scaleCopy kernel: device-resident vs zero-copy"}
	from := predictions.PreferredOf(predictions.KernelRows.Of(r), func(k predictions.KernelRow) predictions.Source { return k.From })
	var res, zero *predictions.KernelRow
	kernels := predictions.KernelRows.Of(r)
	for i := range kernels {
		k := &kernels[i]
		if k.From != from {
			continue
		}
		switch k.Variant {
		case vocab.DeviceResident:
			res = k
		case vocab.ZeroCopy:
			zero = k
		}
	}
	if res == nil && zero == nil {
		ch.skipped = "the input has no part 3 rows (scaleCopy launches, device-resident and zero-copy)"
		return ch, nil
	}
	p := newPlot(plotTitle(r, ch.title, 3), "where the kernel's data lives", "ms per launch, mean")
	var zeroColour color.Color = colUnavailable
	if c := r.Claim("3.factor"); c != nil {
		zeroColour = verdictColour(c.Verdict)
	}
	w := vg.Points(80)
	var names []string
	var xys plotter.XYs
	var text []string
	maxY := 0.0
	for _, k := range []*predictions.KernelRow{res, zero} {
		if k == nil {
			continue
		}
		bars, err := plotter.NewBarChart(plotter.Values{k.MsPerLaunch}, w)
		if err != nil {
			return ch, err
		}
		bars.XMin = float64(len(names))
		bars.LineStyle.Width = 0
		bars.Color = colResident
		if k == zero {
			bars.Color = zeroColour
		}
		p.Add(bars)
		xys = append(xys, plotter.XY{X: float64(len(names)), Y: k.MsPerLaunch})
		names = append(names, string(k.Variant))
		t := msText(k.MsPerLaunch) + " ms"
		if k.GBps > 0 {
			t += fmt.Sprintf("\n%.1f GB/s", k.GBps)
		}
		text = append(text, t)
		maxY = math.Max(maxY, k.MsPerLaunch)
	}
	ch.caption = fmt.Sprintf("Mean time per launch (%s). The zero-copy bar is green when prediction 3 held, red when it died.", sourceWords(from))
	predicted := predictedLoss(r, from)
	if res != nil && zero != nil && predicted > 0 {
		hi, err := addPredictedBand(p, &ch, res.MsPerLaunch, zero.MsPerLaunch, predicted)
		if err != nil {
			return ch, err
		}
		maxY = math.Max(maxY, hi)
	} else {
		ch.caption += " Prediction 3's band is not drawn: the input gives no predicted loss for these rows (it needs both variants and part 1's pinned 64 MiB host-to-device copy)."
	}
	ch.drew("ms per launch", xys)
	lbl, err := labels(xys, text, 0, vg.Points(9))
	if err != nil {
		return ch, err
	}
	ch.addLabels(p, lbl)
	p.Legend.Add("device-resident, ms per launch", swatch{colResident})
	claimLegend(p, r, 3)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	kernelYAxis(p, xys, maxY)
	ch.plot = p
	return ch, nil
}

// addPredictedBand shades where prediction 3 puts the zero-copy launch
// (the resident time times the predicted loss, from half to twice it),
// marks the predicted time, and says so in the caption. It returns the
// band's top.
func addPredictedBand(p *plot.Plot, ch *chart, resMs, zeroMs, predicted float64) (float64, error) {
	lo := resMs * predicted / predictions.LossFactor
	mid := resMs * predicted
	hi := resMs * predicted * predictions.LossFactor
	band, err := plotter.NewPolygon(plotter.XYs{{X: 0.62, Y: lo}, {X: 1.38, Y: lo}, {X: 1.38, Y: hi}, {X: 0.62, Y: hi}})
	if err != nil {
		return 0, err
	}
	band.Color = colBand
	band.LineStyle.Width = 0
	line, err := plotter.NewLine(plotter.XYs{{X: 0.62, Y: mid}, {X: 1.38, Y: mid}})
	if err != nil {
		return 0, err
	}
	line.Color = colZeroCopy
	line.Width = vg.Points(1.5)
	line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(band, line)
	ch.drew("predicted zero-copy band", plotter.XYs{{X: 1, Y: lo}, {X: 1, Y: mid}, {X: 1, Y: hi}})
	p.Legend.Add(fmt.Sprintf("where prediction 3 puts zero-copy: %s to %s ms", msText(lo), msText(hi)), band)
	p.Legend.Add(fmt.Sprintf("predicted zero-copy time %s ms (resident x %.1f)", msText(mid), predicted), line)
	ch.caption += fmt.Sprintf(" The shaded band is where prediction 3 puts the zero-copy launch: the resident time %s ms times the predicted loss %.2fx (device bandwidth over part 1's pinned host-to-device bandwidth), from half of that to twice it: %s to %s ms. The zero-copy bar measured %s ms.",
		msText(resMs), predicted, msText(lo), msText(hi), msText(zeroMs))
	return hi, nil
}

// kernelYAxis scales the kernel chart's y axis to maxY. A resident launch
// many times shorter than the zero-copy one would be a sliver on a linear
// axis: past 20x the axis turns logarithmic.
func kernelYAxis(p *plot.Plot, xys plotter.XYs, maxY float64) {
	minY := math.Inf(1)
	for _, xy := range xys {
		if xy.Y > 0 {
			minY = math.Min(minY, xy.Y)
		}
	}
	if maxY > 0 && maxY/minY > 20 {
		setLogY(p, minY, maxY, "ms")
		p.X.Label.Text += " (ms per launch, mean, log scale)"
	} else {
		p.Y.Min = 0
		p.Y.Max = maxY * 1.2
		p.Y.Tick.Marker = niceTicks{}
	}
}

// predictedLoss returns prediction 3's predicted loss for the given source,
// or 0 when the input does not give one.
func predictedLoss(r *predictions.Result, from predictions.Source) float64 {
	c := r.Claim("3.factor")
	if c == nil {
		return 0
	}
	for _, sv := range c.Sources {
		if sv.Source == from && sv.Measured != nil && sv.Bound > 0 {
			return sv.Bound
		}
	}
	if c.From == from && c.Measured != nil && c.Compare.Bound > 0 {
		return c.Compare.Bound
	}
	return 0
}

// callsChart draws prediction 4's per-call durations of the two groups.
func callsChart(r *predictions.Result) (chart, error) {
	ch := chart{name: "calls", title: "Time in each timed cudaMemcpyAsync call (log scale)"}
	var froms []predictions.Source
	allCalls := predictions.CallRows.Of(r)
	for _, a := range allCalls {
		if len(a.PageableMs)+len(a.PinnedMs) > 0 {
			froms = append(froms, a.From)
		}
	}
	from := predictions.Preferred(froms)
	var calls *predictions.CallDurations
	for i := range allCalls {
		if allCalls[i].From == from {
			calls = &allCalls[i]
		}
	}
	if calls == nil {
		ch.skipped = "the input gives no per-call durations of the timed cudaMemcpyAsync calls (they come from a capture's API trace; totals alone cannot be drawn per call)"
		return ch, nil
	}
	p := newPlot(plotTitle(r, ch.title, 4), "timed call, in call order", "ms in the call")
	minY, maxY, n := math.Inf(1), 0.0, 0
	var dropped int
	var sums []string
	for _, g := range []struct {
		name string
		ms   []float64
		col  color.Color
	}{{"pageable", calls.PageableMs, colPageable}, {"pinned", calls.PinnedMs, colPinned}} {
		var xys plotter.XYs
		total := 0.0
		for i, v := range g.ms {
			total += v
			if v <= 0 {
				dropped++
				continue
			}
			xys = append(xys, plotter.XY{X: float64(i + 1), Y: v})
			minY, maxY = math.Min(minY, v), math.Max(maxY, v)
		}
		n = max(n, len(g.ms))
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return ch, err
		}
		line.Color, points.Color = g.col, g.col
		line.Width = vg.Points(1)
		points.Radius = vg.Points(4)
		points.Shape = draw.CircleGlyph{}
		p.Add(line, points)
		ch.drew(g.name, xys)
		p.Legend.Add(fmt.Sprintf("%s: %d calls, %s ms in all", g.name, len(g.ms), msText(total)), line, points)
		sums = append(sums, fmt.Sprintf("%s %s ms over %d calls", g.name, msText(total), len(g.ms)))
	}
	if maxY == 0 {
		ch.skipped = "the per-call durations of the timed cudaMemcpyAsync calls are all zero or missing"
		return ch, nil
	}
	var ticks []plot.Tick
	for i := 1; i <= n; i++ {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: fmt.Sprint(i)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = 0.5, float64(n)+0.5
	setLogY(p, minY, maxY, "ms")
	claimLegend(p, r, 4)
	ch.caption = fmt.Sprintf("How long each timed call held the thread (%s): %s. The scale is logarithmic because the two groups differ by orders of magnitude.",
		sourceWords(from), strings.Join(sums, ", "))
	if dropped > 0 {
		ch.caption += fmt.Sprintf(" %d call(s) with no positive duration cannot sit on a log scale and are left out.", dropped)
	}
	ch.plot = p
	return ch, nil
}

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
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&pb); err != nil {
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
