package main

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// softMemoryLimit is the heap size past which Go's collector works harder
// rather than let the heap grow to twice what is live (GOGC's default): on
// the 600,000-copy capture it keeps verify and audit near 230 MiB instead of
// 290-300 MiB, at the same CPU time. It is soft, and it follows a live heap
// that outgrows it (memLimitFor). GOMEMLIMIT in the environment replaces it.
const softMemoryLimit = 200 << 20

// liveHeapLook is how often followLiveHeap looks at the live heap.
const liveHeapLook = 50 * time.Millisecond

// memLimitFor is the soft memory limit for a live heap of live bytes (what
// the last collection marked): softMemoryLimit, or a quarter above the live
// heap once that is past four fifths of it. A limit the live heap nears
// leaves the collector no room and it runs almost without pause (verify of
// 1.8M copies: 12.4 s of CPU against 5.9 s with no limit); a quarter of
// headroom keeps the heap within 1.25 times what is live, as GOGC=25 would,
// and only where it is that large.
func memLimitFor(live uint64) int64 {
	l := live + live/4
	if l < softMemoryLimit {
		return softMemoryLimit
	}
	return int64(l)
}

// followLiveHeap sets the soft memory limit and raises it as the live heap
// grows (memLimitFor), looked at every liveHeapLook until stop is called.
func followLiveHeap() (stop func()) {
	debug.SetMemoryLimit(softMemoryLimit)
	limit := int64(softMemoryLimit)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	return every(liveHeapLook, func() {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		if l := memLimitFor(sample[0].Value.Uint64()); l > limit {
			limit = l
			debug.SetMemoryLimit(limit)
		}
	})
}

// every calls look on a goroutine of its own every d until stop is called;
// stop returns once look has returned for the last time.
func every(d time.Duration, look func()) (stop func()) {
	var (
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				look()
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}
