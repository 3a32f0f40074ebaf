package capture

import "testing"

// BenchmarkLoadSQLite loads the H200 reference export in full and with an
// API-name filter.
func BenchmarkLoadSQLite(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts Options
	}{
		{"full", Options{}},
		{"filtered", Options{APINames: []string{"cudaMemcpy", "cudaMemcpyAsync"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := LoadSQLite(refSQLite, bc.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
