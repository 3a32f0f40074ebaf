package sqlitefile

import (
	"os"
	"strings"
	"testing"
)

// TestNoCgo checks what a build without cgo says about an SQLite input: the
// build lacks SQLite and how to fix it, never that the capture is damaged;
// Open refuses before SQLite's stub would fail on the file.
func TestNoCgo(t *testing.T) {
	defer func(w bool) { works = w }(works)
	works = false
	path := "../../testdata/captures/h200-pinned/pinned.sqlite"
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, err := range []error{Available(path), func() error { _, cleanup, err := Open(path, f); cleanup(); return err }()} {
		if err == nil {
			t.Fatalf("%s: opened without SQLite", path)
		}
		msg := err.Error()
		for _, want := range []string{"built without cgo (CGO_ENABLED=0)", "the capture itself is not at fault", "gcc", "CGO_ENABLED=1"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q lacks %q", msg, want)
			}
		}
		for _, bad := range []string{"damaged", "truncated", "export it again"} {
			if strings.Contains(msg, bad) {
				t.Errorf("error %q blames the capture (%q)", msg, bad)
			}
		}
	}
}
