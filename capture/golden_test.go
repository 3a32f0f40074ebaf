package capture

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/golden"
)

// assertGolden compares got with testdata/golden/name, or rewrites that file
// when -update is given.
func assertGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Assert(t, filepath.Join("testdata", "golden", name), got)
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
	fmt.Fprintf(&b, "memcpys: %d kernels: %d ranges: %d\n", c.Memcpys.Len(), len(c.Kernels), len(c.Ranges))
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
