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
// timeline.Timeline.Unresolved), and, in an SQLite export, waits on an
// event without the synchronisation record that names it
// (timeline.AssumeEventUnknown, timeline.Timeline.Unnamed), or naming a
// recording the trace does not hold (timeline.AssumeEventRecordingUnmatched,
// timeline.Timeline.Unmatched; CSV reports
// hold no such record at all, and their waits are replayed as
// docs/audit.md says). The replay takes each to wait for no GPU work, so
// a time replayed across one is a guess, and a check cannot judge the
// region by it.
type Unresolved struct {
	// Waits counts the unresolved waits made inside the region's
	// instances (by its process, between a range's push and pop; all of
	// them for replay.CaptureRegion).
	Waits int
	// Unnamed counts those of Waits without their synchronisation record;
	// NoSyncTable says the export has no
	// CUPTI_ACTIVITY_KIND_SYNCHRONIZATION table at all.
	Unnamed     int
	NoSyncTable bool
	// Unmatched counts those of Waits whose synchronisation record names
	// a recording of their event (eventSyncId) the trace does not hold
	// before them: replayed as waiting for the event's last recording.
	Unmatched int
	// EventRecords counts the CUDA event recordings the capture holds;
	// NoTable says the export has no CUPTI_ACTIVITY_KIND_CUDA_EVENT table
	// at all.
	EventRecords int
	NoTable      bool
}

// unresolvedOf counts, per region name (names), the unresolved waits of
// tl inside its instances (with unnamed, those without their
// synchronisation record too); regions with none are not in the map.
func unresolvedOf(tl *timeline.Timeline, names []string, unnamed bool) map[string]Unresolved {
	waits := append(slices.Clone(tl.Unresolved), tl.Unmatched...)
	kind := map[int32]int{} // 1 unnamed, 2 unmatched
	for _, c := range tl.Unmatched {
		kind[c] = 2
	}
	if unnamed {
		waits = append(waits, tl.Unnamed...)
		for _, c := range tl.Unnamed {
			kind[c] = 1
		}
	}
	if len(waits) == 0 {
		return nil
	}
	base := Unresolved{EventRecords: tl.EventRecords}
	for _, g := range tl.Gaps {
		switch g.Fact {
		case records.FactEvents:
			base.NoTable = true
		case records.FactSync:
			base.NoSyncTable = true
		}
	}
	slices.SortFunc(waits, func(x, y int32) int {
		return cmp.Or(cmp.Compare(tl.PID(x), tl.PID(y)), cmp.Compare(tl.Calls.Start[x], tl.Calls.Start[y]))
	})
	count := func(ws []int32) [3]int {
		n := [3]int{len(ws), 0, 0}
		for _, c := range ws {
			if k := kind[c]; k > 0 {
				n[k]++
			}
		}
		return n
	}
	per := map[string][3]int{replay.CaptureRegion: count(waits)}
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
			n, in := replay.RegionOfRange(tl.Name(r.Name)), count(waits[lo:hi])
			per[n] = [3]int{per[n][0] + in[0], per[n][1] + in[1], per[n][2] + in[2]}
		}
	}
	out := map[string]Unresolved{}
	for _, n := range names {
		if k := per[n]; k[0] > 0 {
			u := base
			u.Waits, u.Unnamed, u.Unmatched = k[0], k[1], k[2]
			out[n] = u
		}
	}
	return out
}
