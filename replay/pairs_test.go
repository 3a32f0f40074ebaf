package replay_test

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/golden"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/timeline"
)

// pair is a real capture before pinning and the capture after it.
type pair struct {
	name, before, after string
	// regions maps a region of the before capture to the after's; nil maps
	// every region to its namesake.
	regions map[string]string
	// pinBy is how the program after pins its buffers.
	pinBy replay.PinBy
	// fix says what changed in the program.
	fix string
}

// pairs are the shipped real before/after pairs, and the capture that holds
// both halves.
var pairs = []pair{
	{name: "pipeline", before: "pipeline-pageable", after: "pipeline-pinned", fix: "cudaMallocHost"},
	{name: "mixed", before: "mixed-buffers", after: "mixed-buffers", regions: map[string]string{"pass-pageable": "pass-pinned"},
		fix: "its own cudaMallocHost half"},
	{name: "driver", before: "driver-pageable", after: "driver-pinned", fix: "cuMemHostAlloc"},
	{name: "cupy", before: "cupy-pageable", after: "cupy-pinned", fix: "cupyx.empty_pinned"},
	{name: "torch-prefetch", before: "torch-prefetch-pageable", after: "torch-prefetch-pinned", fix: "tensor.pin_memory() once"},
	{name: "jax", before: "jax-cuda", after: "jax-cuda-pinned", fix: `device_put from memory_kind="pinned_host"`},
	{name: "train", before: "train-pageable", after: "train-pinned", pinBy: replay.PinByThread,
		fix: "DataLoader(pin_memory=True), which copies each batch on its pin thread"},
	{name: "train128", before: "train128-pageable", after: "train128-pinned", pinBy: replay.PinByThread,
		fix: "DataLoader(pin_memory=True), 128-image batches, 4 workers"},
	{name: "torch-pineach", before: "torch-prefetch-pageable", after: "torch-prefetch-pineach", pinBy: replay.PinByCopy,
		fix: "tensor.pin_memory() of each batch, every step"},
	{name: "torch-prefetch48", before: "torch-prefetch48-pageable", after: "torch-prefetch48-pinned",
		fix: "tensor.pin_memory() once, 48 MiB batches"},
	{name: "nullstream", before: "nullstream-pageable", after: "nullstream-pinned",
		fix: "cudaMallocHost, beside the legacy default stream"},
	{name: "torch-pineach48", before: "torch-prefetch48-pageable", after: "torch-prefetch48-pineach", pinBy: replay.PinByCopy,
		fix: "tensor.pin_memory() of each 48 MiB batch, every step"},
}

// Targets: the replay of the before capture within FitTarget of it, the
// prediction within PredictTarget of the capture after.
const (
	fitTarget     = 0.05
	predictTarget = 0.15
)

// judged is one region's prediction against the capture after.
type judged struct {
	measure                          string
	before, replayed, fit            float64
	predicted, low, high, after, off float64
}

// judge picks the measure that fits a region: its one instance's time; for
// several, the median instance, unless most predicted instances completed
// after the next began (the GPU behind the host), where the span measures
// the loop's throughput.
func judge(r, a replay.Region) judged {
	if r.Instances > 1 && r.Queued.Predicted > 0.5 {
		return judged{"span", r.SpanMs, r.ReplaySpanMs, r.Fit.Span, r.PredictedSpanMs, r.PredictedSpanLowMs, r.PredictedSpanHighMs,
			a.SpanMs, r.PredictedSpanMs/a.SpanMs - 1}
	}
	return judged{"median", r.MedianMs, r.ReplayMedianMs, r.Fit.Median, r.PredictedMedianMs, r.PredictedMedianLowMs, r.PredictedMedianHighMs,
		a.MedianMs, r.PredictedMedianMs/a.MedianMs - 1}
}

// Every shipped pair: the before capture replayed (its fit) and pinned by
// the what-if, against the capture after, per region; costs from the
// capture's own pinned copies, else the H200 run folder's rates. The table
// is a golden file; the fits must hold, the predictions are what they are.
func TestPairs(t *testing.T) {
	rates := runRates(t, h200Run)
	var b strings.Builder
	fmt.Fprintf(&b, "every real pair: the before capture replayed and pinned by the what-if,\n")
	fmt.Fprintf(&b, "against the capture after (ms). Costs: the capture's own pinned copies, else\n")
	fmt.Fprintf(&b, "the pinned rates of %s (within 4x of each size). Targets: fit within\n", filepath.Base(h200Run))
	fmt.Fprintf(&b, "%.0f%%, prediction within %.0f%% of after (hit), after in the bound.\n", 100*fitTarget, 100*predictTarget)
	for _, p := range pairs {
		tl := sharedExport(t, capturePath(p.before), timeline.Options{})
		res, err := replayWith(t, tl, replay.Options{Coster: replay.Chain{replay.NewCaptureCoster(tl, auditSizes), rates}, Sizes: auditSizes, PinBy: p.pinBy})
		if err != nil {
			t.Fatal(err)
		}
		_, ra := replayExport(t, capturePath(p.after), timeline.Options{}, replay.Chain{})
		afterBy := map[string]replay.Region{}
		for _, r := range ra.Regions {
			afterBy[r.Name] = r
		}
		fmt.Fprintf(&b, "\n%s: %s -> %s\n  (%s)\n", p.name, p.before, p.after, p.fix)
		fmt.Fprintf(&b, "  %d pageable copies re-costed, %d without a cost, %d kept; per copy:\n", res.Recosted, res.Uncosted, res.Kept)
		for _, c := range res.Costs {
			src := c.CallSource
			if c.GPUSource != src {
				src += "/" + c.GPUSource
			}
			fmt.Fprintf(&b, "  %s %s %s x%d: call %s->%s, GPU %s->%s (%s)\n", c.Direction, c.SizeClass, asyncWord(c.Async), c.Copies,
				perCopy(float64(c.CallNs), c.Copies), perCopy(c.PinnedCallNs.Mid, c.Copies),
				perCopy(float64(c.GPUNs), c.Copies), perCopy(c.PinnedGPUNs.Mid, c.Copies), src)
			if c.PinCopyNs > 0 {
				which := "high bound"
				if p.pinBy == replay.PinByThread {
					which = "every cost"
				}
				fmt.Fprintf(&b, "    %s: + %s to pin by copying\n", which, perCopy(float64(c.PinCopyNs), c.Copies))
			}
		}
		for _, a := range res.Assumptions {
			if a.Kind == timeline.AssumeCopyThread || a.Kind == timeline.AssumeGraphCopy || a.Kind == timeline.AssumeMigration {
				fmt.Fprintf(&b, "  assumed: %s, %d (%s, thread %d)\n", a.Kind, a.Count, a.API, a.TID)
			}
		}
		fmt.Fprintf(&b, "  %-20s %8s %8s %6s %8s %8s %7s\n", "region", "before", "replayed", "fit", "predict", "after", "off")
		for _, r := range res.Regions {
			an := r.Name
			if p.regions != nil {
				var ok bool
				if an, ok = p.regions[r.Name]; !ok {
					continue
				}
			}
			a, ok := afterBy[an]
			if !ok {
				t.Errorf("%s: no region %s after", p.name, an)
				continue
			}
			j := judge(r, a)
			if math.Abs(j.fit) > fitTarget {
				t.Errorf("%s: %s replays %+.1f%% off", p.before, r.Name, 100*j.fit)
			}
			in := "in"
			if j.after < j.low || j.after > j.high {
				in = "OUT"
			}
			hit := "hit"
			if math.Abs(j.off) > predictTarget {
				hit = "MISS"
			}
			fmt.Fprintf(&b, "  %-20s %8.3f %8.3f %+5.1f%% %8.3f %8.3f %+6.1f%% %s\n", fmt.Sprintf("%.13s %s", r.Name, j.measure),
				j.before, j.replayed, 100*j.fit, j.predicted, j.after, 100*j.off, hit)
			fmt.Fprintf(&b, "    bound %.3f-%.3f, after %s; overlap %.2f, pred %.2f, after %.2f\n", j.low, j.high, in,
				r.Overlap.Measured, r.Overlap.Predicted, a.Overlap.Measured)
			hb, ha := outside(r, j.measure), outside(a, j.measure)
			fmt.Fprintf(&b, "    host time outside CUDA calls: %.3f before, %.3f after (%+.1f%%)\n", hb, ha, 100*(ha/hb-1))
		}
	}
	golden.Assert(t, filepath.Join("testdata", "pairs.txt"), []byte(b.String()))
}

// outside is the host time a region's instances spent outside CUDA calls
// on the thread of their range: the median instance's, or all of them for
// the span, in ms.
func outside(r replay.Region, measure string) float64 {
	if measure == "span" {
		return r.Outside.TotalMs
	}
	return r.Outside.MedianMs
}

func asyncWord(async bool) string {
	if async {
		return "async"
	}
	return "blocking"
}

func perCopy(ns float64, n int) string { return fmt.Sprintf("%.3f", ns/float64(max(n, 1))/1e6) }

func replayWith(t *testing.T, tl *timeline.Timeline, opts replay.Options) (*replay.Result, error) {
	t.Helper()
	return replay.Replay(t.Context(), tl, opts)
}
