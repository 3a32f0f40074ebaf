package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportHelpNamesItsFiles: every file report writes, for a capture
// and for an audit's JSON, is named in report --help, and the help names
// no plot file the report does not write.
func TestReportHelpNamesItsFiles(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	code, help, _ := runMain(t, []string{"report", "--help"})
	if code != 0 {
		t.Fatalf("report --help: exit %d", code)
	}
	help = strings.Join(strings.Fields(help), " ")
	dir := t.TempDir()
	auditJSON := filepath.Join(dir, "audit.json")
	code, out, errs := runMain(t, []string{"audit", filepath.Join("..", "..", "testdata", "captures", "pipeline-pageable"),
		filepath.Join("..", "..", "testdata", "captures", "pipeline-pinned"), "--format", "json"})
	if code != 0 {
		t.Fatalf("audit: exit %d: %s", code, errs)
	}
	if err := os.WriteFile(auditJSON, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	for _, c := range []struct{ name, input string }{
		// A capture's report: docs/example-report, which TestExampleReport
		// holds to what report writes for h200-pinned, file for file.
		{"capture", ""},
		{"audit", auditJSON},
	} {
		to := filepath.Join("..", "..", exampleReport)
		if c.input != "" {
			to = filepath.Join(dir, c.name)
			if code, _, errs := runMain(t, []string{"report", c.input, "-o", to}); code != 0 {
				t.Fatalf("report %s: exit %d: %s", c.input, code, errs)
			}
		}
		files, err := os.ReadDir(to)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			name := f.Name()
			if strings.HasPrefix(name, ".") {
				continue // the folder's record of its capture, named in the help as such
			}
			written[name] = true
			if strings.HasSuffix(name, ".svg") && strings.Contains(help, "an .svg of each plot") {
				continue
			}
			if !strings.Contains(help, name) {
				t.Errorf("report of the %s writes %s; report --help does not name it", c.name, name)
			}
		}
	}
	for _, w := range strings.Fields(help) {
		w = strings.Trim(w, ",.()")
		if strings.HasSuffix(w, ".png") && w != "compare.png" && !written[w] {
			t.Errorf("report --help names %s, which neither report writes", w)
		}
	}
}
