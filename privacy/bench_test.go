package privacy

import (
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/bigcapture"
)

// BenchmarkScan1M scans a capture with 1M added CUDA API rows (about
// 42 MiB), the way verify does before it loads the capture. Run with
// -benchmem; peak RSS of a whole verify is measured by internal/perfbench.
func BenchmarkScan1M(b *testing.B) {
	res, err := bigcapture.Generate(bigcapture.Config{Source: filepath.Join("..", bigcapture.DefaultSource),
		OutDir: b.TempDir(), Runtime: 1_000_000, Seed: 1, NoCSV: true})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(res.SQLiteBytes)
	b.ResetTimer()
	for b.Loop() {
		r, err := ScanPath(res.SQLite)
		if err != nil {
			b.Fatal(err)
		}
		if !r.Clean() {
			b.Fatalf("%d findings in a clean capture", len(r.Findings))
		}
	}
}
