package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/golden"
)

// exampleReport is the report README links to, of the shipped H200 capture,
// relative to the repository root.
const exampleReport = "docs/example-report"

// TestExampleReport regenerates docs/example-report the way a user would
// (nsyscheck report testdata/captures/h200-pinned -o DIR) and compares
// every file, plots included, byte for byte; -update rewrites the folder.
func TestExampleReport(t *testing.T) {
	out := t.TempDir()
	// From the repository root, so the report names the input as a user
	// there would.
	t.Chdir("../..")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"report", "testdata/captures/h200-pinned", "-o", out}, Streams{In: strings.NewReader(""), Out: &stdout, Err: &stderr}); code != exitHeld {
		t.Fatalf("report: exit %d: %s", code, stderr.String())
	}
	made := listFiles(t, out)
	if golden.Updating() {
		if err := os.RemoveAll(exampleReport); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(exampleReport, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range made {
			if err := os.WriteFile(filepath.Join(exampleReport, n), readFile(t, filepath.Join(out, n)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	have := listFiles(t, exampleReport)
	if strings.Join(made, " ") != strings.Join(have, " ") {
		t.Fatalf("docs/example-report holds %v; the report command writes %v (run with -update)", have, made)
	}
	for _, n := range made {
		if !bytes.Equal(readFile(t, filepath.Join(out, n)), readFile(t, filepath.Join(exampleReport, n))) {
			t.Errorf("docs/example-report/%s differs from what the report command writes now (run with -update if intended)", n)
		}
	}
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("list %s: %v", dir, err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}
