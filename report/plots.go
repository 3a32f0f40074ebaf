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
	plotHeight = 4.2 * vg.Inch
	pngDPI     = 144
)

// Colours: one per host memory kind, kept the same in every plot.
var (
	colPageable = color.NRGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}
	colPinned   = color.NRGBA{R: 0x1f, G: 0x6f, B: 0xb4, A: 0xff}
	colResident = color.NRGBA{R: 0x2c, G: 0x8c, B: 0x4a, A: 0xff}
	colZeroCopy = color.NRGBA{R: 0x7b, G: 0x4f, B: 0xa8, A: 0xff}
	colBand     = color.NRGBA{R: 0x7b, G: 0x4f, B: 0xa8, A: 0x38}
	colRated    = color.NRGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
	colLight    = color.NRGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff}
)

// chart is one plot before rendering, or the reason there is none.
type chart struct {
	name    string
	title   string
	caption string
	skipped string
	plot    *plot.Plot
	series  map[string]plotter.XYs // what was drawn, by series name
}

// drew records a drawn series' values.
func (ch *chart) drew(name string, xys plotter.XYs) {
	if ch.series == nil {
		ch.series = map[string]plotter.XYs{}
	}
	ch.series[name] = append(plotter.XYs(nil), xys...)
}

// preferred returns the source whose rows a plot uses: the trace's where the
// input has any, else the program's, else "".
func preferred(froms []string) string {
	has := map[string]bool{}
	for _, f := range froms {
		has[f] = true
	}
	switch {
	case has[predictions.SourceTrace]:
		return predictions.SourceTrace
	case has[predictions.SourceProgram]:
		return predictions.SourceProgram
	case len(froms) > 0:
		return froms[0]
	}
	return ""
}

// preferredOf is preferred over the sources of rows, as from reads them.
func preferredOf[T any](rows []T, from func(T) string) string {
	var froms []string
	for _, row := range rows {
		froms = append(froms, from(row))
	}
	return preferred(froms)
}

func sourceWords(from string) string {
	switch from {
	case predictions.SourceTrace:
		return "the capture's trace records"
	case predictions.SourceProgram:
		return "the program's own numbers"
	}
	return from
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

func labels(xys plotter.XYs, text []string, dx vg.Length, size vg.Length) (*plotter.Labels, error) {
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: text})
	if err != nil {
		return nil, err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Variant = "Sans"
		l.TextStyle[i].Font.Size = size
		l.TextStyle[i].XAlign = draw.XCenter
		l.TextStyle[i].YAlign = draw.YBottom
	}
	l.Offset = vg.Point{X: dx, Y: vg.Points(3)}
	return l, nil
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
// sizeAxis makes the x axis a log scale of transfer sizes, one tick per
// size, with room on both sides.
func sizeAxis(p *plot.Plot, sizes map[int64]bool) {
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	var sorted []int64
	for b := range sizes {
		sorted = append(sorted, b)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	for _, b := range sorted {
		ticks = append(ticks, plot.Tick{Value: float64(b) / (1 << 20), Label: sizeLabel(b)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	lo, hi := float64(sorted[0])/(1<<20), float64(sorted[len(sorted)-1])/(1<<20)
	if lo == hi {
		lo, hi = lo/2, hi*2
	}
	p.X.Min, p.X.Max = lo/1.25, hi*1.25
}

// ratedLine draws the link's rated bandwidth across the plot and says so in
// the caption.
func (ch *chart) ratedLine(p *plot.Plot, link Link) error {
	xys := plotter.XYs{{X: p.X.Min, Y: link.RatedGBps}, {X: p.X.Max, Y: link.RatedGBps}}
	rated, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	rated.Color = colRated
	rated.Width = vg.Points(1.5)
	rated.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
	p.Add(rated)
	p.Legend.Add(link.label(), rated)
	ch.drew("rated", xys)
	ch.caption += fmt.Sprintf(" The dotted line is the link's rated bandwidth per direction: %s, %.1f GB/s.", link.name(), link.RatedGBps)
	return nil
}

func bandwidthChart(r *predictions.Result, link Link) (chart, error) {
	ch := chart{name: "bandwidth", title: "Copy bandwidth by transfer size"}
	from := preferredOf(r.Copies, func(c predictions.CopyRow) string { return c.From })
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
	for _, c := range r.Copies {
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
	p := newPlot(ch.title, "transfer size (log scale)", "GB/s (1e9 bytes per second)")
	sizeAxis(p, sizes)
	var drawn []string
	for _, dir := range []vocab.Direction{vocab.H2D, vocab.D2H} {
		for _, src := range []vocab.MemKind{vocab.MemPageable, vocab.MemPinned} {
			xys := series[key{dir, src}]
			if len(xys) == 0 {
				continue
			}
			sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return ch, err
			}
			col := colPageable
			if src == vocab.MemPinned {
				col = colPinned
			}
			line.Color, points.Color = col, col
			line.Width = vg.Points(2)
			points.Radius = vg.Points(3.5)
			points.Shape = draw.CircleGlyph{}
			if dir == vocab.D2H {
				line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
				points.Shape = draw.TriangleGlyph{}
			}
			p.Add(line, points)
			name := strings.ToUpper(string(dir)) + " " + string(src)
			p.Legend.Add(name, line, points)
			ch.drew(name, xys)
			drawn = append(drawn, name)
		}
	}
	ch.caption = fmt.Sprintf("Mean bandwidth of the timed blocking copies at each size (%s): %s. Solid lines are host-to-device, dashed device-to-host.",
		sourceWords(from), strings.Join(drawn, ", "))
	if link.RatedGBps > 0 {
		if err := ch.ratedLine(p, link); err != nil {
			return ch, err
		}
		maxY = math.Max(maxY, link.RatedGBps)
	} else {
		ch.caption += " The PCIe link's rated bandwidth is not known for this input, so no line marks it (a run folder's run.json supplies it; so does --pcie-gbps)."
	}
	p.Y.Min = 0
	// Room above the highest line for the legend.
	p.Y.Max = maxY * (1.15 + 0.09*float64(len(drawn)))
	ch.plot = p
	return ch, nil
}

// asyncChart draws part 2: call and completion time per source on one scale.
func asyncChart(r *predictions.Result) (chart, error) {
	ch := chart{name: "async", title: "cudaMemcpyAsync: time in the call vs time to completion"}
	from := preferredOf(r.Async, func(a predictions.AsyncRow) string { return a.From })
	var rows []predictions.AsyncRow
	for _, src := range []vocab.MemKind{vocab.MemPageable, vocab.MemPinned} {
		for _, a := range r.Async {
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
	maxY := 0.0
	for i, a := range rows {
		names = append(names, string(a.Source))
		call = append(call, a.CallMs)
		done = append(done, a.CompletionMs)
		callXY = append(callXY, plotter.XY{X: float64(i), Y: a.CallMs})
		doneXY = append(doneXY, plotter.XY{X: float64(i), Y: a.CompletionMs})
		callText = append(callText, fmt.Sprintf("%s ms (%s)", msText(a.CallMs), pct(a.Share)))
		doneText = append(doneText, msText(a.CompletionMs)+" ms")
		maxY = math.Max(maxY, math.Max(a.CallMs, a.CompletionMs))
	}
	what := "64 MiB"
	if rows[0].Bytes > 0 {
		what = sizeLabel(rows[0].Bytes)
	}
	p := newPlot(ch.title, "host memory the "+what+" copy reads", "ms per call (mean of the timed calls)")
	w := vg.Points(56)
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
	callBars.Offset, doneBars.Offset = -w/2, w/2
	callLabels, err := labels(callXY, callText, -w/2, vg.Points(9))
	if err != nil {
		return ch, err
	}
	doneLabels, err := labels(doneXY, doneText, w/2, vg.Points(9))
	if err != nil {
		return ch, err
	}
	p.Add(callBars, doneBars, callLabels, doneLabels)
	ch.drew("call", callXY)
	ch.drew("completion", doneXY)
	p.Legend.Add("call (thread held)", callBars)
	p.Legend.Add("completion (call start to stream synchronized)", doneBars)
	p.Legend.Left = false
	p.Legend.XOffs = -vg.Points(8)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	p.Y.Min = 0
	p.Y.Max = maxY * 1.3
	ch.plot = p
	ch.caption = fmt.Sprintf("Both bars of a source share one millisecond scale (%s), so a call that returns at once barely shows; the label gives the call's share of completion.", sourceWords(from))
	return ch, nil
}

// kernelChart draws part 3 with prediction 3's band for the zero-copy time.
// lossBand draws prediction 3's band for the zero-copy bar: the resident
// time times the predicted loss (mid), from half of it (lo) to twice it (hi).
func (ch *chart) lossBand(p *plot.Plot, residentMs, predicted float64) (lo, mid, hi float64, err error) {
	lo = residentMs * predicted / predictions.LossFactor
	mid = residentMs * predicted
	hi = residentMs * predicted * predictions.LossFactor
	band, err := plotter.NewPolygon(plotter.XYs{{X: 0.65, Y: lo}, {X: 1.35, Y: lo}, {X: 1.35, Y: hi}, {X: 0.65, Y: hi}})
	if err != nil {
		return 0, 0, 0, err
	}
	band.Color = colBand
	band.LineStyle.Width = 0
	line, err := plotter.NewLine(plotter.XYs{{X: 0.65, Y: mid}, {X: 1.35, Y: mid}})
	if err != nil {
		return 0, 0, 0, err
	}
	line.Color = colZeroCopy
	line.Width = vg.Points(1.5)
	line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(band)
	p.Legend.Add(fmt.Sprintf("prediction 3: zero-copy between %s and %s ms", msText(lo), msText(hi)), band)
	p.Legend.Add(fmt.Sprintf("predicted zero-copy time %s ms (resident x %.1f)", msText(mid), predicted), line)
	p.Add(line)
	ch.drew("predicted zero-copy band", plotter.XYs{{X: 1, Y: lo}, {X: 1, Y: mid}, {X: 1, Y: hi}})
	return lo, mid, hi, nil
}

func kernelChart(r *predictions.Result) (chart, error) {
	ch := chart{name: "kernels", title: "scaleCopy kernel: device-resident vs zero-copy"}
	from := preferredOf(r.Kernels, func(k predictions.KernelRow) string { return k.From })
	var res, zero *predictions.KernelRow
	for i := range r.Kernels {
		k := &r.Kernels[i]
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
	var names []string
	var vals plotter.Values
	var xys plotter.XYs
	var text []string
	for _, k := range []*predictions.KernelRow{res, zero} {
		if k == nil {
			continue
		}
		xys = append(xys, plotter.XY{X: float64(len(names)), Y: k.MsPerLaunch})
		names = append(names, string(k.Variant))
		vals = append(vals, k.MsPerLaunch)
		t := msText(k.MsPerLaunch) + " ms"
		if k.GBps > 0 {
			t += fmt.Sprintf(" (%.1f GB/s)", k.GBps)
		}
		text = append(text, t)
	}
	p := newPlot(ch.title, "where the kernel's data lives", "ms per launch (mean of the timed launches)")
	w := vg.Points(80)
	bars, err := plotter.NewBarChart(vals, w)
	if err != nil {
		return ch, err
	}
	bars.Color, bars.LineStyle.Width = colResident, 0
	maxY := 0.0
	for _, v := range vals {
		maxY = math.Max(maxY, v)
	}
	ch.caption = fmt.Sprintf("Mean time per launch (%s).", sourceWords(from))
	predicted := predictedLoss(r, from)
	if res != nil && zero != nil && predicted > 0 {
		lo, _, hi, err := ch.lossBand(p, res.MsPerLaunch, predicted)
		if err != nil {
			return ch, err
		}
		maxY = math.Max(maxY, hi)
		ch.caption += fmt.Sprintf(" The shaded band is where prediction 3 puts the zero-copy launch: the resident time %s ms times the predicted loss %.2fx (device bandwidth over part 1's pinned host-to-device bandwidth), from half of that to twice it: %s to %s ms. The zero-copy bar measured %s ms.",
			msText(res.MsPerLaunch), predicted, msText(lo), msText(hi), msText(zero.MsPerLaunch))
	} else {
		ch.caption += " Prediction 3's band is not drawn: the input gives no predicted loss for these rows (it needs both variants and part 1's pinned 64 MiB host-to-device copy)."
	}
	lbl, err := labels(xys, text, 0, vg.Points(9))
	if err != nil {
		return ch, err
	}
	p.Add(bars, lbl)
	ch.drew("ms per launch", xys)
	p.Legend.Add("measured ms per launch", bars)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	p.Y.Min = 0
	p.Y.Max = maxY * 1.35
	ch.plot = p
	return ch, nil
}

// predictedLoss returns prediction 3's predicted loss for the given source,
// or 0 when the input does not give one.
func predictedLoss(r *predictions.Result, from string) float64 {
	c := r.Claim("3.factor")
	if c == nil {
		return 0
	}
	for _, sv := range c.Sources {
		if sv.Source == from && sv.Measured != nil && sv.Bound > 0 {
			return sv.Bound
		}
	}
	if c.From == from && c.Measured != nil && c.Bound > 0 {
		return c.Bound
	}
	return 0
}

// callsChart draws prediction 4's per-call durations of the two groups.
// callAxes numbers the calls 1..n on the x axis and puts whole decades
// around [minY, maxY] on the log y axis.
func callAxes(p *plot.Plot, n int, minY, maxY float64) {
	var ticks []plot.Tick
	for i := 1; i <= n; i++ {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: fmt.Sprint(i)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = 0.5, float64(n)+0.5
	loExp, hiExp := int(math.Floor(math.Log10(minY))), int(math.Ceil(math.Log10(maxY)))+1
	p.Y.Min, p.Y.Max = math.Pow10(loExp), math.Pow10(hiExp)
	var yticks []plot.Tick
	for e := loExp; e <= hiExp; e++ {
		v := math.Pow10(e)
		yticks = append(yticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		for m := 2; m < 10 && e < hiExp; m++ {
			yticks = append(yticks, plot.Tick{Value: float64(m) * v})
		}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(yticks)
}

func callsChart(r *predictions.Result) (chart, error) {
	ch := chart{name: "calls", title: "Time in each timed cudaMemcpyAsync call (log scale)"}
	var froms []string
	for _, a := range r.AsyncCalls {
		if len(a.PageableMs)+len(a.PinnedMs) > 0 {
			froms = append(froms, a.From)
		}
	}
	from := preferred(froms)
	var calls *predictions.CallDurations
	for i := range r.AsyncCalls {
		if r.AsyncCalls[i].From == from {
			calls = &r.AsyncCalls[i]
		}
	}
	if calls == nil {
		ch.skipped = "the input gives no per-call durations of the timed cudaMemcpyAsync calls (they come from a capture's API trace; totals alone cannot be drawn per call)"
		return ch, nil
	}
	p := newPlot(ch.title, "timed call, in call order", "ms in the call")
	p.Y.Scale = plot.LogScale{}
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
	callAxes(p, n, minY, maxY)
	p.Legend.Left = false
	p.Legend.XOffs = -vg.Points(8)
	ch.caption = fmt.Sprintf("How long each timed call held the thread (%s): %s. The scale is logarithmic because the two groups differ by orders of magnitude.",
		sourceWords(from), strings.Join(sums, ", "))
	if dropped > 0 {
		ch.caption += fmt.Sprintf(" %d call(s) with no positive duration cannot sit on a log scale and are left out.", dropped)
	}
	ch.plot = p
	return ch, nil
}

// render draws a chart as PNG and SVG.
func render(p *plot.Plot) (png, svg []byte, err error) {
	defer func() {
		if e := recover(); e != nil {
			err = fmt.Errorf("drawing plot %q: %v", p.Title.Text, e)
		}
	}()
	img := vgimg.NewWith(vgimg.UseWH(plotWidth, plotHeight), vgimg.UseDPI(pngDPI))
	p.Draw(draw.New(img))
	var pb bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&pb); err != nil {
		return nil, nil, err
	}
	sc := vgsvg.New(plotWidth, plotHeight)
	p.Draw(draw.New(sc))
	var sb bytes.Buffer
	if _, err := sc.WriteTo(&sb); err != nil {
		return nil, nil, err
	}
	return pb.Bytes(), sb.Bytes(), nil
}
