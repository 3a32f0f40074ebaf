package replay_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/check"
	"github.com/nsyscheck/nsyscheck/internal/perfbench"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/source"
	"github.com/nsyscheck/nsyscheck/timeline"
)

// LargeCapturesEnv names the folder of real large captures (made by
// testdata/programs/capture-set.sh big, too large to ship): each
// NAME/NAME.sqlite in it is read with the test's SQL, built and replayed.
const LargeCapturesEnv = "NSYSCHECK_LARGE_CAPTURES"

// Real large captures read, built and replayed: time per phase, the live
// heap of the timeline, and the process's peak RSS after each (run one
// test at a time for a clean peak: go test ./replay -run LargeCaptures).
func TestLargeCaptures(t *testing.T) {
	files := largeCaptures(t)
	rates := runRates(t, h200Run)
	for _, path := range files {
		t0 := time.Now()
		tl := buildExport(t, path, timeline.Options{})
		built := time.Since(t0)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		t1 := time.Now()
		res, err := replay.Replay(t.Context(), tl, replay.Options{Coster: replay.Chain{replay.NewCaptureCoster(tl, auditSizes), rates}, Sizes: auditSizes})
		if err != nil {
			t.Fatal(err)
		}
		replayed := time.Since(t1)
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d calls, %d ops; read and built in %v (timeline %.1f MiB live), replayed (as captured and 3 pinned) in %v; peak RSS %.1f MiB",
			filepath.Base(path), tl.Calls.Len(), tl.Ops.Len(), built.Round(time.Millisecond), float64(ms.HeapAlloc)/(1<<20),
			replayed.Round(time.Millisecond), float64(ru.Maxrss)/1024)
		for _, r := range res.Regions {
			t.Logf("  %-16.16s %5d  median %9.3f replayed %9.3f (%+.1f%%) predicted %9.3f  span %9.3f replayed %9.3f (%+.1f%%) predicted %9.3f",
				r.Name, r.Instances, r.MedianMs, r.ReplayMedianMs, 100*r.Fit.Median, r.PredictedMedianMs, r.SpanMs, r.ReplaySpanMs, 100*r.Fit.Span, r.PredictedSpanMs)
		}
		t.Logf("  %d re-costed, %d without a cost, %d forced; %s", res.Recosted, res.Uncosted, res.Forced, worstMisfit(res))
	}
}

// largeCaptures lists the NAME/NAME.sqlite of the folder LargeCapturesEnv
// names, and skips tb where it names none.
func largeCaptures(tb testing.TB) []string {
	tb.Helper()
	dir := os.Getenv(LargeCapturesEnv)
	if dir == "" {
		tb.Skipf("set %s to a folder of large captures (many-copies-600k, torch-long)", LargeCapturesEnv)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.sqlite"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("%s=%s: no NAME/NAME.sqlite in it (%v)", LargeCapturesEnv, dir, err)
	}
	return files
}

func worstMisfit(res *replay.Result) string {
	if len(res.Misfits) == 0 {
		return "no misfit"
	}
	f := res.Misfits[0]
	return fmt.Sprintf("latest misfit %s: %d of %d late by %.3f ms in all", misfitClass(f), f.Late, f.Count, float64(f.LateNs)/1e6)
}

// BenchmarkLargeReplay replays each real large capture in the folder
// LargeCapturesEnv names (NAME/NAME.sqlite), its timeline built once as
// the audit builds it (from the stream of its records), with the audit's
// costs and size classes: as captured and three times pinned. cpu-s/op is
// the process's CPU time per replay (the collector's included).
func BenchmarkLargeReplay(b *testing.B) {
	files := largeCaptures(b)
	rates, err := check.AuditRates(check.AuditOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, path := range files {
		tl := streamedTimeline(b, path)
		b.Run(filepath.Base(filepath.Dir(path)), func(b *testing.B) {
			runtime.GC()
			b.ReportAllocs()
			cpu0, err := perfbench.ProcessCPU()
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := replay.Replay(b.Context(), tl, audit.ReplayOptions(tl, rates, replay.PinInPlace)); err != nil {
					b.Fatal(err)
				}
			}
			cpu, err := perfbench.ProcessCPU()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric((cpu-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// streamedTimeline builds the timeline of the capture at path from the
// stream of its records, as the audit does.
func streamedTimeline(b *testing.B, path string) *timeline.Timeline {
	b.Helper()
	src, err := source.Open(b.Context(), path, source.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	tb := timeline.NewBuilder(b.Context(), timeline.Options{})
	if _, err := capture.TraceOf(b.Context(), src, func(*capture.CopyScan) records.Handler { return tb.Handler() }); err != nil {
		b.Fatalf("%s: %v", path, err)
	}
	tl, err := tb.Finish()
	if err != nil {
		b.Fatalf("%s: %v", path, err)
	}
	return tl
}
