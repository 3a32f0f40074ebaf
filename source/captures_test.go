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
