package audit

import (
	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/timeline"
)

// PinThreadName is the thread PyTorch's DataLoader pins each batch on
// (pin_memory=True with worker processes).
const PinThreadName = "pt_data_pin"

// PinnedOnceShare is the largest share of a capture's pinned allocations'
// host time that may fall among its copies from pinned memory for the
// buffers to count as pinned once, before the copies, and reused.
const PinnedOnceShare = 0.1

// PinShown is the way to pin a capture of a PyTorch program shows it took,
// and what showed it. A capture after the fix tells it: a pin thread that
// made CUDA calls (PyTorch's pt_data_pin) pins each batch beside the main
// thread; else the pinned allocations (cudaHostAlloc, ...) tell whether
// the buffers were pinned before the copies began and reused (at most
// PinnedOnceShare of their host time among the copies), or pinned again as
// the copies went on, each by a copy into pinned memory.
type PinShown struct {
	// By is the way to pin shown.
	By replay.PinBy
	// Clue says what showed it.
	Clue PinClue
	// Thread is the pin thread's name and Calls its CUDA calls
	// (ClueThread).
	Thread string
	Calls  int
	// Allocs is how many pinned allocations the capture made and AllocNs
	// their host time; AmongNs is the part of it made while the copies
	// from pinned memory ran, from the first such host-device copy call's
	// start to the last one's.
	Allocs  int
	AllocNs int64
	AmongNs int64
}

// PinClue is what in a capture showed the way to pin.
type PinClue string

// What shows the way to pin.
const (
	ClueThread      PinClue = "pin-thread"   // a pin thread made CUDA calls: PinByThread
	CluePinnedFirst PinClue = "pinned-first" // the allocations came before the copies: PinInPlace
	CluePinnedAmong PinClue = "pinned-among" // the allocations went on among the copies: PinByCopy
)

// PinShownBy is the way to pin the capture tl shows, ok false when it
// shows none: a program not on PyTorch (whose way is the framework's,
// PinByOf), or one with no host-device copy from pinned memory or no
// pinned allocation.
func PinShownBy(tl *timeline.Timeline, det framework.Detection) (PinShown, bool) {
	if det.Framework != framework.PyTorch {
		return PinShown{}, false
	}
	for _, th := range tl.Threads {
		if th.Name != timeline.None && tl.Name(th.Name) == PinThreadName && th.Last > th.First {
			return PinShown{By: replay.PinByThread, Clue: ClueThread, Thread: PinThreadName, Calls: int(th.Last - th.First)}, true
		}
	}
	first, last := int64(-1), int64(-1)
	o := &tl.Ops
	for j := range o.Kind {
		op := int32(j)
		c := o.Call[j]
		if c == timeline.None || !o.Dir[j].HostDevice() || o.HostMem(op) != timeline.MemPinned {
			continue
		}
		s := tl.Calls.Start[c]
		if first < 0 || s < first {
			first = s
		}
		last = max(last, s)
	}
	if first < 0 {
		return PinShown{}, false
	}
	var p PinShown
	for i, name := range tl.Calls.Name {
		if timeline.RoleOf(tl.Name(name)) != timeline.RoleHostAlloc {
			continue
		}
		ns := tl.Calls.Duration(int32(i))
		p.Allocs++
		p.AllocNs += ns
		if s := tl.Calls.Start[i]; s >= first && s <= last {
			p.AmongNs += ns
		}
	}
	if p.Allocs == 0 {
		return PinShown{}, false
	}
	p.By, p.Clue = replay.PinInPlace, CluePinnedFirst
	if float64(p.AmongNs) > PinnedOnceShare*float64(p.AllocNs) {
		p.By, p.Clue = replay.PinByCopy, CluePinnedAmong
	}
	return p, true
}
