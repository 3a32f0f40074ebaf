package audit

import (
	"cmp"
	"github.com/nsyscheck/nsyscheck/capture"
	"slices"
	"strings"

	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Sizes are the audit's size buckets as the replay takes its costs over
// them.
var Sizes = replay.Sizes{Of: BucketOf, Name: func(i int) string { return Buckets[i].Name }}

// Coster is the one rule for what a copy costs from pinned memory, each
// part (the call's host time, the copy's GPU time) from the first that
// knows it: the capture's own pinned copies of its direction and size
// bucket (a pinned async call's time from its pinned async calls of any
// size), else the rates measured outside it (a run folder's timed copies
// and pinned async call, else the link for the GPU time), else, for the
// call, the capture's own kernel launch calls.
func Coster(tl *timeline.Timeline, rates *Rates) replay.Chain {
	return replay.Chain{replay.NewCaptureCoster(tl, Sizes), rates.Coster(), replay.NewLaunchCoster(tl)}
}

// Coster is the replay's coster of the rates; nil rates cost nothing.
func (r *Rates) Coster() *replay.RateCoster {
	if r == nil {
		return replay.NewRateCoster(nil, "", 0, 0, "")
	}
	return replay.NewRateCoster(r.Copies, r.Source, r.AsyncCallNs, r.LinkGBps, FromLink)
}

// PinByOf is how a program on the framework detected is to pin its
// buffers: PyTorch pins a batch by copying it into pinned memory
// (tensor.pin_memory() of each new tensor), and a DataLoader whose workers
// make the batches (det.LoaderWorkers) does it with pin_memory=True on a
// pin thread of the main process's interpreter (replay.PinByThread); every
// other framework allocates its buffers pinned (cudaMallocHost,
// cuMemHostAlloc, cupyx.empty_pinned, device_put to pinned_host memory).
func PinByOf(det framework.Detection) replay.PinBy {
	switch {
	case det.Framework == framework.PyTorch && det.LoaderWorkers > 0:
		return replay.PinByThread
	case det.Framework == framework.PyTorch:
		return replay.PinByCopy
	}
	return replay.PinInPlace
}

// ReplayOptions are the replay's options for a capture: the one cost rule
// (Coster, made by the replay beside its model) and the way to pin, pinBy,
// as PinByOf or the user chose it.
func ReplayOptions(tl *timeline.Timeline, rates *Rates, pinBy replay.PinBy) replay.Options {
	return replay.Options{NewCoster: func() replay.Coster { return Coster(tl, rates) }, Sizes: Sizes, PinBy: pinBy}
}

// Replayed is what the audit takes from the replay of a capture's timeline.
type Replayed struct {
	Timeline  *timeline.Timeline
	Result    *replay.Result
	Framework framework.Detection
	// PinByFrom says who chose the way to pin; Shown, with PinByAfter,
	// what the capture after showed of it.
	PinByFrom PinChooser
	Shown     *PinShown
	// Link is where the rates' link rate came from, nil without rates.
	Link *LinkOrigin
}

// PinChooser says who chose the way to pin.
type PinChooser int

// Who chose the way to pin.
const (
	PinByFramework PinChooser = iota // the framework the capture ran on (PinByOf)
	PinByFlag                        // the user, with --pin-by
	PinByAfter                       // the capture after the fix, as it shows how it pinned (PinShownBy)
)

// Replay says how the what-if pinned the capture's copies.
type Replay struct {
	// PinBy is how the buffers were taken to be pinned; PinByFrom who
	// chose; Shown, with PinByAfter, what the capture after showed.
	PinBy     replay.PinBy
	PinByFrom PinChooser
	Shown     *PinShown
	// Recosted, Uncosted and Kept count the pageable copies re-costed as
	// pinned, left as measured for want of a cost, and kept as measured
	// because no copy call made them; Forced the dependencies a replay
	// had to take as measured.
	Recosted int
	Uncosted int
	Kept     int
	Forced   int
	// Costs are the pinned costs of each group of copies.
	Costs []replay.CostUse
	// Assumptions say where the timeline or the what-if assumed what the
	// capture does not say.
	Assumptions []timeline.Assumption
	// Misfits are the classes of calls and ops the capture shows latest
	// against the model, latest first.
	Misfits []replay.Misfit
}

// PinAllocs are the calls of a capture that allocate or register pinned
// host memory (cudaHostAlloc, cudaMallocHost, cudaHostRegister,
// cuMemHostAlloc, ...): what pinning costs.
type PinAllocs struct {
	Calls  int64
	HostNs int64
	// ByAPI splits them by API, the longest first.
	ByAPI []APITime
}

// APITime is the calls of one API and the host time they held.
type APITime struct {
	API    string
	Calls  int64
	HostNs int64
}

// pinAllocsOf sums the timeline's calls that allocate pinned memory.
func pinAllocsOf(tl *timeline.Timeline) PinAllocs {
	by := map[int32]*APITime{}
	for i := range tl.Calls.Name {
		n := tl.Calls.Name[i]
		if timeline.RoleOf(tl.Name(n)) != timeline.RoleHostAlloc {
			continue
		}
		a := by[n]
		if a == nil {
			a = &APITime{API: tl.Name(n)}
			by[n] = a
		}
		a.Calls++
		a.HostNs += tl.Calls.Duration(int32(i))
	}
	p := PinAllocs{ByAPI: []APITime{}}
	for _, a := range by {
		p.Calls += a.Calls
		p.HostNs += a.HostNs
		p.ByAPI = append(p.ByAPI, *a)
	}
	slices.SortFunc(p.ByAPI, func(x, y APITime) int { return cmp.Or(cmp.Compare(y.HostNs, x.HostNs), cmp.Compare(x.API, y.API)) })
	return p
}

// kernelsOf counts the timeline's kernel launches by name.
func kernelsOf(tl *timeline.Timeline) map[string]int64 {
	out := map[string]int64{}
	for j, k := range tl.Ops.Kind {
		if k == timeline.OpKernel {
			out[tl.Name(tl.Ops.Name[j])]++
		}
	}
	return out
}

// unlaunched counts the timeline's kernel launch calls (cudaLaunchKernel,
// cuLaunchKernel, cudaLaunchKernelExC, ...) when no call of the timeline
// is tied to a kernel it ran (a launch, or a graph's): a replay that cannot
// tell when a kernel may start is blind to the compute beside the copies.
// 0 when some kernel is tied to its call, or there is no launch.
func unlaunched(tl *timeline.Timeline) int64 {
	var n int64
	for c, name := range tl.Calls.Name {
		for _, j := range tl.OpsOf(int32(c)) {
			if tl.Ops.Kind[j] == timeline.OpKernel {
				return 0
			}
		}
		if api := tl.Name(name); strings.HasPrefix(api, "cudaLaunch") || strings.HasPrefix(api, "cuLaunch") {
			n++
		}
	}
	return n
}

// setReplay takes what the audit holds of the replay.
func (au *Audit) setReplay(r Replayed) {
	res := r.Result
	au.Framework = r.Framework
	au.Link = r.Link
	au.Regions = regionsOf(res.Regions)
	names := make([]string, len(au.Regions))
	for i := range au.Regions {
		names[i] = au.Regions[i].Name
	}
	loading := loadingOf(r.Timeline, names)
	for i := range au.Regions {
		if l, ok := loading[au.Regions[i].Name]; ok {
			au.Regions[i].Loading = &l
		}
	}
	unresolved := unresolvedOf(r.Timeline, names, au.Format != string(capture.FormatCSV))
	for i := range au.Regions {
		if u, ok := unresolved[au.Regions[i].Name]; ok {
			au.Regions[i].Unresolved = &u
		}
	}
	au.kernels = kernelsOf(r.Timeline)
	why := &NotPredicted{}
	if res.Recosted == 0 {
		why.Uncosted = res.Uncosted
	}
	why.Launches = unlaunched(r.Timeline)
	if why.Uncosted > 0 || why.Launches > 0 {
		for i := range au.Regions {
			au.Regions[i].unpredict(why)
		}
	}
	unpredictCallless(au.Regions)
	au.Replay = &Replay{PinBy: res.PinBy, PinByFrom: r.PinByFrom, Shown: r.Shown, Recosted: res.Recosted, Uncosted: res.Uncosted,
		Kept: res.Kept, Forced: res.Forced, Costs: res.Costs, Assumptions: res.Assumptions, Misfits: res.Misfits}
	if au.Replay.Costs == nil {
		au.Replay.Costs = []replay.CostUse{}
	}
	if au.Replay.Assumptions == nil {
		au.Replay.Assumptions = []timeline.Assumption{}
	}
	if au.Replay.Misfits == nil {
		au.Replay.Misfits = []replay.Misfit{}
	}
	au.PinAllocs = pinAllocsOf(r.Timeline)
	for _, c := range au.Classes {
		if c.Range != "" {
			c.Range = r.Timeline.RangeOn(c.Range, c.PID, c.TID)
		}
	}
	au.shareByRegion()
}

// shareByRegion gives each class its share of its region (Region.ShareOf),
// its NVTX range or the whole capture (replay.CaptureRegion) for a class
// outside any range, or inside a range that is no region (one never
// closed before the capture ended, which the regions leave out): a share
// of nothing would read as none.
func (au *Audit) shareByRegion() {
	regions := au.RegionIndex()
	for _, c := range au.Classes {
		c.HostShare = 0
		if r := regions.ofClass(c); r != nil {
			c.HostShare = r.ShareOf(float64(c.HostNs) / 1e6)
		}
	}
}

// ofClass is the region a class's share is of (shareByRegion): its NVTX
// range's, else the whole capture's; nil where the audit has neither.
func (x RegionIndex) ofClass(c *Class) *Region {
	if r := x.Region(replay.RegionOfRange(c.Range)); r != nil {
		return r
	}
	return x.Region(replay.CaptureRegion)
}

// hostDevice reports whether a copy direction crosses the host-device link.
func hostDevice(d vocab.CopyKind) bool { return d == vocab.CopyHtoD || d == vocab.CopyDtoH }
