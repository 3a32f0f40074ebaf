package perfbench

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/check"
	"github.com/nsyscheck/nsyscheck/internal/bigcapture"
	"github.com/nsyscheck/nsyscheck/predictions"
)

var source = filepath.Join("..", "..", bigcapture.DefaultSource)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{4, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestRunMeasures(t *testing.T) {
	m := Run([]string{"sh", "-c", "echo hi; exit 3"}, nil, nil)
	if m.Err != nil || m.Exit != 3 || m.Stdout != "hi\n" || m.MaxRSS <= 0 || m.Wall <= 0 {
		t.Errorf("Run = %+v", m)
	}
}

// TestQueriesRun checks that both queries run in the sqlite3 shell on the
// source capture, where the shell is installed, and that the full one gives
// nsys stats' cudaapisum figures where nsys is installed too.
func TestQueriesRun(t *testing.T) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("no sqlite3 shell")
	}
	for _, q := range []string{QueryFull, QueryNoMedian, QueryCopyJoin} {
		m := Run([]string{"sqlite3", "-csv", "-header", source}, nil, Stdin(q))
		if m.Err != nil || m.Exit != 0 || len(m.Stdout) < 100 {
			t.Errorf("sqlite3: exit %d %v\n%s\n%s", m.Exit, m.Err, m.Stdout, m.Stderr)
		}
	}
	if _, err := exec.LookPath("nsys"); err != nil {
		return
	}
	mine := Run([]string{"sqlite3", "-csv", source}, nil, Stdin(QueryFull))
	theirs := Run([]string{"nsys", "stats", "--report", "cudaapisum", "--format", "csv", source}, nil, nil)
	if theirs.Exit != 0 {
		t.Skipf("nsys stats failed: %s", theirs.Stderr)
	}
	// nsys prints a "Processing [...]" line and the header before the rows.
	_, body, ok := strings.Cut(theirs.Stdout, "Time (%)")
	if !ok {
		t.Fatalf("no report in nsys stats' output:\n%s", theirs.Stdout)
	}
	_, body, _ = strings.Cut(body, "\n")
	if got, want := strings.ReplaceAll(mine.Stdout, `"`, ""), strings.TrimSpace(body)+"\n"; got != want {
		t.Errorf("sqlite3 query:\n%s\nnsys stats:\n%s", got, want)
	}
}

func generate(b *testing.B, n int) *bigcapture.Result {
	b.Helper()
	res, err := bigcapture.Generate(bigcapture.Config{Source: source, OutDir: b.TempDir(), Runtime: n, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// BenchmarkLoadSQLite100k loads and evaluates a capture with 100k added API
// calls the way verify does. Run with -benchmem.
func BenchmarkLoadSQLite100k(b *testing.B) {
	res := generate(b, 100_000)
	opts := capture.Options{APINames: predictions.Names()}
	b.ResetTimer()
	for b.Loop() {
		c, err := capture.LoadSQLite(res.SQLite, opts)
		if err != nil {
			b.Fatal(err)
		}
		predictions.Evaluate(c)
	}
	b.ReportMetric(float64(res.AddedRuntime+res.SourceRuntime)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkLoadCSV100k streams the matching cuda_api_trace report; run with
// -cpu 1 for the one-core figure.
func BenchmarkLoadCSV100k(b *testing.B) {
	res := generate(b, 100_000)
	opts := capture.Options{APINames: predictions.Names()}
	b.ResetTimer()
	for b.Loop() {
		if _, err := capture.LoadCSVDir(res.CSVDir, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.CSVRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkAudit100k audits a capture with 100k added API calls as
// nsyscheck audit does, NVIDIA's rule left out: one pass into the
// accumulator and the timeline, the replays, the exposure scan beside.
func BenchmarkAudit100k(b *testing.B) {
	res := generate(b, 100_000)
	rates, err := check.AuditRates(check.AuditOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		au, err := check.AuditCapture(context.Background(), res.SQLite, rates, check.AuditOptions{NoRule: true})
		if err != nil {
			b.Fatal(err)
		}
		if au.Copies == 0 {
			b.Fatal("no copies")
		}
	}
	b.ReportMetric(float64(res.AddedRuntime+res.SourceRuntime)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkAudit1M audits the generated capture of a million added API
// calls (50,305 copies among them: bigcapture -n 1000000), NVIDIA's rule
// left out, and reports the audit's CPU time per run (cpu-s) and, where
// the sqlite3 shell is on PATH, that time over the shell's copy join of
// the same file (x-join, the join's CPU time the median of 3 runs): the
// scale target is 1.5 at most. Its calls go through the timeline, most of
// them hand-offs between threads, and four replays.
func BenchmarkAudit1M(b *testing.B) {
	res, err := bigcapture.Generate(bigcapture.Config{Source: source, OutDir: b.TempDir(), Runtime: 1_000_000, Seed: 1, NoCSV: true})
	if err != nil {
		b.Fatal(err)
	}
	rates, err := check.AuditRates(check.AuditOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := processCPU(b)
	for b.Loop() {
		au, err := check.AuditCapture(context.Background(), res.SQLite, rates, check.AuditOptions{NoRule: true})
		if err != nil {
			b.Fatal(err)
		}
		if au.Copies == 0 || au.Replay == nil {
			b.Fatalf("%d copies, replay %v", au.Copies, au.Replay)
		}
	}
	cpu := (processCPU(b) - cpu0).Seconds() / float64(b.N)
	b.StopTimer()
	b.ReportMetric(cpu, "cpu-s")
	if _, err := exec.LookPath("sqlite3"); err != nil {
		return
	}
	var joins []float64
	for range 3 {
		m := Run([]string{"sqlite3", res.SQLite}, nil, Stdin(QueryCopyJoin))
		if m.Err != nil || m.Exit != 0 {
			b.Fatalf("sqlite3 copy join: exit %d, %v: %s", m.Exit, m.Err, m.Stderr)
		}
		joins = append(joins, m.CPU.Seconds())
	}
	b.ReportMetric(cpu/Median(joins), "x-join")
}

// processCPU is the user and system time this process has taken.
func processCPU(b *testing.B) time.Duration {
	cpu, err := ProcessCPU()
	if err != nil {
		b.Fatal(err)
	}
	return cpu
}

// manyCopies writes a capture of 600,000 small async copies in the real
// capture's shape (bigcapture.ManyCopies), the size of many-copies-600k.
func manyCopies(b *testing.B) *bigcapture.ManyResult {
	b.Helper()
	return manyCopiesOf(b, 600_000)
}

// manyCopiesOf writes a capture of n small async copies in the real
// capture's shape.
func manyCopiesOf(b *testing.B, n int) *bigcapture.ManyResult {
	b.Helper()
	res, err := bigcapture.ManyCopies(bigcapture.ManyConfig{Source: filepath.Join("..", "..", bigcapture.ManySource),
		OutDir: b.TempDir(), Copies: n})
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// peakLiveHeap runs f and returns the most bytes the heap held live after
// any collection while it ran (the runtime's own count, looked at every
// millisecond), after a collection first so that what came before does
// not count.
func peakLiveHeap(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	done := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var most uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			most = max(most, sample[0].Value.Uint64())
			select {
			case <-done:
				peak <- most
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	return <-peak
}

// BenchmarkHeapPerCopy measures what verify and audit hold live at most on
// captures of 200,000 and 600,000 small async copies in the real capture's
// shape, and reports it at 600,000 (verify-MiB, audit-MiB) and as bytes
// per copy between the two sizes (verify-B/copy, audit-B/copy): the growth
// with the number of copies. The audit's is its timeline and replay (the
// timeline and replay packages), docs/performance.md says how much of each.
func BenchmarkHeapPerCopy(b *testing.B) {
	sizes := []int{200_000, 600_000}
	caps := make([]*bigcapture.ManyResult, len(sizes))
	for i, n := range sizes {
		caps[i] = manyCopiesOf(b, n)
	}
	rates, err := check.AuditRates(check.AuditOptions{})
	if err != nil {
		b.Fatal(err)
	}
	commands := []struct {
		name string
		run  func(path string) error
	}{
		{"verify", func(path string) error { _, err := check.Load(path, check.Options{}); return err }},
		{"audit", func(path string) error {
			_, err := check.AuditCapture(context.Background(), path, rates, check.AuditOptions{NoRule: true})
			return err
		}},
	}
	peaks := make([][]float64, len(commands))
	b.ResetTimer()
	for b.Loop() {
		for c, cmd := range commands {
			peaks[c] = peaks[c][:0]
			for _, res := range caps {
				var err error
				peak := peakLiveHeap(func() { err = cmd.run(res.SQLite) })
				if err != nil {
					b.Fatalf("%s %s: %v", cmd.name, res.SQLite, err)
				}
				peaks[c] = append(peaks[c], float64(peak))
			}
		}
	}
	for c, cmd := range commands {
		p := peaks[c]
		b.ReportMetric(p[1]/(1<<20), cmd.name+"-MiB")
		b.ReportMetric((p[1]-p[0])/float64(sizes[1]-sizes[0]), cmd.name+"-B/copy")
	}
}

// BenchmarkAuditManyCopies600k audits 600,000 small async copies as
// nsyscheck audit does, NVIDIA's rule left out; its allocations are the
// memory the audit's stream churns through (make bench measures the peak
// RSS of the command).
func BenchmarkAuditManyCopies600k(b *testing.B) {
	res := manyCopies(b)
	rates, err := check.AuditRates(check.AuditOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		au, err := check.AuditCapture(context.Background(), res.SQLite, rates, check.AuditOptions{NoRule: true})
		if err != nil {
			b.Fatal(err)
		}
		if au.Copies != int64(res.Copies) {
			b.Fatalf("%d copies audited, want %d", au.Copies, res.Copies)
		}
	}
	b.ReportMetric(float64(res.Copies)*float64(b.N)/b.Elapsed().Seconds(), "copies/s")
}

// BenchmarkVerifyManyCopies600k checks the lesson's predictions on the
// same capture as nsyscheck verify does.
func BenchmarkVerifyManyCopies600k(b *testing.B) {
	res := manyCopies(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := check.Load(res.SQLite, check.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.Copies)*float64(b.N)/b.Elapsed().Seconds(), "copies/s")
}
