package source

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCaptures: what one argument of audit --ranks names. A folder gives
// each capture once per base name (the export over its report), a folder
// of capture folders each folder, a pattern its matches taken alike, a
// file itself; a pattern that matches nothing is refused with what to do.
func TestCaptures(t *testing.T) {
	dir := t.TempDir()
	touch := func(rel string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := filepath.Join(dir, "run")
	touch("run/report.0.nsys-rep")
	r0 := touch("run/report.0.sqlite")
	r1 := touch("run/report.1.nsys-rep")
	r2 := touch("run/report.2.sqlite")
	touch("run/notes.txt")
	folders := filepath.Join(dir, "folders")
	touch("folders/rank0/a_cuda_api_trace.csv")
	touch("folders/rank1/b.sqlite")
	touch("folders/empty/readme.md")

	for _, c := range []struct {
		arg  string
		want []string
	}{
		{run, []string{r0, r1, r2}},
		{filepath.Join(run, "report.*"), []string{r0, r1, r2}},
		{filepath.Join(run, "report.[12].*"), []string{r1, r2}},
		{r1, []string{r1}},
		{folders, []string{filepath.Join(folders, "rank0"), filepath.Join(folders, "rank1")}},
	} {
		got, err := Captures(c.arg)
		if err != nil {
			t.Errorf("Captures(%s): %v", c.arg, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Captures(%s) = %v, want %v", c.arg, got, c.want)
		}
	}
	if _, err := Captures(filepath.Join(run, "rank.*")); err == nil || !strings.Contains(err.Error(), "matches no file") {
		t.Errorf("a pattern matching nothing: err = %v", err)
	}
	if _, err := Captures(filepath.Join(dir, "nothing")); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("a missing capture: err = %v", err)
	}
}

// TestCapturesPatternOfJob: the pattern report.* over the real job's
// folder (ddp-ranks) matches each rank's export, its nsys stdout and its
// rule CSV; the ranks are the four exports (once each rank's stdout was
// taken as a second capture of it). A pattern that matches only what
// lies beside the captures is refused, naming the first match.
func TestCapturesPatternOfJob(t *testing.T) {
	job := filepath.Join("..", "testdata", "captures", "ddp-ranks")
	got, err := Captures(filepath.Join(job, "report.*"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range []string{"0", "1", "2", "3"} {
		want = append(want, filepath.Join(job, "report."+r+".sqlite"))
	}
	if !slices.Equal(got, want) {
		t.Errorf("Captures(report.*) = %v, want %v", got, want)
	}
	_, err = Captures(filepath.Join(job, "report.*_cuda_memcpy_async.csv"))
	if err == nil || !strings.Contains(err.Error(), "matches no capture: 4 files") || !strings.Contains(err.Error(), "report.0_cuda_memcpy_async.csv") {
		t.Errorf("a pattern of the rule's CSVs alone: err = %v", err)
	}
}
