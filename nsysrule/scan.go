package nsysrule

import (
	"sort"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// The rule's definition, applied to the records a reader streams, so that
// its answer is had from a scan the audit makes anyway rather than from a
// run of nsys analyze. nsys 2025.3's cuda_memcpy_async lists each copy of
// the copy table joined to its call in the runtime table (correlation id,
// within the process) whose call is a runtime API asynchronous copy (its
// name LIKE 'cudaMemcpy%Async%', as SQL compares: ASCII case folded; the
// driver API's cuMemcpy*Async are passed over) and whose source or
// destination is pageable memory, whatever the direction; the longest copy
// first, then by start. testdata/programs/nsys-rule-standin.sh spells the
// same definition in SQL, and TestRuleStandIn holds it to the real rule's
// output of the shipped captures.

// Lists reports whether the rule lists the copy o: a copy with its call
// (o.Call, nil when the trace holds none), of a runtime API asynchronous
// copy, from or to pageable memory.
func Lists(o *records.Op) bool {
	if o.Kind != records.OpCopy || o.Call == nil {
		return false
	}
	if o.Src != vocab.MemPageable && o.Dst != vocab.MemPageable {
		return false
	}
	return AsyncCopyAPI(o.Call.Name)
}

// runtimeCopy and async are the two parts of the rule's pattern
// 'cudaMemcpy%Async%', lower case.
const (
	runtimeCopy = "cudamemcpy"
	async       = "async"
)

// AsyncCopyAPI reports whether the rule takes a call of this API (with or
// without its _vNNNN suffix) for an asynchronous copy: its name matches
// 'cudaMemcpy%Async%' as SQL's LIKE does, ASCII letters in either case.
func AsyncCopyAPI(name string) bool {
	if len(name) < len(runtimeCopy) || !strings.EqualFold(name[:len(runtimeCopy)], runtimeCopy) {
		return false
	}
	rest := name[len(runtimeCopy):]
	for i := 0; i+len(async) <= len(rest); i++ {
		if strings.EqualFold(rest[i:i+len(async)], async) {
			return true
		}
	}
	return false
}

// RowOf is the row the rule writes for a copy it lists (Lists), as the
// records tell it: the memory kinds by nsys's labels (a static device or
// managed buffer, which the records do not tell apart, as "Device" and
// "Managed"), the size in MB as the rule rounds it (three decimals), the
// API without its _vNNNN suffix.
func RowOf(o *records.Op) FlaggedCopy {
	f := FlaggedCopy{Start: o.Start, Duration: o.End - o.Start, SrcKind: memLabels[o.Src], DstKind: memLabels[o.Dst],
		MB: RoundMB(o.Bytes), PID: o.PID, Sized: true}
	if o.Call != nil {
		// The process of the call, which a copy joins within its process:
		// a folder of CSV reports names it on the call alone.
		f.API, f.PID = o.Call.Name, o.Call.PID
	}
	return f
}

// memLabels are nsys's labels of the memory kinds (ENUM_CUDA_MEM_KIND's
// label column), as the rule's Src Kind and Dst Kind columns write them.
var memLabels = map[vocab.MemKind]string{
	vocab.MemPageable: "Pageable", vocab.MemPinned: "Pinned", vocab.MemDevice: "Device", vocab.MemArray: "Array",
	vocab.MemManaged: "Managed", vocab.MemUnknown: "Unknown",
}

// RoundMB is a copy's size as the rule's Bytes (MB) column holds it:
// bytes / 10^6, rounded to three decimals.
func RoundMB(bytes int64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(bytes)/1e6, 'f', 3, 64), 64)
	return v
}

// SortRows puts rows in the rule's order: the longest copy first, then
// the earliest start.
func SortRows(rows []FlaggedCopy) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		return a.Duration > b.Duration || a.Duration == b.Duration && a.Start < b.Start
	})
}
