package privacy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScanCSV: a credential in any text column of a CSV report, or in a
// column's name, is a finding placed at its row and column, never kept
// unmasked; numbers and the shipped reports' names are not.
func TestScanCSV(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x_cuda_api_trace.csv")
	ghp := "ghp_" + strings.Repeat("aB3d", 9)
	body := "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name\n" +
		"348946328,1457,cuModuleGetLoadingMode,0,1,22,22,20,pinned\n" +
		"348946330,1457,cudaMemcpy,0,2,22,22,20,\"worker " + ghp + "\"\n" +
		"348946331,1457,cudaMemcpy,0,3,22,22,20,\"worker " + ghp + "\"\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ScanCSV(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 1 {
		t.Fatalf("findings %+v, want the one token once", r.Findings)
	}
	f := r.Findings[0]
	if f.Kind != KindSecret || f.Where != "x_cuda_api_trace.csv row 3 column Thread Name" || f.Masked != "ghp_…(40 chars)" || strings.Contains(f.Masked, ghp[4:]) {
		t.Errorf("finding %+v", f)
	}

	// A file that cannot be parsed whole fails the scan (closed), keeping
	// what the rows before held.
	bad := filepath.Join(dir, "bad_nvtx_pushpop_trace.csv")
	if err := os.WriteFile(bad, []byte("Name,PID\n\"AKIAIOSFODNN7EXAMPLE\",1\n\"open,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = ScanCSV(context.Background(), bad)
	if err == nil || !strings.Contains(err.Error(), "row 3") {
		t.Errorf("unterminated quote: err %v, want a failure naming row 3", err)
	}
	if r == nil || r.Count(KindSecret) != 1 {
		t.Errorf("report %+v, want the key found before the damage", r)
	}
}

// TestScanCSVShippedClean: the shipped CSV reports hold no credential.
func TestScanCSVShippedClean(t *testing.T) {
	files, _ := filepath.Glob("../testdata/captures/*/*.csv")
	if len(files) == 0 {
		t.Fatal("no shipped CSV reports found")
	}
	for _, p := range files {
		r, err := ScanCSV(context.Background(), p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		for _, f := range r.Findings {
			t.Errorf("%s: %s at %s (%s)", p, f.Kind, f.Where, f.Masked)
		}
	}
}
