package nsysrule

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkEachCSV reads a rule CSV of 300,000 rows, as the rule writes
// for the 600,000-copy capture (half its copies from pageable memory).
func BenchmarkEachCSV(b *testing.B) {
	p := filepath.Join(b.TempDir(), "many"+fileSuffix)
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "Duration (ns),Start (ns),Src Kind,Dst Kind,Bytes (MB),PID,Device ID,Context ID,Green Context ID,Stream ID,API Name")
	for i := 0; i < 300_000; i++ {
		fmt.Fprintf(w, "%d,%d,Pageable,Device,0.004,22,0,1,,13,cudaMemcpyAsync_v3020\n", 2400+i%900, 955524097+int64(i)*9731)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		if err := EachCSV(p, func(FlaggedCopy) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != 300_000 {
			b.Fatalf("%d rows, want 300000", n)
		}
	}
}
