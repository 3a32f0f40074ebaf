package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportFolders: folder names unique among the inputs and the index's
// own files (compared without case), inputs named x-2 keeping their name,
// and no hidden or control-character names.
func TestReportFolders(t *testing.T) {
	dir := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		in   []string
		want []string
	}{
		{[]string{"a/x.sqlite", "b/x.sqlite", "c/x-2.sqlite"}, []string{"x", "x-3", "x-2"}},
		{[]string{"a/x.sqlite", "b/X.sqlite"}, []string{"x", "X-2"}},
		{[]string{"Compare.PNG.sqlite", "index.sqlite", "a/index.md.sqlite"}, []string{"Compare.PNG-2", "index", "index.md-2"}},
		{[]string{"a/.sqlite", "b/..hidden.sqlite", "c/t\x1bx.sqlite"}, []string{"input", "hidden", "t_x"}},
		{[]string{"a/fleet.md.json", "b/fleet.md.json"}, []string{"fleet.md-2", "fleet.md-3"}},
	}
	for _, c := range cases {
		paths := make([]string, len(c.in))
		for i, p := range c.in {
			paths[i] = mk(p)
		}
		out := filepath.Join(t.TempDir(), "O")
		got := reportFolders(out, paths, inputIDs(paths))
		var names []string
		for _, d := range got {
			names = append(names, filepath.Base(d))
		}
		if strings.Join(names, " ") != strings.Join(c.want, " ") {
			t.Errorf("reportFolders(%q) = %q, want %q", c.in, names, c.want)
		}
	}
}
