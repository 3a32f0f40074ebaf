package nsyscsv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
)

// rangeUnitReports copies h200-pinned's cuda_api_trace, cuda_gpu_trace and
// nvtx_pushpop_trace into a fresh folder, the NVTX report's time header
// written in unit and each of its time cells divided by div (1: the values
// kept as nsys wrote them, in ns).
func rangeUnitReports(t *testing.T, unit string, div float64) (string, map[string]string) {
	t.Helper()
	src := filepath.Join("..", "testdata", "captures", "h200-pinned")
	dir := t.TempDir()
	reports := map[string]string{}
	for _, r := range []string{nsysdb.ReportAPITrace, nsysdb.ReportGPUTrace, nsysdb.ReportNVTXTrace} {
		b, err := os.ReadFile(filepath.Join(src, "pinned_"+r+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		if r == nsysdb.ReportNVTXTrace {
			lines := strings.Split(string(b), "\n")
			lines[0] = strings.ReplaceAll(lines[0], "(ns)", "("+unit+")")
			for i := 1; i < len(lines); i++ {
				cells := strings.Split(lines[i], ",")
				for j := 0; j < 5 && j < len(cells); j++ { // Start, End, Duration, DurChild, DurNonChild
					if v, err := strconv.ParseInt(cells[j], 10, 64); err == nil && div != 1 {
						cells[j] = fmt.Sprintf("%.3f", float64(v)/div)
					}
				}
				lines[i] = strings.Join(cells, ",")
			}
			b = []byte(strings.Join(lines, "\n"))
		}
		p := filepath.Join(dir, "pinned_"+r+".csv")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		reports[r] = p
	}
	return dir, reports
}

// TestRangeUnits reads a real capture's NVTX ranges under a time header
// edited to another unit than its sibling reports': with the values left
// in ns the ranges land 1000x (us) or 1e6x (ms) past every traced call and
// the folder is refused naming the units; with the values converted to the
// new unit (a consistent export) they read as the original's.
func TestRangeUnits(t *testing.T) {
	read := func(dir string, reports map[string]string) ([]records.Range, error) {
		var got []records.Range
		h := records.Handler{
			Range: func(r *records.Range) error { got = append(got, *r); return nil },
			Call:  func(*records.Call) error { return nil },
			Op:    func(*records.Op) error { return nil },
		}
		_, err := Read(context.Background(), dir, reports, records.Selection{}, h)
		return got, err
	}
	want, err := read(rangeUnitReports(t, "ns", 1))
	if err != nil || len(want) == 0 {
		t.Fatalf("the shipped reports: %d ranges, %v", len(want), err)
	}
	for _, unit := range []string{"us", "ms"} {
		_, err := read(rangeUnitReports(t, unit, 1))
		var ie *inputerr.Error
		if !errors.As(err, &ie) || !strings.HasSuffix(ie.Path, "pinned_nvtx_pushpop_trace.csv") ||
			!strings.Contains(ie.Problem, "units: the header says "+unit+", pinned_cuda_api_trace.csv says ns") {
			t.Errorf("values in ns under (%s): %v, want a units error on the NVTX report", unit, err)
		}
	}
	got, err := read(rangeUnitReports(t, "us", 1e3))
	if err != nil || len(got) != len(want) {
		t.Fatalf("values converted to us: %d ranges, %v; want %d", len(got), err, len(want))
	}
	for i := range got {
		if d := got[i].Start - want[i].Start; d < -1 || d > 1 || got[i].Name != want[i].Name {
			t.Errorf("range %d: %s at %d, want %s at %d", i, got[i].Name, got[i].Start, want[i].Name, want[i].Start)
		}
	}
}
