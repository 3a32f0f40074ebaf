package capture

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/records"
)

// eventLoop feeds x a loop that records one event and waits for it, n
// times (a framework reusing its events: one JAX capture records each of
// its 8 events up to 106 times): the recording calls and the
// synchronising calls, then the recordings, then the synchronisations, in
// the SQLite reader's order. The late-th wait ends before the kernel its
// recording stands for (none where late is negative).
func eventLoop(x *crossCheck, n int, late int) {
	const step = 100_000
	for k := range n {
		t := int64(k * step)
		x.call(&records.Call{Name: "cudaEventRecord", Start: t, End: t + 10, Corr: int64(2*k + 1), PID: 1, TID: 1})
		x.call(&records.Call{Name: "cudaEventSynchronize", Start: t + 20, End: t + 50_000, Corr: int64(2*k + 2), PID: 1, TID: 1})
	}
	for k := range n {
		x.op(&records.Op{Kind: records.OpKernel, Start: int64(k*step) - 5000, End: int64(k*step) + 40_000, PID: 1, Device: 0, Stream: 7, Corr: 0})
	}
	for k := range n {
		x.event(&records.EventRecord{Corr: int64(2*k + 1), PID: 1, Device: 0, Stream: 7, Event: 3})
	}
	for k := range n {
		t := int64(k * step)
		end := t + 45_000
		if k == late {
			end = t + 300 // ends before the kernel it waited for
		}
		x.sync(&records.Sync{Kind: records.SyncEvent, Start: t + 25, End: end, Corr: int64(2*k + 2), PID: 1, Device: 0, Stream: records.NoID, Event: 3})
	}
}

// An event synchronisation is checked against the last recording of its
// event whose call began before the wait, among many recordings of one
// event: a wait that ends before that recording's work fails, naming it.
func TestEventSyncAgainstItsRecording(t *testing.T) {
	for _, late := range []int{-1, 0, 777, 1999} {
		x := newCrossCheck(context.Background(), FormatSQLite)
		eventLoop(x, 2000, late)
		_, err := x.finish()
		if late < 0 && err != nil {
			t.Errorf("every wait ends after its work: %v", err)
		}
		if late >= 0 && err == nil {
			t.Errorf("wait %d ends before the kernel its event's recording stands for: no error", late)
		}
	}
}

// BenchmarkEventSyncs: 20,000 waits on one event recorded 20,000 times.
func BenchmarkEventSyncs(b *testing.B) {
	for b.Loop() {
		x := newCrossCheck(context.Background(), FormatSQLite)
		eventLoop(x, 20000, -1)
		if _, err := x.finish(); err != nil {
			b.Fatal(err)
		}
	}
}

// waitChain feeds x a chain of n streams, each waiting
// (cudaStreamWaitEvent) for an event recorded on the next, then a
// cudaStreamSynchronize of the first stream, which so waits for the work
// the last stream began before its recording: a kernel that ends late
// ns after the synchronisation (none if late is not positive).
func waitChain(x *crossCheck, n int, late int64) {
	const base, gap = int64(1_000_000), int64(20_000)
	rec := func(i int) int64 { return base + int64(n-i)*gap } // stream i+1 records event i
	syncAt := base + int64(n+1)*gap
	for i := 1; i < n; i++ {
		x.call(&records.Call{Name: "cudaEventRecord", Start: rec(i), End: rec(i) + 10, Corr: int64(2 * i), PID: 1, TID: 1})
		x.call(&records.Call{Name: "cudaStreamWaitEvent", Start: rec(i) + gap/2 - 5, End: rec(i) + gap/2 + 5, Corr: int64(2*i + 1), PID: 1, TID: 1})
	}
	x.call(&records.Call{Name: "cudaStreamSynchronize", Start: syncAt, End: syncAt + 1000, Corr: int64(2*n + 1), PID: 1, TID: 1})
	end := syncAt + 500
	if late > 0 {
		end = syncAt + 1000 + late
	}
	x.op(&records.Op{Kind: records.OpKernel, Start: base - 10*gap, End: end, PID: 1, Device: 0, Stream: int64(n), Corr: 0})
	for i := 1; i < n; i++ {
		x.event(&records.EventRecord{Corr: int64(2 * i), PID: 1, Device: 0, Stream: int64(i + 1), Event: int64(i)})
	}
	for i := n - 1; i >= 1; i-- {
		at := rec(i) + gap/2
		x.sync(&records.Sync{Kind: records.SyncStreamWait, Start: at, End: at + 1, Corr: int64(2*i + 1), PID: 1, Device: 0, Stream: int64(i), Event: int64(i)})
	}
	x.sync(&records.Sync{Kind: records.SyncStream, Start: syncAt + 10, End: syncAt + 900, Corr: int64(2*n + 1), PID: 1, Device: 0, Stream: 1, Event: records.NoID})
}

// A stream synchronisation waits for the work of every stream its stream
// waited for, through a chain of waits as long as the streams there are:
// a kernel of the 20th stream that outlasts a synchronisation of the
// first, 19 waits away, fails (once only 16 streams were followed back);
// one that ends within it does not.
func TestWaitChainOfTwentyStreams(t *testing.T) {
	for _, n := range []int{2, 17, 20} {
		for _, late := range []int64{0, 5_000_000} {
			x := newCrossCheck(context.Background(), FormatSQLite)
			waitChain(x, n, late)
			_, err := x.finish()
			switch {
			case late == 0 && err != nil:
				t.Errorf("%d streams, the kernel ends within the wait: %v", n, err)
			case late > 0 && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("stream %d of process 1, device 0: the kernel started at 800000 ns ends at %d ns", n, 1_000_000+int64(n+1)*20_000+1000+late))):
				t.Errorf("%d streams, the kernel ends %d ns after the wait: %v", n, late, err)
			}
		}
	}
}
