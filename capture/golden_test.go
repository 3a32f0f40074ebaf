package capture

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// update makes golden-file tests rewrite their expected output:
//
//	go test ./capture -run Golden -update
var update = flag.Bool("update", false, "rewrite golden files")

// assertGolden compares got with testdata/golden/name, or rewrites that file
// when -update is given.
func assertGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
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
			path, firstDiff(string(want), string(got)))
	}
}

// firstDiff describes the first line where want and got differ.
func firstDiff(want, got string) string {
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

// goldenSummary renders a capture as stable text for golden files: the
// format, the files by base name, the missing facts, per-name call counts and
// durations, the first few calls, every summary row and the program numbers.
func goldenSummary(c *Capture) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "format: %s\n", c.Format)
	files := make([]string, len(c.Files))
	for i, f := range c.Files {
		files[i] = filepath.Base(f)
	}
	fmt.Fprintf(&b, "files: %s\n", strings.Join(files, " "))
	fmt.Fprintf(&b, "meta: %+v\n", c.Meta)
	b.WriteString("missing:\n")
	for _, g := range c.Missing {
		fmt.Fprintf(&b, "  %s: %s\n", g.Fact, g.Reason)
	}
	type agg struct {
		n     int
		total int64
	}
	per := map[string]*agg{}
	for _, call := range c.Calls {
		a := per[call.Name]
		if a == nil {
			a = &agg{}
			per[call.Name] = a
		}
		a.n++
		a.total += call.Duration()
	}
	names := make([]string, 0, len(per))
	for n := range per {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(&b, "calls: %d\n", len(c.Calls))
	for _, n := range names {
		fmt.Fprintf(&b, "  %-28s n=%-4d totalNs=%d\n", n, per[n].n, per[n].total)
	}
	for i, call := range c.Calls {
		if i == 5 {
			break
		}
		fmt.Fprintf(&b, "  call[%d] %+v\n", i, call)
	}
	fmt.Fprintf(&b, "memcpys: %d kernels: %d ranges: %d\n", len(c.Memcpys), len(c.Kernels), len(c.Ranges))
	for _, s := range c.APISummary {
		fmt.Fprintf(&b, "apiSummary %+v\n", s)
	}
	for _, s := range c.MemSummary {
		fmt.Fprintf(&b, "memSummary %+v\n", s)
	}
	for _, s := range c.RangeSummary {
		fmt.Fprintf(&b, "rangeSummary %+v\n", s)
	}
	if c.Program != nil {
		j, err := json.MarshalIndent(c.Program, "", "  ")
		if err != nil {
			j = []byte(err.Error())
		}
		fmt.Fprintf(&b, "program:\n%s\n", j)
	}
	return []byte(b.String())
}
