package timeline_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/timeline/timelinetest"
)

// BenchmarkBuild builds the timeline of a synthetic training loop of about
// a million records, and reports the heap the timeline keeps (live-MiB).
func BenchmarkBuild(b *testing.B) {
	shape := timelinetest.ShapeOf(1_000_000)
	b.ReportAllocs()
	var tl *timeline.Timeline
	for b.Loop() {
		bl := timeline.NewBuilder(context.Background(), timeline.Options{})
		if err := timelinetest.Generate(bl.Handler(), shape); err != nil {
			b.Fatal(err)
		}
		var err error
		if tl, err = bl.Finish(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-MiB")
	b.ReportMetric(float64(shape.Steps)*shape.RecordsPerStep(), "records")
	runtime.KeepAlive(tl)
}
