package audit

import (
	"context"
	"testing"

	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/timeline/timelinetest"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// A capture after the fix tells how its PyTorch program pinned: a pin
// thread that made CUDA calls pins each batch beside the main thread; else
// the pinned allocations before its first copy from pinned memory mean
// buffers pinned once, and allocations among the copies mean each batch
// pinned again by a copy. A capture that shows none of it, or a program
// not on PyTorch, tells nothing.
func TestPinShownBy(t *testing.T) {
	torch := framework.Detection{Framework: framework.PyTorch, Python: true}
	// allocs are the pinned allocations' start and end; pinThread adds
	// the allocations on a thread named as PyTorch's pin thread.
	build := func(allocs [][2]int64, pinThread bool) *timeline.Timeline {
		t.Helper()
		var c timelinetest.Capture
		for _, a := range allocs {
			tid := int64(1)
			if pinThread {
				tid = 2
			}
			c.Call(tid, "cudaHostAlloc", a[0], a[1])
			if pinThread {
				c.Calls[len(c.Calls)-1].Thread = PinThreadName
			}
		}
		for k := range int64(4) {
			at := 1000 + 100*k
			corr := c.Call(1, "cudaMemcpyAsync", at, at+5)
			c.Copy(corr, 7, vocab.CopyHtoD, vocab.MemPinned, vocab.MemDevice, 1<<20, at+10, at+60)
		}
		tl, err := c.Build(context.Background(), timeline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	for _, tc := range []struct {
		name      string
		allocs    [][2]int64
		pinThread bool
		det       framework.Detection
		want      PinShown
		ok        bool
	}{
		{name: "pinned once", allocs: [][2]int64{{0, 900}, {1150, 1160}}, det: torch, ok: true,
			want: PinShown{By: replay.PinInPlace, Clue: CluePinnedFirst, Allocs: 2, AllocNs: 910, AmongNs: 10}},
		{name: "pinned again", allocs: [][2]int64{{0, 500}, {1150, 1350}}, det: torch, ok: true,
			want: PinShown{By: replay.PinByCopy, Clue: CluePinnedAmong, Allocs: 2, AllocNs: 700, AmongNs: 200}},
		{name: "pin thread", allocs: [][2]int64{{0, 500}}, pinThread: true, det: torch, ok: true,
			want: PinShown{By: replay.PinByThread, Clue: ClueThread, Thread: PinThreadName, Calls: 1}},
		{name: "no allocation", det: torch},
		{name: "not PyTorch", allocs: [][2]int64{{1150, 1350}}, det: framework.Detection{Framework: framework.Runtime}},
	} {
		got, ok := PinShownBy(build(tc.allocs, tc.pinThread), tc.det)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
