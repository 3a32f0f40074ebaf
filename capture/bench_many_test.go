package capture_test

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/internal/bigcapture"
	"github.com/nsyscheck/nsyscheck/predictions"
)

// BenchmarkLoadManyCopies600k loads 600,000 small async copies in the real
// capture's shape (bigcapture.ManyCopies, the size of many-copies-600k) as
// verify does (the predictions' calls, the program's thread) and evaluates
// the predictions on them. Besides the allocations it reports model-MB, the
// heap the loaded capture keeps once collected: the model's share of what
// verify holds.
func BenchmarkLoadManyCopies600k(b *testing.B) {
	res, err := bigcapture.ManyCopies(bigcapture.ManyConfig{Source: filepath.Join("..", bigcapture.ManySource),
		OutDir: b.TempDir(), Copies: 600_000})
	if err != nil {
		b.Fatal(err)
	}
	opts := capture.Options{APINames: predictions.Names(), ProgramThread: true}
	var before, after runtime.MemStats
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		c, err := capture.LoadSQLite(res.SQLite, opts)
		if err != nil {
			b.Fatal(err)
		}
		if c.Memcpys.Len() != res.Copies {
			b.Fatalf("%d copies loaded, want %d", c.Memcpys.Len(), res.Copies)
		}
		predictions.Evaluate(c)
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(c)
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "model-MB")
	b.ReportMetric(float64(res.Copies)*float64(b.N)/b.Elapsed().Seconds(), "copies/s")
}
