package main

import (
	"runtime/debug"
	"testing"
	"time"
)

// TestMemLimitFor: the soft limit stays softMemoryLimit while the live heap
// is small, and keeps a quarter of headroom above a live heap past four
// fifths of it, never falling below either.
func TestMemLimitFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, softMemoryLimit},
		{100 << 20, softMemoryLimit},
		{160 << 20, softMemoryLimit},
		{200 << 20, 250 << 20},
		{400 << 20, 500 << 20},
	} {
		if got := memLimitFor(c.live); got != c.want {
			t.Errorf("live %d MiB: limit %d MiB, want %d", c.live>>20, got>>20, c.want>>20)
		}
	}
}

// TestFollowLiveHeap: a live heap past the soft limit raises it, and
// stopping the watcher leaves the limit where it was raised to.
func TestFollowLiveHeap(t *testing.T) {
	was := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(was)
	stop := followLiveHeap()
	if got := debug.SetMemoryLimit(-1); got != softMemoryLimit {
		t.Fatalf("limit %d, want %d", got, softMemoryLimit)
	}
	held := make([][]byte, 0, 300)
	for range 300 {
		b := make([]byte, 1<<20)
		for i := range b {
			b[i] = 1
		}
		held = append(held, b)
	}
	debug.FreeOSMemory() // a collection, so that the live heap is measured
	deadline := 40
	for ; deadline > 0 && debug.SetMemoryLimit(-1) == softMemoryLimit; deadline-- {
		debug.FreeOSMemory()
		waitLook()
	}
	stop()
	if got := debug.SetMemoryLimit(-1); got < 300<<20 {
		t.Errorf("with %d MiB live the limit is %d MiB", len(held), got>>20)
	}
}

// waitLook waits one look of followLiveHeap.
func waitLook() { time.Sleep(liveHeapLook) }
