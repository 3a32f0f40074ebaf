package audit

import (
	"cmp"
	"slices"
	"sort"

	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/timeline"
)

// Unresolved is what a region's replay rests on that the capture cannot
// say: waits on an event no recording of which is in the trace before
// them (timeline.AssumeEventUnrecorded, the capture's
// timeline.Timeline.Unresolved). The replay takes each to wait for no GPU
// work, so a time replayed across one is a guess, and a check cannot
// judge the region by it.
type Unresolved struct {
	// Waits counts the unresolved waits made inside the region's
	// instances (by its process, between a range's push and pop; all of
	// them for replay.CaptureRegion).
	Waits int
	// EventRecords counts the CUDA event recordings the capture holds;
	// NoTable says the export has no CUPTI_ACTIVITY_KIND_CUDA_EVENT table
	// at all.
	EventRecords int
	NoTable      bool
}

// unresolvedOf counts, per region name (names), the unresolved waits of
// tl inside its instances; regions with none are not in the map.
func unresolvedOf(tl *timeline.Timeline, names []string) map[string]Unresolved {
	if len(tl.Unresolved) == 0 {
		return nil
	}
	base := Unresolved{EventRecords: tl.EventRecords}
	for _, g := range tl.Gaps {
		if g.Fact == records.FactEvents {
			base.NoTable = true
		}
	}
	waits := slices.Clone(tl.Unresolved)
	slices.SortFunc(waits, func(x, y int32) int {
		return cmp.Or(cmp.Compare(tl.PID(x), tl.PID(y)), cmp.Compare(tl.Calls.Start[x], tl.Calls.Start[y]))
	})
	per := map[string]int{replay.CaptureRegion: len(waits)}
	for _, r := range tl.Ranges {
		pid := tl.Threads[r.Thread].PID
		lo := sort.Search(len(waits), func(k int) bool {
			c := waits[k]
			return tl.PID(c) > pid || tl.PID(c) == pid && tl.Calls.Start[c] >= r.Start
		})
		hi := lo + sort.Search(len(waits)-lo, func(k int) bool {
			c := waits[lo+k]
			return tl.PID(c) != pid || tl.Calls.Start[c] > r.End
		})
		if hi > lo {
			per[replay.RegionOfRange(tl.Name(r.Name))] += hi - lo
		}
	}
	out := map[string]Unresolved{}
	for _, n := range names {
		if k := per[n]; k > 0 {
			u := base
			u.Waits = k
			out[n] = u
		}
	}
	return out
}
