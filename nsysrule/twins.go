package nsysrule

import "github.com/nsyscheck/nsyscheck/internal/nsysdb"

// dropTwins leaves out the second listing of a copy the rule lists twice.
// In a capture with call stacks (nsys profile --cudabacktrace) nsys
// writes a backtrace row beside each call it took a stack of, and the rule
// (nsys 2025.3) reads it as a second call: the copy comes again with the
// same start, duration, process, memory kinds and size, under the API's
// name without its _vNNNN suffix where the first has it, or with it where
// the first has not.
func dropTwins(rows []FlaggedCopy) []FlaggedCopy {
	type copyKey struct {
		start, duration, pid int64
		src, dst, api        string
		mb                   float64
	}
	keyOf := func(f FlaggedCopy) copyKey {
		return copyKey{f.Start, f.Duration, f.PID, f.SrcKind, f.DstKind, nsysdb.StripAPIVersion(f.API), f.MB}
	}
	seen := make(map[copyKey]string, len(rows))
	out := rows[:0]
	for _, f := range rows {
		k := keyOf(f)
		if api, ok := seen[k]; ok && api != f.API {
			continue
		}
		seen[k] = f.API
		out = append(out, f)
	}
	return out
}
