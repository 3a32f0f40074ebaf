package report

import (
	"fmt"
	"path"
	"strings"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// callSitesOf is where the pageable copies of an audit are made, as a
// table (nil where the capture has no call stacks, or none names a site),
// and the line that says how far the sites go, or how to profile so that
// the capture names them.
func callSitesOf(au *audit.Audit) (*tableView, string) {
	cs := au.CallSites
	if cs == nil {
		// An audit read back from JSON written before call sites.
		if au.Framework.Backtraces {
			return nil, "the capture holds the call stacks of its CUDA calls: find a copy by its correlation id in Nsight Systems to see the function that made it"
		}
		return nil, howToGetStacks(au.Framework.Python)
	}
	if !cs.Stacks {
		return nil, cs.Lacks + "; " + howToGetStacks(au.Framework.Python)
	}
	unsited := ""
	if u := cs.Unsited; u.Copies > 0 {
		verb := "carry"
		if u.Copies == 1 {
			verb = "carries"
		}
		unsited = fmt.Sprintf("%d of the %s from pageable memory (%s of host time) %s no call stack: nsys takes one only of a call longer than its threshold (--cudabacktrace=all:NS, 80 µs unless set)",
			u.Copies, nounsOf(cs.Pageable.Copies, "copy"), ns(u.HostNs), verb)
	}
	if len(cs.Sites) == 0 {
		return nil, "the capture holds call stacks, but " + orWords(unsited, "none of its copies from pageable memory has one") + "; " + howToGetStacks(au.Framework.Python)
	}
	t := &tableView{Title: "Where the copies from pageable memory are made: the first function of each call's stack outside CUDA, the profiler and the C/C++ runtime",
		Head:  []string{"call site", "dir", "copies", "bytes", "host time", "share", "longest"},
		Right: []bool{false, false, true, true, true, true, true}}
	for _, s := range cs.Sites {
		t.Rows = append(t.Rows, []string{siteWords(s), string(s.Direction), fmt.Sprint(s.Copies), audit.FormatMB(s.Bytes), ns(s.HostNs),
			auditPct(s.Share), fmt.Sprintf("corr %d", s.Longest)})
	}
	t.Note = "share: of the host time the calls of every copy from pageable memory held; longest: the correlation id of the site's call that held the host longest"
	line := "the sites are named from the call stacks nsys took, by symbol: nsys records no source line, and with nsys 2025.3 no Python frame reaches the export even with " +
		nsysdb.PythonStacksHint + "; find a copy by its correlation id in Nsight Systems to see its whole stack"
	if !au.Framework.Python {
		line = "the sites are named from the call stacks nsys took, by symbol: nsys records no source line; find a copy by its correlation id in Nsight Systems to see its whole stack"
	}
	if unsited != "" {
		line += "; " + unsited
	}
	return t, line
}

// howToGetStacks says how to profile so that the capture holds call
// stacks.
func howToGetStacks(python bool) string {
	flags := nsysdb.StacksHint
	if python {
		flags += " " + nsysdb.PythonStacksHint
	}
	return "to name the function that makes each copy, profile again with " + flags +
		": without CPU sampling nsys takes no call stacks (it warns \"CUDA backtraces will not be collected because CPU sampling is disabled\"), and its default threshold of 80 µs misses shorter calls"
}

// siteWords names a call site: the Python method or the function Python
// called, then the function that made the copies, each with its module.
func siteWords(s audit.CallSite) string {
	site := frameWords(s.Frame)
	switch {
	case s.Entry != nil && s.Method != "":
		return s.Method + ": " + frameWords(*s.Entry) + " → " + site
	case s.Entry != nil:
		return frameWords(*s.Entry) + " → " + site
	case s.Method != "":
		return s.Method + " (" + site + ")"
	}
	return site
}

// frameWords is a frame's function without its parameter list, and the
// base name of its module.
func frameWords(f audit.Frame) string {
	if f.Unresolved {
		return "a function without a symbol in " + path.Base(f.Module) + " (build it unstripped, with -g, to name it)"
	}
	g := f
	g.Symbol = shortSymbol(f.Symbol)
	return g.Name()
}

// shortSymbol cuts a demangled C++ symbol's parameter list (and a const
// after it): "ns::f(int, char const*) const" is "ns::f".
func shortSymbol(sym string) string {
	s := strings.TrimSuffix(strings.TrimSpace(sym), " const")
	if !strings.HasSuffix(s, ")") {
		return sym
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				if i == 0 {
					return sym
				}
				return s[:i]
			}
		}
	}
	return sym
}

// orWords is s, or else when s is empty.
func orWords(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}
