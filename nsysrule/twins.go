package nsysrule

import "github.com/nsyscheck/nsyscheck/internal/nsysdb"

// twins tells the second listing of a copy the rule lists twice. In a
// capture with call stacks (nsys profile --cudabacktrace) nsys writes a
// backtrace row beside each call it took a stack of, and the rule (nsys
// 2025.3) joins the copy to it as to a second call: the copy comes again,
// in the next row, with the same start, duration, process, memory kinds
// and size, under the API's name without its _vNNNN suffix where the first
// has it, or with it where the first has not. One row is held.
type twins struct {
	prev copyKey
	api  string
	held bool
}

// copyKey is what the rule says of a copy, the API without its suffix.
type copyKey struct {
	start, duration, pid int64
	src, dst, api        string
	mb                   float64
}

// repeats reports whether f lists again the copy of the row before it.
func (t *twins) repeats(f FlaggedCopy) bool {
	k := copyKey{f.Start, f.Duration, f.PID, f.SrcKind, f.DstKind, nsysdb.StripAPIVersion(f.API), f.MB}
	if t.held && k == t.prev && f.API != t.api {
		t.held = false // a third listing would be no twin
		return true
	}
	t.prev, t.api, t.held = k, f.API, true
	return false
}
