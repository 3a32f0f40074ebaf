// Package golden compares test output with golden files. Run a package's
// tests with -update to rewrite its golden files from what they produce:
//
//	go test ./capture ./predictions ./report -update
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Updating reports whether -update was given, for tests that rewrite files
// other than golden files (documentation made from real output).
func Updating() bool { return *update }

// Assert compares got with the golden file at path, or rewrites that file
// when -update is given.
func Assert(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended)\n%s",
			path, FirstDiff(string(want), string(got)))
	}
}

// FirstDiff describes the first line where want and got differ.
func FirstDiff(want, got string) string {
	wl := strings.Split(want, "\n")
	gl := strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, w, g)
		}
	}
	return "(no line differs; line endings?)"
}
