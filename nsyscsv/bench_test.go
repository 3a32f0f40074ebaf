package nsyscsv

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gocarina/gocsv"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
)

// writeSyntheticTrace writes a cuda_api_trace report of n rows shaped like
// nsys 2025.3's, with a quoted thread name on every tenth row.
func writeSyntheticTrace(b *testing.B, path string, n int) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	io.WriteString(w, traceHeader)
	names := []string{"cudaMemcpy", "cudaMemcpyAsync", "cudaStreamSynchronize", "cudaLaunchKernel", "cudaEventRecord", "cuKernelGetName"}
	start := int64(385321151)
	for i := 0; i < n; i++ {
		thread := "pinned"
		if i%10 == 0 {
			thread = `"worker, 2"`
		}
		dur := int64(1000 + i%5000)
		fmt.Fprintf(w, "%d,%d,%s,0,%d,4242,4243,20,%s\n", start, dur, names[i%len(names)], i+1, thread)
		start += dur + 17
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// gocsvTraceRow is the same report decoded by gocsv, for comparison only.
type gocsvTraceRow struct {
	Start    int64  `csv:"Start (ns)"`
	Duration int64  `csv:"Duration (ns)"`
	Name     string `csv:"Name"`
	Result   int64  `csv:"Result"`
	CorrID   int64  `csv:"CorrID"`
	Pid      int64  `csv:"Pid"`
	Tid      int64  `csv:"Tid"`
	Thread   string `csv:"Thread Name"`
}

// BenchmarkCSVTraceStream measures the streamed cuda_api_trace reader
// (readCSVRecords on csvScanner) on a synthetic 1M-row report, through
// Read with every thread and with the program's thread (two passes),
// against gocsv's own streaming decoder.
func BenchmarkCSVTraceStream(b *testing.B) {
	const rows = 1_000_000
	dir := b.TempDir()
	path := filepath.Join(dir, "synthetic_cuda_api_trace.csv")
	writeSyntheticTrace(b, path, rows)
	st, _ := os.Stat(path)

	rate := func(b *testing.B, start time.Time, n int) {
		b.ReportMetric(float64(n)*float64(b.N)/time.Since(start).Seconds(), "rows/s")
	}
	b.Run("streamAPITrace", func(b *testing.B) {
		b.SetBytes(st.Size())
		b.ReportAllocs()
		t0 := time.Now()
		for i := 0; i < b.N; i++ {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			var sum int64
			n, err := streamAPITrace(f, path, records.Selection{}, func(c records.Call) { sum += c.Duration() }, nil)
			f.Close()
			if err != nil || n != rows {
				b.Fatalf("%d rows, %v", n, err)
			}
		}
		rate(b, t0, rows)
	})
	reports := map[string]string{nsysdb.ReportAPITrace: path}
	keep := func(calls *[]records.Call) records.Handler {
		return records.Handler{Call: func(c *records.Call) error { *calls = append(*calls, *c); return nil }}
	}
	b.Run("Read", func(b *testing.B) {
		b.SetBytes(st.Size())
		b.ReportAllocs()
		t0 := time.Now()
		for i := 0; i < b.N; i++ {
			var calls []records.Call
			_, err := Read(context.Background(), dir, reports, records.Selection{}, keep(&calls))
			if err != nil || len(calls) != rows {
				b.Fatalf("%v", err)
			}
		}
		rate(b, t0, rows)
	})
	b.Run("Read-thread", func(b *testing.B) {
		// As verify loads it: the predictions' API names and the program's
		// thread, so the report is read twice (count, then keep).
		b.SetBytes(st.Size())
		b.ReportAllocs()
		t0 := time.Now()
		opts := records.Selection{ProgramThread: true, APINames: []string{"cudaMemcpy", "cudaMemcpyAsync", "cudaStreamSynchronize", "cudaLaunchKernel"}}
		for i := 0; i < b.N; i++ {
			var calls []records.Call
			if _, err := Read(context.Background(), dir, reports, opts, keep(&calls)); err != nil {
				b.Fatalf("%v", err)
			}
		}
		rate(b, t0, rows)
	})
	b.Run("gocsv-callback", func(b *testing.B) {
		b.SetBytes(st.Size())
		b.ReportAllocs()
		t0 := time.Now()
		for i := 0; i < b.N; i++ {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			var sum int64
			n := 0
			err = gocsv.UnmarshalToCallback(bufio.NewReader(f), func(r gocsvTraceRow) {
				c := records.Call{Name: r.Name, Start: r.Start, End: r.Start + r.Duration, Result: r.Result,
					Corr: r.CorrID, PID: r.Pid, TID: r.Tid, Thread: r.Thread}
				sum += c.Duration()
				n++
			})
			f.Close()
			if err != nil || n != rows {
				b.Fatalf("%d rows, %v", n, err)
			}
		}
		rate(b, t0, rows)
	})
	b.Run("gocsv-decoder-callback", func(b *testing.B) {
		b.SetBytes(st.Size())
		b.ReportAllocs()
		t0 := time.Now()
		for i := 0; i < b.N; i++ {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			cr := csv.NewReader(bufio.NewReader(f))
			cr.ReuseRecord = true
			n := 0
			err = gocsv.UnmarshalDecoderToCallback(gocsv.NewSimpleDecoderFromCSVReader(cr), func(r gocsvTraceRow) { n++ })
			f.Close()
			if err != nil || n != rows {
				b.Fatalf("%d rows, %v", n, err)
			}
		}
		rate(b, t0, rows)
	})
}
