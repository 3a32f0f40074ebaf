package timeline

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/nsyscheck/nsyscheck/records"
)

// splitRangeThreads gives the ranges of one NVTX name opened on several
// threads a name per thread, "NAME (thread K)", K counting the threads
// from 1 in the order of their first range of the name: a step on the
// main thread and a step on a loader thread are different work, and one
// region of both would take its median from the two mixed. Each name so
// split is an assumption (AssumeRangeThreads) of the process of its first
// thread, counting its threads. Run after sortThreads, before anything
// reads the ranges' names.
func (b *Builder) splitRangeThreads(t *Timeline) {
	type nameThread struct{ name, thread int32 }
	first := map[nameThread]int64{}
	threads := map[int32][]int32{}
	var names []int32 // in the order first seen
	for _, r := range b.ranges {
		k := nameThread{r.name, r.thread}
		at, ok := first[k]
		if !ok {
			if len(threads[r.name]) == 0 {
				names = append(names, r.name)
			}
			threads[r.name] = append(threads[r.name], r.thread)
		}
		if !ok || r.start < at {
			first[k] = r.start
		}
	}
	renamed := map[nameThread]int32{}
	for _, name := range names {
		order := threads[name]
		if len(order) < 2 {
			continue
		}
		// In the order of each thread's first range of the name; a tie by
		// (pid, tid), the threads' order.
		slices.SortFunc(order, func(x, y int32) int {
			return cmp.Or(cmp.Compare(first[nameThread{name, x}], first[nameThread{name, y}]), cmp.Compare(x, y))
		})
		base := b.names[name]
		for k, th := range order {
			renamed[nameThread{name, th}] = b.intern(RangeOnThread(base, k))
		}
		if t.SplitRanges == nil {
			t.SplitRanges = map[string][]int32{}
		}
		t.SplitRanges[base] = order
		thr := t.Threads[order[0]]
		for range order { // counted once per thread
			b.assumed.add(AssumeRangeThreads, thr.PID, base, records.NoID, records.NoID, 0)
		}
	}
	if len(renamed) == 0 {
		return
	}
	for i, r := range b.ranges {
		if n, ok := renamed[nameThread{r.name, r.thread}]; ok {
			b.ranges[i].name = n
		}
	}
	t.Names = b.names
}

// RangeOnThread names the ranges of NVTX name base on the k-th thread
// (from 0) of those that open it.
func RangeOnThread(base string, k int) string { return fmt.Sprintf("%s (thread %d)", base, k+1) }

// RangeOn is the region name of the ranges of NVTX name base that thread
// (pid, tid) opens: base itself, unless base is opened on several threads
// (SplitRanges), then that thread's own name for it, "NAME (thread K)".
// A thread that opens none of base's ranges is given base.
func (t *Timeline) RangeOn(base string, pid, tid int64) string {
	for k, th := range t.SplitRanges[base] {
		if thr := t.Threads[th]; thr.PID == pid && thr.TID == tid {
			return RangeOnThread(base, k)
		}
	}
	return base
}
