package nsyscsv

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
)

// backtraceReports are the CSV reports of the pipeline captured with call
// stacks, whose cuda_api_trace lists each call nsys took a stack of twice
// and whose cuda_api_sum tallies those records apart under the same name.
func backtraceReports() (string, map[string]string) {
	dir := filepath.Join("..", "testdata", "captures", "pipeline-backtrace")
	reports := map[string]string{}
	for _, r := range []string{nsysdb.ReportAPITrace, nsysdb.ReportAPISum, nsysdb.ReportGPUTrace, nsysdb.ReportMemTimeSum, nsysdb.ReportMemSizeSum} {
		reports[r] = filepath.Join(dir, "pipeline-backtrace_"+r+".csv")
	}
	return dir, reports
}

// TestBacktraceRowsLeftOut reads the CSV reports of a capture with call
// stacks: 385 rows, 156 of them nsys's records of stacks (as the SQLite
// export's eventClass says), so 229 calls, each correlation id once; the
// summary's twin rows left out, one row per name whose count is the
// calls'; the copies joined to their calls; and no call stacks, said so.
func TestBacktraceRowsLeftOut(t *testing.T) {
	dir, reports := backtraceReports()
	seen := map[int64]int{}
	sums := map[string]int64{}
	var gaps []records.Gap
	var counts records.Counts
	copies, joined := 0, 0
	h := records.Handler{
		Gap:    func(g records.Gap) error { gaps = append(gaps, g); return nil },
		Call:   func(c *records.Call) error { seen[c.Corr]++; return nil },
		Counts: func(c *records.Counts) error { counts = *c; return nil },
		APISum: func(s *records.APISum) error {
			if _, dup := sums[s.Name]; dup {
				t.Errorf("summary row %s twice", s.Name)
			}
			sums[s.Name] = s.Calls
			return nil
		},
		Op: func(o *records.Op) error {
			if o.Kind == records.OpCopy {
				copies++
				if o.Call != nil {
					joined++
				}
			}
			return nil
		},
	}
	if _, err := Read(context.Background(), dir, reports, records.Selection{JoinCalls: true, Stacks: true}, h); err != nil {
		t.Fatal(err)
	}
	for corr, n := range seen {
		if n != 1 {
			t.Fatalf("correlation id %d read %d times", corr, n)
		}
	}
	if len(seen) != 229 || counts.Calls != 229 || sums["cudaMemcpyAsync"] != 96 || copies != 96 || joined != 96 {
		t.Errorf("%d calls, counted %d; summary %v; %d copies, %d joined", len(seen), counts.Calls, sums, copies, joined)
	}
	if len(gaps) != 1 || gaps[0].Fact != records.FactStacks || !strings.Contains(gaps[0].Reason, "no call stacks in CSV reports") {
		t.Errorf("gaps %v", gaps)
	}
}

// TestTwinRows tells a backtrace record from a call repeated: a row whose
// span lies strictly around its thread's next row of the same correlation
// id is left out; one that repeats it exactly is not.
func TestTwinRows(t *testing.T) {
	c := func(row int, corr, start, end int64) records.Call {
		return records.Call{Name: "cudaMemcpyAsync", Corr: corr, Start: start, End: end, PID: 1, TID: 1, Row: row}
	}
	tw := newTwinRows()
	var out []int
	for _, call := range []records.Call{c(1, 7, 100, 900), c(2, 7, 150, 850), c(3, 8, 1000, 1100), c(4, 8, 1000, 1100)} {
		if p, ok := tw.push(call); ok {
			out = append(out, p.Row)
		}
	}
	for _, p := range tw.flush() {
		out = append(out, p.Row)
	}
	if len(out) != 3 || out[0] != 2 || out[1] != 3 || out[2] != 4 || tw.twins["cudaMemcpyAsync"] != 1 {
		t.Errorf("rows handed on %v, twins %v; want 2, 3, 4 and one twin", out, tw.twins)
	}
	sums := []records.APISum{{Name: "a", Calls: 4, TotalNs: 10}, {Name: "a", Calls: 3, TotalNs: 9}, {Name: "b", Calls: 2, TotalNs: 5}, {Name: "b", Calls: 2, TotalNs: 6}}
	got := dropSumTwins(sums, map[string]int64{"a": 4, "b": 2}, map[string]int64{"a": 3, "b": 2}, map[string]int64{"a": 9, "b": 6})
	if len(got) != 2 || got[0].Calls != 4 || got[1].TotalNs != 5 {
		t.Errorf("summary %v, want a's 4 calls and b's smaller total", got)
	}
	// One row tallying 5 calls and their 2 stack records together, as
	// cuLaunchKernel's of a PyTorch capture: read as the 5 calls.
	one := []records.APISum{{Name: "cuLaunchKernel", Calls: 7, TotalNs: 700, MinNs: 50, MaxNs: 200}}
	got = dropSumTwins(one, map[string]int64{"cuLaunchKernel": 5}, map[string]int64{"cuLaunchKernel": 2}, map[string]int64{"cuLaunchKernel": 300})
	if len(got) != 1 || got[0].Calls != 5 || got[0].TotalNs != 400 || got[0].MinNs != 0 || got[0].MaxNs != 0 {
		t.Errorf("one row of calls and records: %+v, want 5 calls of 400 ns in all, no minimum or maximum", got)
	}
	// A row counting neither the calls nor the calls and records is kept
	// as it is, for checkSums to refuse.
	odd := []records.APISum{{Name: "cuLaunchKernel", Calls: 9, TotalNs: 700}}
	if got = dropSumTwins(odd, map[string]int64{"cuLaunchKernel": 5}, map[string]int64{"cuLaunchKernel": 2}, map[string]int64{"cuLaunchKernel": 300}); got[0].Calls != 9 {
		t.Errorf("a row of 9 against 5 calls and 2 records: %+v, want it kept as it is", got)
	}
}

// TestBacktraceCaptureCSVReads: the CSV reports of a shipped PyTorch
// capture with call stacks, whose cuda_api_sum tallies cuLaunchKernel's
// calls and stack records in one row, read without a refusal, the calls
// counted once.
func TestBacktraceCaptureCSVReads(t *testing.T) {
	dir := filepath.Join("..", "testdata", "captures", "torch-prefetch-backtrace")
	reports := map[string]string{}
	for _, k := range []string{nsysdb.ReportAPITrace, nsysdb.ReportAPISum} {
		reports[k] = filepath.Join(dir, "torch-prefetch-backtrace_"+k+".csv")
	}
	var sums []records.APISum
	h := records.Handler{Call: func(*records.Call) error { return nil },
		APISum: func(s *records.APISum) error { sums = append(sums, *s); return nil }}
	if _, err := Read(context.Background(), dir, reports, records.Selection{}, h); err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		if s.Name == "cuLaunchKernel" && s.Calls != 195 {
			t.Errorf("cuLaunchKernel: %d calls, want the 195 of distinct correlation ids", s.Calls)
		}
	}
}

// TestCallsAheadTellsTheThreadsCalls reads the program's thread of a CSV
// capture: the reader tells, once and before the first call, how many calls
// its first pass counted for the thread, at least as many as it hands on.
func TestCallsAheadTellsTheThreadsCalls(t *testing.T) {
	dir, reports := backtraceReports()
	told, calls, toldAt := []int{}, 0, -1
	h := records.Handler{
		CallsAhead: func(n int) error { told, toldAt = append(told, n), calls; return nil },
		Call:       func(*records.Call) error { calls++; return nil },
	}
	sel := records.Selection{ProgramThread: true, APINames: []string{"cudaMemcpy", "cudaMemcpyAsync", "cudaStreamSynchronize", "cudaLaunchKernel"}}
	if _, err := Read(context.Background(), dir, reports, sel, h); err != nil {
		t.Fatal(err)
	}
	if calls == 0 || len(told) != 1 || told[0] < calls || toldAt != 0 {
		t.Errorf("told %v (after %d calls), then %d calls handed on; want one count of at least those, first", told, toldAt, calls)
	}
}
