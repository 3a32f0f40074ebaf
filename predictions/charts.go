package predictions

import (
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/vocab"
)

// Chart is a part's plot, as data: what it shows, its axes, its series of
// typed points, the band a prediction puts a value in, and its caption.
// report draws it, and titles it with the GPU and the verdict of its
// prediction, whose claims the legend lists.
type Chart struct {
	// Name is the plot's file name without extension; Title what it shows.
	Name, Title string
	// Prediction is the prediction it backs.
	Prediction int
	// Skipped says why the plot is not drawn (the input lacks its data);
	// nothing else is set then.
	Skipped string
	XLabel  Words
	YLabel  Words
	X       XAxis
	Y       YAxis
	// Sizes are the sizes the X axis is ticked at (XSizes); Categories its
	// names (XCategories); Count how far it runs (XIndex: 1 to Count).
	Sizes      []int64
	Categories []string
	Count      int
	// Headroom is how far a linear Y axis runs above the highest value, as
	// a factor.
	Headroom float64
	// YUnit is the unit a logarithmic Y axis writes in its tick labels.
	YUnit  string
	Series []Series
	Band   *Band
	// Swatches are legend entries of a colour alone, after the series and
	// the band.
	Swatches []Swatch
	// Rated draws the link's rated bandwidth across the plot, where the
	// link is known.
	Rated   bool
	Caption Words
}

// XAxis is how a chart's X axis runs.
type XAxis int

// X axes.
const (
	// XSizes: transfer sizes in MiB on a log scale, ticked at Sizes.
	XSizes XAxis = iota + 1
	// XCategories: one place per name of Categories.
	XCategories
	// XIndex: 1, 2, ... the longest series' points.
	XIndex
)

// YAxis is how a chart's Y axis runs.
type YAxis int

// Y axes.
const (
	// YLinear: from 0 to Headroom times the highest value.
	YLinear YAxis = iota + 1
	// YLog: whole decades around the values, YUnit in the labels.
	YLog
	// YLinearOrLog: linear, logarithmic where the highest value is more
	// than 20 times the lowest (the X label then says so).
	YLinearOrLog
)

// Color is the role a colour plays; report picks the colour.
type Color int

// Colours.
const (
	ColorPageable Color = iota + 1
	ColorPinned
	ColorResident
	// ColorVerdict is the colour of the verdict of the claim named beside
	// it.
	ColorVerdict
)

// SeriesKind is how a series is drawn.
type SeriesKind int

// Series kinds.
const (
	// Lines joins the points, with a glyph at each.
	Lines SeriesKind = iota + 1
	// Bars stands a bar on each point.
	Bars
)

// Series is one series of a chart.
type Series struct {
	// Name is what it is; tests read its points by it.
	Name string
	// Legend is its legend entry, nil for none.
	Legend Words
	Kind   SeriesKind
	Color  Color
	// Claim is the claim whose verdict colours it, with ColorVerdict.
	Claim string
	// Alt draws a line dashed with triangles, for the second kind a chart
	// tells apart; Thin draws it thin with larger glyphs.
	Alt, Thin bool
	// Width and Offset are a bar's width and its shift from its place, in
	// points.
	Width, Offset float64
	Points        []Point
}

// Point is one point or bar: where, its value, the lines of the label
// above it, and the colour of its own bar where it has one.
type Point struct {
	X, Y  float64
	Label []Words
	Color Color
	Claim string
}

// Band is the span a prediction puts a value in, drawn at X across Width
// (in X's units): from Low to High, with Mid marked, and their legends.
type Band struct {
	// Name is what it is; tests read its low, middle and high by it.
	Name              string
	X, Width          float64
	Low, Mid, High    float64
	Legend, MidLegend Words
}

// Swatch is a legend entry of a colour alone; Claim names the claim whose
// verdict colours it, with ColorVerdict.
type Swatch struct {
	Legend Words
	Color  Color
	Claim  string
}

// From is a source of numbers, written as where the numbers came from.
type From Source

// Ms is milliseconds, written with three decimals (four below 0.1 ms).
type Ms float64

// Fixed is a number with Places decimals.
type Fixed struct {
	X      float64
	Places int
}

// Pct is a share, written as a percentage with a decimal.
type Pct float64

// Int is a whole number in digits.
type Int int

func (From) isPiece()  {}
func (Ms) isPiece()    {}
func (Fixed) isPiece() {}
func (Pct) isPiece()   {}
func (Int) isPiece()   {}

func bandwidthChart(r *Result) Chart {
	ch := Chart{Name: "bandwidth", Title: "Copy bandwidth by transfer size", Prediction: 1}
	rows := CopyRows.Of(r)
	from := PreferredOf(rows, func(c CopyRow) Source { return c.From })
	if from == "" {
		ch.Skipped = "the input has no part 1 copy rows (blocking cudaMemcpy by size), so there is no bandwidth to plot"
		return ch
	}
	type key struct {
		dir vocab.Direction
		src vocab.MemKind
	}
	series := map[key][]Point{}
	sizes := map[int64]bool{}
	for _, c := range rows {
		if c.From != from || c.Bytes <= 0 || c.GBps <= 0 {
			continue
		}
		k := key{c.Direction, c.Source}
		series[k] = append(series[k], Point{X: float64(c.Bytes) / (1 << 20), Y: c.GBps})
		sizes[c.Bytes] = true
	}
	if len(sizes) == 0 {
		ch.Skipped = "the input's part 1 rows carry no positive sizes and bandwidths"
		return ch
	}
	ch.XLabel, ch.YLabel = Say("transfer size (log scale)"), Say("GB/s (1e9 bytes/s)")
	ch.X, ch.Y, ch.Headroom, ch.Rated = XSizes, YLinear, 1.1, true
	for b := range sizes {
		ch.Sizes = append(ch.Sizes, b)
	}
	sort.Slice(ch.Sizes, func(i, j int) bool { return ch.Sizes[i] < ch.Sizes[j] })
	caption := Say("Mean bandwidth of the timed blocking copies at each size (", From(from), "): ")
	for _, dir := range []vocab.Direction{vocab.H2D, vocab.D2H} {
		for _, src := range sources {
			pts := series[key{dir, src}]
			if len(pts) == 0 {
				continue
			}
			sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
			name := strings.ToUpper(string(dir)) + " " + string(src)
			col := ColorPageable
			if src == vocab.MemPinned {
				col = ColorPinned
			}
			if len(ch.Series) > 0 {
				caption = append(caption, Text(", "))
			}
			caption = append(caption, Text(name))
			ch.Series = append(ch.Series, Series{Name: name, Legend: Say(name), Kind: Lines, Color: col, Alt: dir == vocab.D2H, Points: pts})
		}
	}
	ch.Caption = append(caption, Text(". Solid lines are host-to-device, dashed device-to-host."))
	return ch
}

func asyncChart(r *Result) Chart {
	ch := Chart{Name: "async", Title: "cudaMemcpyAsync: time in the call vs time to completion", Prediction: 2}
	all := AsyncRows.Of(r)
	from := PreferredOf(all, func(a AsyncRow) Source { return a.From })
	var rows []AsyncRow
	for _, src := range sources {
		for _, a := range all {
			if a.From == from && a.Source == src {
				rows = append(rows, a)
			}
		}
	}
	if len(rows) == 0 {
		ch.Skipped = "the input has no part 2 rows (timed cudaMemcpyAsync calls per source)"
		return ch
	}
	const w, gap = 60.0, 4.0
	call := Series{Name: "call", Legend: Say("call: the thread is held (label: its share of completion)"), Kind: Bars, Color: ColorPageable, Width: w, Offset: -w/2 - gap}
	done := Series{Name: "completion", Legend: Say("completion: call start to stream synchronized"), Kind: Bars, Color: ColorPinned, Width: w, Offset: w/2 + gap}
	positive := false
	for i, a := range rows {
		ch.Categories = append(ch.Categories, string(a.Source))
		call.Points = append(call.Points, Point{X: float64(i), Y: a.CallMs, Label: []Words{Say(Ms(a.CallMs), " ms"), Say(Pct(a.Share))}})
		done.Points = append(done.Points, Point{X: float64(i), Y: a.CompletionMs, Label: []Words{Say(Ms(a.CompletionMs), " ms")}})
		positive = positive || a.CallMs > 0 || a.CompletionMs > 0
	}
	if !positive {
		return Chart{Name: ch.Name, Title: ch.Title, Prediction: ch.Prediction, Skipped: "the part 2 rows carry no positive times"}
	}
	what := probeBytes
	if rows[0].Bytes > 0 {
		what = rows[0].Bytes
	}
	ch.XLabel = Say("host memory the ", Size(what), " copy reads")
	ch.YLabel = Say("ms per call, mean (log scale)")
	ch.X, ch.Y, ch.YUnit = XCategories, YLog, "ms"
	ch.Series = []Series{call, done}
	ch.Caption = Say("Time in the call and time to completion per source (", From(from),
		"), on a log scale so that a call that returns at once still shows; the label under each call time is its share of completion.")
	return ch
}

func kernelChart(r *Result) Chart {
	ch := Chart{Name: "kernels", Title: kernelName + " kernel: device-resident vs zero-copy", Prediction: 3}
	rows := KernelRows.Of(r)
	from := PreferredOf(rows, func(k KernelRow) Source { return k.From })
	var res, zero *KernelRow
	for i := range rows {
		k := &rows[i]
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
		ch.Skipped = "the input has no part 3 rows (" + kernelName + " launches, device-resident and zero-copy)"
		return ch
	}
	ch.XLabel, ch.YLabel = Say("where the kernel's data lives"), Say("ms per launch, mean")
	ch.X, ch.Y, ch.Headroom, ch.YUnit = XCategories, YLinearOrLog, 1.2, "ms"
	bars := Series{Name: "ms per launch", Kind: Bars, Color: ColorResident, Width: 80}
	for _, k := range []*KernelRow{res, zero} {
		if k == nil {
			continue
		}
		pt := Point{X: float64(len(ch.Categories)), Y: k.MsPerLaunch, Label: []Words{Say(Ms(k.MsPerLaunch), " ms")}, Color: ColorResident}
		if k == zero {
			pt.Color, pt.Claim = ColorVerdict, "3.factor"
		}
		if k.GBps > 0 {
			pt.Label = append(pt.Label, Say(Fixed{k.GBps, 1}, " GB/s"))
		}
		bars.Points = append(bars.Points, pt)
		ch.Categories = append(ch.Categories, string(k.Variant))
	}
	ch.Series = []Series{bars}
	ch.Caption = Say("Mean time per launch (", From(from), "). The zero-copy bar is green when prediction 3 held, red when it died.")
	if predicted := predictedLoss(r, from); res != nil && zero != nil && predicted > 0 {
		lo, mid, hi := res.MsPerLaunch*predicted/LossFactor, res.MsPerLaunch*predicted, res.MsPerLaunch*predicted*LossFactor
		ch.Band = &Band{Name: "predicted zero-copy band", X: 1, Width: 0.76, Low: lo, Mid: mid, High: hi,
			Legend:    Say("where prediction 3 puts zero-copy: ", Ms(lo), " to ", Ms(hi), " ms"),
			MidLegend: Say("predicted zero-copy time ", Ms(mid), " ms (resident x ", Fixed{predicted, 1}, ")")}
		ch.Caption = append(ch.Caption, Say(" The shaded band is where prediction 3 puts the zero-copy launch: the resident time ", Ms(res.MsPerLaunch),
			" ms times the predicted loss ", Fixed{predicted, 2}, "x (device bandwidth over part 1's pinned host-to-device bandwidth), from half of that to twice it: ",
			Ms(lo), " to ", Ms(hi), " ms. The zero-copy bar measured ", Ms(zero.MsPerLaunch), " ms.")...)
	} else {
		ch.Caption = append(ch.Caption, Say(" Prediction 3's band is not drawn: the input gives no predicted loss for these rows (it needs both variants and part 1's pinned ",
			Size(kernelBytes), " host-to-device copy).")...)
	}
	ch.Swatches = []Swatch{{Legend: Say("device-resident, ms per launch"), Color: ColorResident}}
	if zero != nil {
		ch.Swatches = append(ch.Swatches, Swatch{Legend: Say("zero-copy, ms per launch, in 3.factor's verdict colour"), Color: ColorVerdict, Claim: "3.factor"})
	}
	return ch
}

// predictedLoss is 3.factor's predicted loss for the given source, or 0
// when the input does not give one.
func predictedLoss(r *Result, from Source) float64 {
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

func callsChart(r *Result) Chart {
	ch := Chart{Name: "calls", Title: "Time in each timed cudaMemcpyAsync call (log scale)", Prediction: 4}
	all := CallRows.Of(r)
	var froms []Source
	for _, a := range all {
		if len(a.PageableMs)+len(a.PinnedMs) > 0 {
			froms = append(froms, a.From)
		}
	}
	from := Preferred(froms)
	var calls *CallDurations
	for i := range all {
		if all[i].From == from {
			calls = &all[i]
		}
	}
	if calls == nil {
		ch.Skipped = "the input gives no per-call durations of the timed cudaMemcpyAsync calls (they come from a capture's API trace; totals alone cannot be drawn per call)"
		return ch
	}
	ch.XLabel, ch.YLabel = Say("timed call, in call order"), Say("ms in the call")
	ch.X, ch.Y, ch.YUnit = XIndex, YLog, "ms"
	caption := Say("How long each timed call held the thread (", From(from), "): ")
	dropped, positive := 0, false
	for _, g := range []struct {
		src vocab.MemKind
		ms  []float64
		col Color
	}{{vocab.MemPageable, calls.PageableMs, ColorPageable}, {vocab.MemPinned, calls.PinnedMs, ColorPinned}} {
		s := Series{Name: string(g.src), Kind: Lines, Color: g.col, Thin: true}
		ch.Count = max(ch.Count, len(g.ms))
		total := 0.0
		for i, v := range g.ms {
			total += v
			if v <= 0 {
				dropped++
				continue
			}
			s.Points = append(s.Points, Point{X: float64(i + 1), Y: v})
			positive = true
		}
		if len(s.Points) == 0 {
			continue
		}
		s.Legend = Say(string(g.src), ": ", Int(len(g.ms)), " calls, ", Ms(total), " ms in all")
		if len(ch.Series) > 0 {
			caption = append(caption, Text(", "))
		}
		caption = append(caption, Say(string(g.src), " ", Ms(total), " ms over ", Int(len(g.ms)), " calls")...)
		ch.Series = append(ch.Series, s)
	}
	if !positive {
		return Chart{Name: ch.Name, Title: ch.Title, Prediction: ch.Prediction, Skipped: "the per-call durations of the timed cudaMemcpyAsync calls are all zero or missing"}
	}
	ch.Caption = append(caption, Text(". The scale is logarithmic because the two groups differ by orders of magnitude."))
	if dropped > 0 {
		ch.Caption = append(ch.Caption, Say(" ", Int(dropped), " call(s) with no positive duration cannot sit on a log scale and are left out.")...)
	}
	return ch
}
