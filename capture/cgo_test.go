package capture

import (
	"strings"
	"testing"
)

// TestNoCgo checks what a build without cgo says about an SQLite input: the
// build lacks SQLite and how to fix it, never that the capture is damaged.
func TestNoCgo(t *testing.T) {
	defer func(w bool) { sqliteWorks = w }(sqliteWorks)
	sqliteWorks = false
	for _, path := range []string{"../testdata/captures/h200-pinned/pinned.sqlite", "../testdata/captures/h200-pinned"} {
		_, err := Load(path, Options{})
		if err == nil {
			t.Fatalf("%s: loaded without SQLite", path)
		}
		msg := err.Error()
		for _, want := range []string{"built without cgo (CGO_ENABLED=0)", "the capture itself is not at fault", "gcc", "CGO_ENABLED=1"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: error %q lacks %q", path, msg, want)
			}
		}
		for _, bad := range []string{"damaged", "truncated", "export it again"} {
			if strings.Contains(msg, bad) {
				t.Errorf("%s: error %q blames the capture (%q)", path, msg, bad)
			}
		}
	}
}
