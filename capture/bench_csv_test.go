package capture

import (
	"testing"
)

func BenchmarkLoadCSV(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadCSVDir(refCSV2025, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
