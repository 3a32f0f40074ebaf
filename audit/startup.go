package audit

import (
	"slices"
	"strings"

	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/timeline"
)

// LoadsModule reports whether an API loads device code: a module or
// library of kernels (cuModuleLoad*, cuLibraryLoad*, cudaLibraryLoad*).
// A program pays it once, at a kernel's first launch with lazy loading,
// and it differs from run to run by whether the driver compiled the code
// or found it compiled in its cache.
func LoadsModule(api string) bool {
	return strings.HasPrefix(api, "cuModuleLoad") || strings.HasPrefix(api, "cuLibraryLoad") ||
		strings.HasPrefix(api, "cudaLibraryLoad")
}

// loadingOf is the host time the calls that load device code (LoadsModule)
// held, per region of names (replay.CaptureRegion excepted): in the median
// instance of each NVTX range name and in all its instances, counting the
// calls of the range's process that began inside it on any of its threads.
func loadingOf(tl *timeline.Timeline, names []string) map[string]replay.Outside {
	var loads []int32
	for _, c := range tl.ByStart {
		if LoadsModule(tl.Name(tl.Calls.Name[c])) {
			loads = append(loads, c)
		}
	}
	per := map[string][]float64{}
	for _, r := range tl.Ranges {
		pid := tl.Threads[r.Thread].PID
		var ns int64
		for _, c := range loads {
			if tl.PID(c) == pid && tl.Calls.Start[c] >= r.Start && tl.Calls.Start[c] <= r.End {
				ns += tl.Calls.Duration(c)
			}
		}
		n := replay.RegionOfRange(tl.Name(r.Name))
		per[n] = append(per[n], float64(ns)/1e6)
	}
	out := map[string]replay.Outside{}
	for _, n := range names {
		v := per[n]
		if slices.Max(append(v, 0)) == 0 {
			continue
		}
		var total float64
		for _, x := range v {
			total += x
		}
		slices.Sort(v)
		med := v[len(v)/2]
		if len(v)%2 == 0 {
			med = (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		out[n] = replay.Outside{MedianMs: med, TotalMs: total}
	}
	return out
}

// loadingIn is the region's loading in measure m (the region before's,
// for the region after it is compared with), 0 when none.
func (r *Region) loadingIn(m Measure) float64 {
	if r.Loading == nil {
		return 0
	}
	if m == MeasureSpan {
		return r.Loading.TotalMs
	}
	return r.Loading.MedianMs
}
