package report

import (
	"fmt"
	"math"
	"testing"

	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/vocab"
	"gonum.org/v1/plot/plotter"
)

// The plots draw the result's numbers: every point and bar is checked
// against the row it stands for, on each shipped input.
func TestPlotValues(t *testing.T) {
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			rep := builtReport(t, in.path, in.link)
			r := rep.Result
			plots := map[string]Plot{}
			for _, p := range rep.Plots {
				plots[p.Name] = p
			}
			checkBandwidth(t, r, plots["bandwidth"], in.link)
			checkAsync(t, r, plots["async"])
			checkKernels(t, r, plots["kernels"])
			if p := plots["calls"]; p.Skipped == "" {
				checkCalls(t, r, p)
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func wantSeries(t *testing.T, p Plot, name string, want plotter.XYs) {
	t.Helper()
	got, ok := p.Series[name]
	if !ok {
		t.Errorf("%s plot: no series %q (have %v)", p.Name, name, keys(p.Series))
		return
	}
	if len(got) != len(want) {
		t.Errorf("%s plot, %s: %d points, want %d", p.Name, name, len(got), len(want))
		return
	}
	for i := range want {
		if !near(got[i].X, want[i].X) || !near(got[i].Y, want[i].Y) {
			t.Errorf("%s plot, %s point %d: (%g, %g), want (%g, %g)", p.Name, name, i, got[i].X, got[i].Y, want[i].X, want[i].Y)
		}
	}
}

func keys(m map[string]plotter.XYs) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func checkBandwidth(t *testing.T, r *predictions.Result, p Plot, link Link) {
	from := predictions.PreferredOf(predictions.CopyRows.Of(r), func(c predictions.CopyRow) predictions.Source { return c.From })
	n := 0
	for _, dir := range []vocab.Direction{vocab.H2D, vocab.D2H} {
		for _, src := range []vocab.MemKind{vocab.MemPageable, vocab.MemPinned} {
			var want plotter.XYs
			for _, c := range predictions.CopyRows.Of(r) {
				if c.From == from && c.Direction == dir && c.Source == src && c.Bytes > 0 && c.GBps > 0 {
					want = append(want, plotter.XY{X: float64(c.Bytes) / (1 << 20), Y: c.GBps})
				}
			}
			if len(want) == 0 {
				continue
			}
			n++
			wantSeries(t, p, fmt.Sprintf("%s %s", map[vocab.Direction]string{vocab.H2D: "H2D", vocab.D2H: "D2H"}[dir], src), want)
		}
	}
	if n == 0 {
		t.Fatalf("%s: no copy rows to plot", r.Input.Path)
	}
	if link.RatedGBps > 0 {
		if s := p.Series["rated"]; len(s) != 2 || s[0].Y != link.RatedGBps || s[1].Y != link.RatedGBps {
			t.Errorf("rated line %v, want at %g GB/s", s, link.RatedGBps)
		}
	} else if _, ok := p.Series["rated"]; ok {
		t.Error("rated line drawn with no link")
	}
}

func checkAsync(t *testing.T, r *predictions.Result, p Plot) {
	from := predictions.PreferredOf(predictions.AsyncRows.Of(r), func(a predictions.AsyncRow) predictions.Source { return a.From })
	var call, done plotter.XYs
	for _, src := range []vocab.MemKind{vocab.MemPageable, vocab.MemPinned} {
		for _, a := range predictions.AsyncRows.Of(r) {
			if a.From == from && a.Source == src {
				call = append(call, plotter.XY{X: float64(len(call)), Y: a.CallMs})
				done = append(done, plotter.XY{X: float64(len(done)), Y: a.CompletionMs})
			}
		}
	}
	wantSeries(t, p, "call", call)
	wantSeries(t, p, "completion", done)
}

func checkKernels(t *testing.T, r *predictions.Result, p Plot) {
	from := predictions.PreferredOf(predictions.KernelRows.Of(r), func(k predictions.KernelRow) predictions.Source { return k.From })
	var want plotter.XYs
	for _, v := range []vocab.Variant{vocab.DeviceResident, vocab.ZeroCopy} {
		for _, k := range predictions.KernelRows.Of(r) {
			if k.From == from && k.Variant == v {
				want = append(want, plotter.XY{X: float64(len(want)), Y: k.MsPerLaunch})
			}
		}
	}
	wantSeries(t, p, "ms per launch", want)
	// The band is prediction 3's: the resident time times the predicted
	// loss, from half to twice it.
	c := r.Claim("3.factor")
	band, ok := p.Series["predicted zero-copy band"]
	if c != nil && c.Verdict != predictions.Unavailable && !ok {
		t.Errorf("no prediction 3 band although 3.factor is %s", c.Verdict)
	}
	if ok && c != nil && len(want) == 2 {
		mid := want[0].Y * c.Compare.Bound
		if !near(band[1].Y, mid) || !near(band[0].Y, mid/predictions.LossFactor) || !near(band[2].Y, mid*predictions.LossFactor) {
			t.Errorf("band %v, want %g/%g/%g", band, mid/predictions.LossFactor, mid, mid*predictions.LossFactor)
		}
	}
}

func checkCalls(t *testing.T, r *predictions.Result, p Plot) {
	var calls *predictions.CallDurations
	for i := range predictions.CallRows.Of(r) {
		if predictions.CallRows.Of(r)[i].From == predictions.SourceTrace {
			calls = &predictions.CallRows.Of(r)[i]
		}
	}
	if calls == nil {
		t.Fatal("calls plot drawn without per-call durations")
	}
	for name, ms := range map[string][]float64{"pageable": calls.PageableMs, "pinned": calls.PinnedMs} {
		var want plotter.XYs
		for i, v := range ms {
			if v > 0 {
				want = append(want, plotter.XY{X: float64(i + 1), Y: v})
			}
		}
		wantSeries(t, p, name, want)
	}
}
